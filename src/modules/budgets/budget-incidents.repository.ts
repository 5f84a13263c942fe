import { Injectable } from '@nestjs/common';
import { CompanyScopedRepository } from '../../database/company-scoped.repository';
import { Db } from '../../database/db.service';
import { iso, isoRequired, recordColumns } from '../../database/row-mapping';
import type { BudgetScope } from './budget-windows';
import type { ScopeRef } from './budgets.repository';
import type { BudgetIncidentResponseDto } from './dto/budget.dto';

export interface BudgetIncidentRecord {
  id: string;
  companyId: string;
  policyId: string;
  scopeType: BudgetScope;
  scopeId: string;
  metric: string;
  windowKind: string;
  windowStart: Date;
  windowEnd: Date | null;
  kind: 'soft' | 'hard';
  status: 'open' | 'resolved';
  budgetAmount: string;
  thresholdAmount: string;
  observedAmount: string;
  holdActive: boolean;
  resolution: string | null;
  resolvedAt: Date | null;
  resolvedByActorType: string | null;
  resolvedByActorId: string | null;
  createdAt: Date;
}

export function toIncidentResponse(r: BudgetIncidentRecord): BudgetIncidentResponseDto {
  return {
    id: r.id,
    companyId: r.companyId,
    policyId: r.policyId,
    scopeType: r.scopeType,
    scopeId: r.scopeId,
    metric: r.metric,
    windowKind: r.windowKind,
    windowStart: isoRequired(r.windowStart),
    windowEnd: iso(r.windowEnd),
    kind: r.kind,
    status: r.status,
    budgetAmount: Number(r.budgetAmount),
    thresholdAmount: Number(r.thresholdAmount),
    observedAmount: Number(r.observedAmount),
    holdActive: r.holdActive,
    resolution: r.resolution,
    resolvedAt: iso(r.resolvedAt),
    resolvedBy: r.resolvedByActorId ? { actorType: r.resolvedByActorType, actorId: r.resolvedByActorId } : null,
    createdAt: isoRequired(r.createdAt),
  };
}

const INCIDENT_COLUMNS =
  recordColumns(`id, company_id, policy_id, scope_type, scope_id, metric, window_kind, window_start, window_end, kind,
  status, budget_amount, threshold_amount, observed_amount, hold_active, resolution, resolved_at, resolved_by_actor_type,
  resolved_by_actor_id, created_at`);

/** The values of a new incident (the policy's window and amounts when it opened). */
export interface IncidentInsert {
  policyId: string;
  scopeType: BudgetScope;
  scopeId: string;
  metric: string;
  windowKind: string;
  windowStart: Date;
  windowEnd: Date | null;
  kind: 'soft' | 'hard';
  budgetAmount: number;
  thresholdAmount: number;
  observedAmount: number;
}

/** An incident of a past monthly window that the month start lifted. */
export interface LiftedIncident {
  companyId: string;
  scopeType: BudgetScope;
  scopeId: string;
  wasHolding: boolean;
  id: string;
}

/** budget_incidents: the warnings and hard stops of policies, and the holds hard stops keep on their scopes. */
@Injectable()
export class BudgetIncidentsRepository extends CompanyScopedRepository {
  constructor(db: Db) {
    super(db);
  }

  /** Opens an incident unless the policy already has one of this kind for the window and amount (null then). */
  async insertIncident(companyId: string, i: IncidentInsert): Promise<BudgetIncidentRecord | null> {
    return this.row<BudgetIncidentRecord>(
      companyId,
      `INSERT INTO budget_incidents (company_id, policy_id, scope_type, scope_id, metric, window_kind, window_start, window_end,
                                     kind, budget_amount, threshold_amount, observed_amount, hold_active)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
       ON CONFLICT DO NOTHING RETURNING ${INCIDENT_COLUMNS}`,
      [
        i.policyId,
        i.scopeType,
        i.scopeId,
        i.metric,
        i.windowKind,
        i.windowStart,
        i.windowEnd,
        i.kind,
        i.budgetAmount,
        i.thresholdAmount,
        i.observedAmount,
        i.kind === 'hard',
      ],
    );
  }

  /** Incidents newest first; `active` = open or still holding. */
  listIncidents(companyId: string, status?: 'open' | 'resolved' | 'active'): Promise<BudgetIncidentRecord[]> {
    const filter = status === 'active' ? `AND (status = 'open' OR hold_active)` : status ? `AND status = $2` : '';
    return this.rows<BudgetIncidentRecord>(
      companyId,
      `SELECT ${INCIDENT_COLUMNS} FROM budget_incidents WHERE company_id = $1 ${filter} ORDER BY created_at DESC LIMIT 500`,
      status && status !== 'active' ? [status] : [],
    );
  }

  /** Open or still holding incidents, newest first. */
  activeIncidents(companyId: string): Promise<BudgetIncidentRecord[]> {
    return this.rows<BudgetIncidentRecord>(
      companyId,
      `SELECT ${INCIDENT_COLUMNS} FROM budget_incidents WHERE company_id = $1 AND (status = 'open' OR hold_active) ORDER BY created_at DESC`,
    );
  }

