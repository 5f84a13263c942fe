import { Injectable } from '@nestjs/common';
import { Not } from 'typeorm';
import { CompanyScopedRepository, OrmWrites } from '../../database/company-scoped.repository';
import { Db } from '../../database/db.service';
import { AgentEntity, AgentStatus } from './agent.entity';

/** The columns of an insert after company, name and URL key, in the order of the INSERT below. */
export type AgentInsertValues = [
  role: string,
  title: string | null,
  capabilities: string,
  reportsTo: string | null,
  adapterType: string,
  adapterConfigJson: string,
  runtimeConfigJson: string,
  budgetMonthlyCents: number,
  status: AgentStatus,
  permissionsJson: string,
  metadataJson: string,
  sourceIssueIdsJson: string,
];

/** The `agents` table (built-in marker queries live in MarkedAgentsRepository). */
@Injectable()
export class AgentsRepository extends CompanyScopedRepository {
  constructor(db: Db) {
    super(db);
  }

  /** The TypeORM writes of agents (this repository's own use). */
  private get entities(): OrmWrites<AgentEntity> {
    return this.orm(AgentEntity);
  }

  /** The company's agent by id (it must exist). */
  getInCompany(companyId: string, agentId: string): Promise<AgentEntity> {
    return this.ormIn(companyId, AgentEntity).findOneByOrFail({ id: agentId });
  }

  /** By id within the company (any status), or null; `lock` takes FOR NO KEY UPDATE. */
  findInCompany(companyId: string, agentId: string, lock = false): Promise<AgentEntity | null> {
    return this.ormIn(companyId, AgentEntity).findOne({ where: { id: agentId }, lock: lock ? { mode: 'for_no_key_update' } : undefined });
  }

  /** The status of the company's agent, or null (unknown, or another company's): one indexed read, no entity. */
  async statusInCompany(companyId: string, agentId: string): Promise<string | null> {
    const row = await this.row<{ status: string }>(companyId, `SELECT status FROM agents WHERE company_id = $1 AND id = $2`, [agentId]);
    return row?.status ?? null;
  }

  /** The status of an agent of any company (the caller decided access), or null: one indexed read, no entity. */
  async statusById(agentId: string): Promise<string | null> {
    const row = await this.unscopedRow<{ status: string }>(
      'a wake checks an agent it already holds by id, whatever its company',
      `SELECT status FROM agents WHERE id = $1`,
      [agentId],
    );
    return row?.status ?? null;
  }

  /** The agent holding a URL key in the company: a live one before terminated ones, then the newest. */
  async findByUrlKey(companyId: string, urlKey: string): Promise<AgentEntity | null> {
    const holders = await this.ormIn(companyId, AgentEntity).find({ where: { urlKey }, order: { createdAt: 'DESC' } });
    return holders.find((a) => a.status !== 'terminated') ?? holders[0] ?? null;
  }

  /** Every agent of the company, terminated ones included. */
  listByCompany(companyId: string): Promise<AgentEntity[]> {
    return this.ormIn(companyId, AgentEntity).find();
  }

  /** The company's non-terminated agents, oldest first. */
  listLive(companyId: string): Promise<AgentEntity[]> {
    return this.ormIn(companyId, AgentEntity).find({ where: { status: Not('terminated') }, order: { createdAt: 'ASC', id: 'ASC' } });
  }

  /** Writes a loaded agent back (a live URL key clash surfaces as the driver's unique violation). */
  async save(agent: AgentEntity): Promise<void> {
    await this.entities.save(agent);
  }

  /** URL keys of live agents equal to `base` or suffixed from it (`base-2`, …). */
  async liveUrlKeysLike(companyId: string, base: string): Promise<string[]> {
    const rows = await this.rows<{ url_key: string }>(
      companyId,
      `SELECT url_key FROM agents WHERE company_id = $1 AND status <> 'terminated' AND (url_key = $2 OR url_key LIKE $2 || '-%')`,
      [base],
    );
    return rows.map((r) => r.url_key);
  }

