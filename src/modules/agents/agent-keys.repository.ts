import { Injectable } from '@nestjs/common';
import type { DeepPartial } from 'typeorm';
import { CompanyScopedRepository } from '../../database/company-scoped.repository';
import { Db } from '../../database/db.service';
import { AgentApiKeyEntity } from './agent-api-key.entity';

/** A live key as authentication reads it. */
export interface LiveAgentKeyRecord {
  keyId: string;
  agentId: string;
  companyId: string;
  status: string;
  stale: boolean;
}

/** The `agent_api_keys` table. Rows carry the token's SHA-256; callers map them with toKeyResponse. */
@Injectable()
export class AgentKeysRepository extends CompanyScopedRepository {
  constructor(db: Db) {
    super(db);
  }

  private get entities() {
    return this.orm(AgentApiKeyEntity);
  }

  listForAgent(companyId: string, agentId: string): Promise<AgentApiKeyEntity[]> {
    return this.ormIn(companyId, AgentApiKeyEntity).find({ where: { agentId }, order: { createdAt: 'ASC', id: 'ASC' } });
  }

  insert(values: DeepPartial<AgentApiKeyEntity>): Promise<AgentApiKeyEntity> {
    return this.entities.save(this.entities.create(values));
  }

  findForAgent(companyId: string, agentId: string, keyId: string): Promise<AgentApiKeyEntity | null> {
    return this.ormIn(companyId, AgentApiKeyEntity).findOne({ where: { id: keyId, agentId } });
  }

  getInCompany(companyId: string, keyId: string): Promise<AgentApiKeyEntity> {
    return this.ormIn(companyId, AgentApiKeyEntity).findOneByOrFail({ id: keyId });
  }

  /** Marks one key revoked (no-op when it already is). */
  async revoke(companyId: string, keyId: string): Promise<void> {
    await this.returning(
      companyId,
      `UPDATE agent_api_keys SET revoked_at = now() WHERE company_id = $1 AND id = $2 AND revoked_at IS NULL`,
      [keyId],
    );
  }

  /** Every live key of the agent is revoked at once. */
  async revokeAllForAgent(companyId: string, agentId: string): Promise<void> {
    await this.returning(
      companyId,
      `UPDATE agent_api_keys SET revoked_at = now() WHERE company_id = $1 AND agent_id = $2 AND revoked_at IS NULL`,
      [agentId],
    );
  }

  /**
   * An unrevoked key by its SHA-256, with its agent's status (the authentication hot path, outside
   * any request transaction).
   */
  findLiveByTokenHash(tokenHash: string): Promise<LiveAgentKeyRecord | null> {
    return this.unscopedRow<LiveAgentKeyRecord>(
      'a lookup by token hash: the key names its company (authentication, before any company is known)',
      `SELECT k.id AS "keyId", k.agent_id AS "agentId", k.company_id AS "companyId", a.status,
              (k.last_used_at IS NULL OR k.last_used_at < now() - interval '1 minute') AS stale
         FROM agent_api_keys k JOIN agents a ON a.id = k.agent_id AND a.company_id = k.company_id
        WHERE k.token_hash = $1 AND k.revoked_at IS NULL`,
      [tokenHash],
      { detached: true },
    );
  }

  /** Marks a key used now, outside any request transaction. */
  async touch(companyId: string, keyId: string): Promise<void> {
    await this.returning(companyId, 'UPDATE agent_api_keys SET last_used_at = now() WHERE company_id = $1 AND id = $2', [keyId], {
      detached: true,
    });
  }
}