  async lockIncident(companyId: string, incidentId: string): Promise<BudgetIncidentRecord | null> {
    return this.row<BudgetIncidentRecord>(
      companyId,
      `SELECT ${INCIDENT_COLUMNS} FROM budget_incidents WHERE company_id = $1 AND id = $2 FOR UPDATE`,
      [incidentId],
    );
  }

  async incidentById(companyId: string, incidentId: string): Promise<BudgetIncidentRecord> {
    return (await this.row<BudgetIncidentRecord>(
      companyId,
      `SELECT ${INCIDENT_COLUMNS} FROM budget_incidents WHERE company_id = $1 AND id = $2`,
      [incidentId],
    ))!;
  }

  /** The board resolved one incident (its hold stays until the window ends). */
  async resolveIncident(companyId: string, incidentId: string, resolution: string, actorType: string, actorId: string): Promise<void> {
    await this.markResolved(companyId, `id = $2`, [incidentId], resolution, actorType, actorId, false);
  }

  /** Every open incident and hold of a policy answers to its new amount: resolved, holds released. */
  async resolvePolicyIncidents(companyId: string, policyId: string, resolution: string, actorType: string, actorId: string): Promise<void> {
    await this.markResolved(
      companyId,
      `policy_id = $2 AND (status = 'open' OR hold_active)`,
      [policyId],
      resolution,
      actorType,
      actorId,
      true,
    );
  }

  /** `filter` uses $2…: $1 is the company. */
  private async markResolved(
    companyId: string,
    filter: string,
    params: unknown[],
    resolution: string,
    actorType: string,
    actorId: string,
    releaseHold: boolean,
  ): Promise<void> {
    const n = params.length + 1;
    await this.rows(
      companyId,
      `UPDATE budget_incidents SET status = 'resolved', resolution = COALESCE(CASE WHEN status = 'open' THEN $${n + 1} END, resolution),
              resolved_at = COALESCE(resolved_at, now()), resolved_by_actor_type = COALESCE(resolved_by_actor_type, $${n + 2}),
              resolved_by_actor_id = COALESCE(resolved_by_actor_id, $${n + 3})
              ${releaseHold ? ', hold_active = false' : ''}
        WHERE company_id = $1 AND ${filter}`,
      [...params, resolution, actorType, actorId],
    );
  }

  /** Whether a hard incident holds the scope. */
  async holds(companyId: string, scopeType: BudgetScope, scopeId: string): Promise<boolean> {
    const rows = await this.rows(
      companyId,
      `SELECT 1 FROM budget_incidents WHERE company_id = $1 AND hold_active AND scope_type = $2 AND scope_id = $3 LIMIT 1`,
      [scopeType, scopeId],
    );
    return rows.length > 0;
  }

  /** The holds of hard incidents on any of the scopes. */
  holdsOn(companyId: string, scopes: ScopeRef[]): Promise<Array<{ scopeType: string; scopeId: string; policyId: string }>> {
    return this.rows<{ scopeType: string; scopeId: string; policyId: string }>(
      companyId,
      `SELECT scope_type AS "scopeType", scope_id AS "scopeId", policy_id AS "policyId" FROM budget_incidents
        WHERE company_id = $1 AND hold_active AND (scope_type, scope_id) IN (SELECT * FROM unnest($2::text[], $3::uuid[]))`,
      [scopes.map((s) => s.scopeType), scopes.map((s) => s.scopeId)],
    );
  }

  /** The agents of the company a hard incident of their own holds. */
  async heldAgentIds(companyId: string): Promise<string[]> {
    const rows = await this.rows<{ scopeId: string }>(
      companyId,
      `SELECT DISTINCT scope_id AS "scopeId" FROM budget_incidents WHERE company_id = $1 AND hold_active AND scope_type = 'agent'`,
    );
    return rows.map((r) => r.scopeId);
  }

  /** Resolves a company's incidents of monthly windows before `month` and releases their holds. */
  liftExpiredIncidents(companyId: string, month: Date): Promise<LiftedIncident[]> {
    return this.rows<LiftedIncident>(
      companyId,
      `WITH expired AS (
         SELECT id, hold_active FROM budget_incidents
          WHERE company_id = $1 AND window_kind = 'calendar_month_utc' AND window_start < $2 AND (status = 'open' OR hold_active)
          FOR UPDATE),
       lifted AS (
       UPDATE budget_incidents i SET hold_active = false, status = 'resolved',
              resolution = COALESCE(i.resolution, 'window_reset'), resolved_at = COALESCE(i.resolved_at, now()),
              resolved_by_actor_type = COALESCE(i.resolved_by_actor_type, 'system'), resolved_by_actor_id = COALESCE(i.resolved_by_actor_id, 'budget-window')
         FROM expired e WHERE i.id = e.id
       RETURNING i.id, i.company_id AS "companyId", i.scope_type AS "scopeType", i.scope_id AS "scopeId", e.hold_active AS "wasHolding")
       SELECT * FROM lifted`,
      [month],
    );
  }
}
