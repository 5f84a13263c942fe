import { Injectable } from '@nestjs/common';
import { CompanyScopedRepository } from '../../database/company-scoped.repository';
import { Db } from '../../database/db.service';

/** Agent statuses a stop (budget hard stop, company archived) moves to `paused`; terminated and pending ones stay. */
const PAUSABLE_AGENT = `('active','idle','running','error')`;

/** The largest int4: spentMonthlyCents saturates there. */
const MAX_INT4 = 2147483647;

/**
 * The agents rows that other modules change through the ports they declare (budgets: pause, resume,
 * budget and spend; approvals: the hire decision) or through this module's export (companies: the
 * archive stop, the CEO check). Every statement names the company.
 */
@Injectable()
export class AgentScopesRepository extends CompanyScopedRepository {
  constructor(db: Db) {
    super(db);
  }

  /** Pauses one agent (when its status allows it) with `reason`; other pause reasons stay. */
  async pause(companyId: string, agentId: string, reason: string): Promise<void> {
    await this.rows(
      companyId,
      `UPDATE agents SET status = 'paused', pause_reason = $3, updated_at = now()
        WHERE company_id = $1 AND id = $2 AND status IN ${PAUSABLE_AGENT}`,
      [agentId, reason],
    );
  }

  /** Pauses every pausable agent of the company with `reason`. */
  async pauseAll(companyId: string, reason: string): Promise<void> {
    await this.rows(
      companyId,
      `UPDATE agents SET status = 'paused', pause_reason = $2, updated_at = now() WHERE company_id = $1 AND status IN ${PAUSABLE_AGENT}`,
      [reason],
    );
  }

  /** Resumes an agent paused with `reason`; true when it did. */
  async resume(companyId: string, agentId: string, reason: string): Promise<boolean> {
    const rows = await this.rows(
      companyId,
      `WITH u AS (UPDATE agents SET status = 'idle', pause_reason = NULL, updated_at = now()
          WHERE company_id = $1 AND id = $2 AND status = 'paused' AND pause_reason = $3 RETURNING id) SELECT * FROM u`,
      [agentId, reason],
    );
    return rows.length > 0;
  }

  /** Resumes the company's agents paused with `reason`, except `except`. */
  async resumeAll(companyId: string, reason: string, except: string[]): Promise<void> {
    await this.rows(
      companyId,
      `UPDATE agents SET status = 'idle', pause_reason = NULL, updated_at = now()
        WHERE company_id = $1 AND status = 'paused' AND pause_reason = $2 AND NOT (id = ANY($3::uuid[]))`,
      [reason, except],
    );
  }

  /** Sets budgetMonthlyCents of the agent. */
  async setMonthlyBudget(companyId: string, agentId: string, cents: number): Promise<void> {
    await this.rows(companyId, `UPDATE agents SET budget_monthly_cents = $3, updated_at = now() WHERE company_id = $1 AND id = $2`, [
      agentId,
      cents,
    ]);
  }

  /**
   * spentMonthlyCents of one agent (or of every agent of the company) becomes its running total of
   * the calendar month starting at `month` (reads budgets' cost_usage). Sent at once, without an
   * await before it: a cost event sends it in its pipeline, right after its accumulation.
   */
  syncMonthlySpend(companyId: string, month: Date, agentId?: string): Promise<void> {
    // one agent (a cost event, on its hot path) or all of them (a month start): two plans, no NULL test
    return this.rows(
      companyId,
      `UPDATE agents t SET spent_monthly_cents = x.cents, updated_at = now()
         FROM (SELECT a.id, LEAST(COALESCE(u.billed_cents, 0), ${MAX_INT4})::int AS cents
                 FROM agents a LEFT JOIN cost_usage u ON u.company_id = $1 AND u.scope_type = 'agent' AND u.scope_id = a.id
                      AND u.window_kind = 'calendar_month_utc' AND u.window_start = $2
                WHERE a.company_id = $1 ${agentId ? 'AND a.id = $3' : ''}) x
        WHERE t.company_id = $1 AND t.id = x.id AND t.spent_monthly_cents IS DISTINCT FROM x.cents`,
      agentId ? [month, agentId] : [month],
    ).then(() => undefined);
  }

  /** An approved hire: its pending_approval agent becomes idle (a paused hire stays paused). */
  async activateHired(companyId: string, agentId: string): Promise<void> {
    await this.rows(
      companyId,
      `UPDATE agents SET status = 'idle', updated_at = now() WHERE company_id = $1 AND id = $2 AND status = 'pending_approval'`,
      [agentId],
    );
  }

  /** A rejected hire: its agent is terminated; whether it was not terminated already. */
  async terminateHired(companyId: string, agentId: string): Promise<boolean> {
    const rows = await this.returning<{ id: string }>(
      companyId,
      `UPDATE agents SET status = 'terminated', terminated_at = now(), updated_at = now()
        WHERE company_id = $1 AND id = $2 AND status <> 'terminated' RETURNING id`,
      [agentId],
    );
    return rows.length > 0;
  }

  /** Every live key of the agent is revoked. */
  async revokeKeys(companyId: string, agentId: string): Promise<void> {
    await this.rows(
      companyId,
      `UPDATE agent_api_keys SET revoked_at = now() WHERE company_id = $1 AND agent_id = $2 AND revoked_at IS NULL`,
      [agentId],
    );
  }

  /** Whether the agent is the company's live (not terminated) CEO. */
  async isLiveCeo(companyId: string, agentId: string): Promise<boolean> {
    const rows = await this.rows(
      companyId,
      `SELECT 1 FROM agents WHERE company_id = $1 AND id = $2 AND role = 'ceo' AND status <> 'terminated'`,
      [agentId],
    );
    return rows.length > 0;
  }
}