  /** Inserts the agent unless a live agent holds the URL key (then null). */
  async insertIfUrlKeyFree(companyId: string, name: string, urlKey: string, values: AgentInsertValues): Promise<string | null> {
    const rows = await this.rows<{ id: string }>(
      companyId,
      `INSERT INTO agents (company_id, name, url_key, role, title, capabilities, reports_to, adapter_type, adapter_config,
                             runtime_config, budget_monthly_cents, status, permissions, metadata, source_issue_ids)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)
         ON CONFLICT (company_id, url_key) WHERE status <> 'terminated' DO NOTHING RETURNING id`,
      [name, urlKey, ...values],
    );
    return rows.length ? rows[0].id : null;
  }

  /** Whether another live agent of the company holds the URL key. */
  async urlKeyTakenByOther(companyId: string, urlKey: string, agentId: string): Promise<boolean> {
    const clash = await this.rows(
      companyId,
      `SELECT 1 FROM agents WHERE company_id = $1 AND url_key = $2 AND status <> 'terminated' AND id <> $3`,
      [urlKey, agentId],
    );
    return clash.length > 0;
  }

  /** The company and status of a prospective manager (any company; the caller compares). */
  findManagerCandidate(agentId: string): Promise<{ companyId: string; status: string } | null> {
    return this.unscopedRow<{ companyId: string; status: string }>(
      "a prospective manager named by id: its company is read so the caller can refuse another company's agent",
      `SELECT company_id AS "companyId", status FROM agents WHERE id = $1`,
      [agentId],
    );
  }

  /** Who reports to whom in the company (every agent, terminated ones included). */
  async reportingLines(companyId: string): Promise<Map<string, string | null>> {
    const rows = await this.rows<{ id: string; reports_to: string | null }>(
      companyId,
      `SELECT id, reports_to FROM agents WHERE company_id = $1`,
    );
    return new Map(rows.map((r) => [r.id, r.reports_to]));
  }

  /** Serialises org-chart changes of one company (transaction-scoped advisory lock). */
  async lockOrgChart(companyId: string): Promise<void> {
    await this.rows(companyId, `SELECT pg_advisory_xact_lock(hashtext('agents-org-chart:' || $1))`);
  }

  async updatePermissions(companyId: string, agentId: string, permissions: Record<string, unknown>): Promise<void> {
    await this.returning(companyId, `UPDATE agents SET permissions = $3, updated_at = now() WHERE company_id = $1 AND id = $2`, [
      agentId,
      JSON.stringify(permissions),
    ]);
  }

  /** The adapter configuration as given (`updated_at` moves with it). */
  async updateAdapterConfig(companyId: string, agentId: string, adapterConfig: Record<string, unknown>): Promise<void> {
    await this.returning(companyId, `UPDATE agents SET adapter_config = $3::jsonb, updated_at = now() WHERE company_id = $1 AND id = $2`, [
      agentId,
      JSON.stringify(adapterConfig),
    ]);
  }

  async updateBudget(companyId: string, agentId: string, budgetMonthlyCents: number): Promise<void> {
    await this.returning(companyId, `UPDATE agents SET budget_monthly_cents = $3, updated_at = now() WHERE company_id = $1 AND id = $2`, [
      agentId,
      budgetMonthlyCents,
    ]);
  }

  async setStatus(companyId: string, agentId: string, status: AgentStatus, pauseReason: string | null): Promise<void> {
    await this.returning(
      companyId,
      `UPDATE agents SET status = $3, pause_reason = $4, updated_at = now() WHERE company_id = $1 AND id = $2`,
      [agentId, status, pauseReason],
    );
  }

  async markTerminated(companyId: string, agentId: string): Promise<void> {
    await this.returning(
      companyId,
      `UPDATE agents SET status = 'terminated', pause_reason = NULL, terminated_at = now(), updated_at = now() WHERE company_id = $1 AND id = $2`,
      [agentId],
    );
  }

  /** Hard delete: runs, wakeups and keys go with the row (foreign keys cascade). */
  async delete(companyId: string, agentId: string): Promise<void> {
    await this.returning(companyId, `DELETE FROM agents WHERE company_id = $1 AND id = $2`, [agentId]);
  }

  /** Whether new agents of the company wait for board approval; FOR SHARE holds the setting until the hire commits. */
  async companyRequiresHireApproval(companyId: string): Promise<boolean> {
    // reads companies (owned by companies): a FOR SHARE lock, see FOREIGN_READS
    const company = await this.row<{ require: boolean }>(
      companyId,
      `SELECT require_board_approval_for_new_agents AS require FROM companies WHERE id = $1 FOR SHARE`,
    );
    return company!.require;
  }
}
