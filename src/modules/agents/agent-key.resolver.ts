import { Injectable } from '@nestjs/common';
import { unauthorized } from '../../common/errors/domain-error';
import type { AgentActor } from '../../common/auth/actor';
import type { CredentialResolver } from '../../common/auth/auth-registry.port';
import { sha256Hex, tokenKind } from '../../common/auth/tokens';
import { AgentKeysRepository } from './agent-keys.repository';

/**
 * Agent API keys (`ak` tokens), registered with the guard's AuthRegistry by the agents module:
 * looked up by SHA-256; revoked keys and keys of terminated or pending agents stop at once.
 */
@Injectable()
export class AgentKeyResolver implements CredentialResolver {
  readonly name = 'agent_api_key';

  constructor(private readonly keys: AgentKeysRepository) {}

  async resolve(token: string | undefined): Promise<AgentActor | null> {
    if (!token || tokenKind(token) !== 'ak') return null;
    const row = await this.keys.findLiveByTokenHash(sha256Hex(token));
    if (!row || row.status === 'terminated' || row.status === 'pending_approval') {
      throw unauthorized('Invalid or revoked agent API key');
    }
    if (row.stale) {
      // best effort, outside any request transaction; at most once a minute per key
      void this.keys.touch(row.companyId, row.keyId).catch(() => undefined);
    }
    return { kind: 'agent', agentId: row.agentId, companyId: row.companyId, source: 'api_key', keyId: row.keyId };
  }
}
