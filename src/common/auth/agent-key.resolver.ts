import { Injectable } from '@nestjs/common';
import { unauthorized } from '../errors/domain-error';
import type { AgentActor } from './actor';
import type { CredentialResolver } from './auth-registry';
import { AuthRepository } from './auth.repository';
import { sha256Hex, tokenKind } from './tokens';

/** Agent API keys: looked up by SHA-256; revoked keys and keys of terminated agents stop at once. */
@Injectable()
export class AgentKeyResolver implements CredentialResolver {
  readonly name = 'agent_api_key';

  constructor(private readonly repo: AuthRepository) {}

  async resolve(token: string | undefined): Promise<AgentActor | null> {
    if (!token || tokenKind(token) !== 'ak') return null;
    const row = await this.repo.findAgentKey(sha256Hex(token));
    if (!row || row.status === 'terminated' || row.status === 'pending_approval') {
      throw unauthorized('Invalid or revoked agent API key');
    }
    if (row.stale) {
      // best effort, outside any request transaction; at most once a minute per key
      void this.repo.touchAgentKey(row.key_id).catch(() => undefined);
    }
    return { kind: 'agent', agentId: row.agent_id, companyId: row.company_id, source: 'api_key', keyId: row.key_id };
  }
}
