import { Injectable } from '@nestjs/common';
import type { DeepPartial } from 'typeorm';
import { CompanyScopedRepository } from '../../database/company-scoped.repository';
import { Db } from '../../database/db.service';
import { AgentApiKeyEntity } from './agent-api-key.entity';

/** The `agent_api_keys` table. Rows carry the token's SHA-256; callers map them with toKeyResponse. */
@Injectable()
export class AgentKeysRepository extends CompanyScopedRepository {
  constructor(db: Db) {
    super(db);
  }

  private get entities() {
    return this.db.repo(AgentApiKeyEntity);
  }

  listForAgent(agentId: string): Promise<AgentApiKeyEntity[]> {
    return this.entities.find({ where: { agentId }, order: { createdAt: 'ASC', id: 'ASC' } });
  }

  insert(values: DeepPartial<AgentApiKeyEntity>): Promise<AgentApiKeyEntity> {
    return this.entities.save(this.entities.create(values));
  }

  findForAgent(agentId: string, keyId: string): Promise<AgentApiKeyEntity | null> {
    return this.entities.findOne({ where: { id: keyId, agentId } });
  }

  findByIdOrFail(keyId: string): Promise<AgentApiKeyEntity> {
    return this.entities.findOneByOrFail({ id: keyId });
  }

  /** Marks one key revoked (no-op when it already is). */
  async revoke(keyId: string): Promise<void> {
    await this.db.query(`UPDATE agent_api_keys SET revoked_at = now() WHERE id = $1 AND revoked_at IS NULL`, [keyId]);
  }

  /** Every live key of the agent is revoked at once. */
  async revokeAllForAgent(agentId: string): Promise<void> {
    await this.db.query(`UPDATE agent_api_keys SET revoked_at = now() WHERE agent_id = $1 AND revoked_at IS NULL`, [agentId]);
  }
}
