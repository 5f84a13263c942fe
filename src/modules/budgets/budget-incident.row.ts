import type { BudgetScope } from './budget-windows';
import type { BudgetIncidentResponseDto } from './dto/budget.dto';

export interface BudgetIncidentRow {
  id: string;
  company_id: string;
  policy_id: string;
  scope_type: BudgetScope;
  scope_id: string;
  metric: string;
  window_kind: string;
  window_start: Date;
  window_end: Date | null;
  kind: 'soft' | 'hard';
  status: 'open' | 'resolved';
  budget_amount: string;
  threshold_amount: string;
  observed_amount: string;
  hold_active: boolean;
  resolution: string | null;
  resolved_at: Date | null;
  resolved_by_actor_type: string | null;
  resolved_by_actor_id: string | null;
  created_at: Date;
}

export function toIncidentResponse(r: BudgetIncidentRow): BudgetIncidentResponseDto {
  return {
    id: r.id,
    companyId: r.company_id,
    policyId: r.policy_id,
    scopeType: r.scope_type,
    scopeId: r.scope_id,
    metric: r.metric,
    windowKind: r.window_kind,
    windowStart: r.window_start.toISOString(),
    windowEnd: r.window_end ? r.window_end.toISOString() : null,
    kind: r.kind,
    status: r.status,
    budgetAmount: Number(r.budget_amount),
    thresholdAmount: Number(r.threshold_amount),
    observedAmount: Number(r.observed_amount),
    holdActive: r.hold_active,
    resolution: r.resolution,
    resolvedAt: r.resolved_at ? r.resolved_at.toISOString() : null,
    resolvedBy: r.resolved_by_actor_id ? { actorType: r.resolved_by_actor_type, actorId: r.resolved_by_actor_id } : null,
    createdAt: r.created_at.toISOString(),
  };
}
