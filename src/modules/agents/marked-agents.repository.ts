import { Injectable } from '@nestjs/common';
import { CompanyScopedRepository } from '../../database/company-scoped.repository';
import { Db } from '../../database/db.service';
import { BUILT_IN_MARKER_KEY } from './agent-fields';
import { AgentEntity } from './agent.entity';

/**
 * Agents carrying the built-in marker `metadata.serviceBuiltInAgent` (the built-in agents
 * feature's view of the agents table; only this path writes the marker after creation).
 */
@Injectable()
export class MarkedAgentsRepository extends CompanyScopedRepository {
  constructor(db: Db) {
    super(db);
  }

  /** The live (not terminated) agent provisioned for a registry key, newest first; `lock` for changes. */
  async find(companyId: string, key: string, lock = false): Promise<AgentEntity | null> {
    const [row] = await this.rows<{ id: string }>(
      companyId,
      `SELECT id FROM agents WHERE company_id = $1 AND status <> 'terminated' AND metadata -> '${BUILT_IN_MARKER_KEY}' ->> 'key' = $2
        ORDER BY created_at DESC LIMIT 1${lock ? ' FOR NO KEY UPDATE' : ''}`,
      [key],
    );
    return row ? this.ormIn(companyId, AgentEntity).findOneByOrFail({ id: row.id }) : null;
  }

  /** Serialises provisioning of one registry key in one company (transaction-scoped). */
  async lockKey(companyId: string, key: string): Promise<void> {
    await this.rows(companyId, `SELECT pg_advisory_xact_lock(hashtext('built-in-agent:' || $1 || ':' || $2))`, [key]);
  }

  /** Every live marked agent of the company. */
  async list(companyId: string): Promise<AgentEntity[]> {
    const rows = await this.rows<{ id: string }>(
      companyId,
      `SELECT id FROM agents WHERE company_id = $1 AND status <> 'terminated' AND metadata ? '${BUILT_IN_MARKER_KEY}'`,
    );
    if (!rows.length) return [];
    return this.ormIn(companyId, AgentEntity).findBy(rows.map((r) => ({ id: r.id })));
  }

  /** Registry defaults written back (reconcile, reset): only the given columns change. */
  async update(
    companyId: string,
    agentId: string,
    fields: {
      role?: string;
      title?: string | null;
      capabilities?: string;
      adapterType?: string;
      adapterConfig?: Record<string, unknown>;
      marker?: Record<string, unknown>;
    },
  ): Promise<void> {
    const sets: string[] = [];
    const params: unknown[] = [agentId];
    const add = (sql: string, v: unknown) => {
      params.push(v);
      sets.push(sql.replace('?', `$${params.length + 1}`));
    };
    if (fields.role !== undefined) add('role = ?', fields.role);
    if (fields.title !== undefined) add('title = ?', fields.title);
    if (fields.capabilities !== undefined) add('capabilities = ?', fields.capabilities);
    if (fields.adapterType !== undefined) add('adapter_type = ?', fields.adapterType);
    if (fields.adapterConfig !== undefined) add('adapter_config = ?::jsonb', JSON.stringify(fields.adapterConfig));
    if (fields.marker !== undefined)
      add(`metadata = metadata || jsonb_build_object('${BUILT_IN_MARKER_KEY}', ?::jsonb)`, JSON.stringify(fields.marker));
    if (!sets.length) return;
    await this.returning(companyId, `UPDATE agents SET ${sets.join(', ')}, updated_at = now() WHERE company_id = $1 AND id = $2`, params);
  }

  /** A paused built-in agent resumes (enabling its routine); returns whether it was paused. */
  async resumeIfPaused(companyId: string, agentId: string): Promise<boolean> {
    const rows = await this.returning<{ id: string }>(
      companyId,
      `UPDATE agents SET status = 'idle', pause_reason = NULL, updated_at = now()
        WHERE company_id = $1 AND id = $2 AND status = 'paused' RETURNING id`,
      [agentId],
    );
    return rows.length > 0;
  }
}
