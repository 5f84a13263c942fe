import { Injectable } from '@nestjs/common';
import type { AgentActor } from '../../common/auth/actor';
import type { CredentialResolver } from '../../common/auth/auth-registry.port';
import { ENDED_RUN_GRACE_SEC } from '../../common/auth/authorize.decorator';
import { unauthorized } from '../../common/errors/domain-error';
import { RunClaimsRepository } from './run-claims.repository';
import { RunTokenService } from './run-token.service';

/**
 * Accepts a run token as agent credentials while its run is queued or running (and its agent may
 * act). A run that ended within ENDED_RUN_GRACE_SEC gives an actor marked `runEnded`, which the
 * guard refuses except on routes that opt in (cost events).
 */
@Injectable()
export class RunTokenResolver implements CredentialResolver {
  readonly name = 'run_token';

  constructor(
    private readonly runs: RunClaimsRepository,
    private readonly tokens: RunTokenService,
  ) {}

  async resolve(token: string | undefined): Promise<AgentActor | null> {
    if (!token || !RunTokenService.looksLikeJwt(token)) return null;
    const claims = this.tokens.verify(token);
    if (!claims) throw unauthorized('Invalid or expired run token');
    const rows = await this.runs.tokenRun(claims, ENDED_RUN_GRACE_SEC);
    if (rows.length === 0) throw unauthorized('Run token of a run that is no longer live');
    const actor: AgentActor = {
      kind: 'agent',
      agentId: claims.agentId,
      companyId: claims.companyId,
      source: 'run_token',
      runId: claims.runId,
    };
    if (!rows[0].live) actor.runEnded = true;
    return actor;
  }
}
