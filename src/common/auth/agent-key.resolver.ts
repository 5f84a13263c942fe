import { Injectable } from '@nestjs/common';
import { Db } from '../../database/db.service';
import { unauthorized } from '../errors/domain-error';
import type { AgentActor } from './actor';
import type { CredentialResolver } from './auth-registry';
import { sha256Hex, tokenKind } from './tokens';

interface KeyRow {
  key_id: string;
  agent_id: string;
  company_id: string;
  status: string;
  stale: boolean;
}

/** Agent API keys: looked up by SHA-256; revoked keys and keys of terminated agents stop at once. */
@Injectable()
export class AgentKeyResolver implements CredentialResolver {
  readonly name = 'agent_api_key';

  constructor(private readonly db: Db) {}

  async resolve(token: string | undefined): Promise<AgentActor | null> {
    if (!token || tokenKind(token) !== 'ak') return null;
    const [row] = (await this.db.dataSource.query(
      `SELECT k.id AS key_id, k.agent_id, k.company_id, a.status,
              (k.last_used_at IS NULL OR k.last_used_at < now() - interval '1 minute') AS stale
         FROM agent_api_keys k JOIN agents a ON a.id = k.agent_id
        WHERE k.token_hash = $1 AND k.revoked_at IS NULL`,
      [sha256Hex(token)],
    )) as KeyRow[];
    if (!row || row.status === 'terminated' || row.status === 'pending_approval') {
      throw unauthorized('Invalid or revoked agent API key');
    }
    if (row.stale) {
      // best effort, outside any request transaction; at most once a minute per key
      void this.db.dataSource.query('UPDATE agent_api_keys SET last_used_at = now() WHERE id = $1', [row.key_id]).catch(() => undefined);
    }
    return { kind: 'agent', agentId: row.agent_id, companyId: row.company_id, source: 'api_key', keyId: row.key_id };
  }
}
