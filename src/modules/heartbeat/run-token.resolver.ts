import { Injectable } from '@nestjs/common';
import type { AgentActor } from '../../common/auth/actor';
import type { CredentialResolver } from '../../common/auth/auth-registry';
import { unauthorized } from '../../common/errors/domain-error';
import { Db } from '../../database/db.service';
import { RunTokenService } from './run-token.service';

/** Accepts a run token as agent credentials while its run is queued or running (and its agent may act). */
@Injectable()
export class RunTokenResolver implements CredentialResolver {
  readonly name = 'run_token';

  constructor(
    private readonly db: Db,
    private readonly tokens: RunTokenService,
  ) {}

  async resolve(token: string | undefined): Promise<AgentActor | null> {
    if (!token || !RunTokenService.looksLikeJwt(token)) return null;
    const claims = this.tokens.verify(token);
    if (!claims) throw unauthorized('Invalid or expired run token');
    const rows = await this.db.dataSource.query(
      `SELECT 1 FROM heartbeat_runs r JOIN agents a ON a.id = r.agent_id
        WHERE r.id = $1 AND r.agent_id = $2 AND r.company_id = $3 AND r.status IN ('queued','running')
          AND a.status NOT IN ('terminated','pending_approval')`,
      [claims.runId, claims.agentId, claims.companyId],
    );
    if (rows.length === 0) throw unauthorized('Run token of a run that is no longer live');
    return { kind: 'agent', agentId: claims.agentId, companyId: claims.companyId, source: 'run_token', runId: claims.runId };
  }
}
