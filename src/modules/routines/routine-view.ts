import { iso, isoRequired } from '../../database/row-mapping';
import type { IssueBriefDto, RoutineResponseDto, RoutineRunResponseDto, TriggerResponseDto } from './dto/routine.dto';
import type { RoutineRow, RunRow, TriggerRow } from './routines.repository';

export function toTriggerResponse(t: TriggerRow): TriggerResponseDto {
  return {
    id: t.id,
    companyId: t.company_id,
    routineId: t.routine_id,
    kind: t.kind,
    label: t.label,
    enabled: t.enabled,
    cronExpression: t.cron_expression,
    timezone: t.timezone,
    nextRunAt: iso(t.next_run_at),
    lastFiredAt: iso(t.last_fired_at),
    lastResult: t.last_result,
    createdByAgentId: t.created_by_agent_id,
    createdByUserId: t.created_by_user_id,
    createdAt: isoRequired(t.created_at),
    updatedAt: isoRequired(t.updated_at),
  };
}

function issueBrief(r: RunRow): IssueBriefDto | null {
  if (!r.linked_issue_id || !r.issue_identifier) return null;
  return {
    id: r.linked_issue_id,
    identifier: r.issue_identifier,
    title: r.issue_title ?? '',
    status: r.issue_status ?? '',
    priority: r.issue_priority ?? '',
    updatedAt: iso(r.issue_updated_at ?? null) ?? isoRequired(r.updated_at),
  };
}

export function toRunResponse(r: RunRow, triggers: Map<string, TriggerRow> = new Map()): RoutineRunResponseDto {
  const trigger = r.trigger_id ? triggers.get(r.trigger_id) : undefined;
  return {
    id: r.id,
    companyId: r.company_id,
    routineId: r.routine_id,
    triggerId: r.trigger_id,
    source: r.source,
    status: r.status,
    triggeredAt: isoRequired(r.triggered_at),
    scheduledFor: iso(r.scheduled_for),
    missedCount: r.missed_count,
    triggerPayload: r.trigger_payload,
    linkedIssueId: r.linked_issue_id,
    coalescedIntoRunId: r.coalesced_into_run_id,
    failureReason: r.failure_reason,
    createdAt: isoRequired(r.created_at),
    updatedAt: isoRequired(r.updated_at),
    linkedIssue: issueBrief(r),
    trigger: trigger ? toTriggerResponse(trigger) : null,
  };
}

export function toRoutineResponse(
  r: RoutineRow,
  triggers: TriggerRow[],
  lastRun: RunRow | undefined,
  open: RunRow | undefined,
): RoutineResponseDto {
  const byId = new Map(triggers.map((t) => [t.id, t]));
  return {
    id: r.id,
    companyId: r.company_id,
    projectId: r.project_id,
    goalId: r.goal_id,
    parentIssueId: r.parent_issue_id,
    folderId: r.folder_id,
    title: r.title,
    description: r.description,
    assigneeAgentId: r.assignee_agent_id,
    priority: r.priority,
    status: r.status,
    concurrencyPolicy: r.concurrency_policy,
    catchUpPolicy: r.catch_up_policy,
    routineKey: r.routine_key,
    managedBy: r.managed_by,
    createdByAgentId: r.created_by_agent_id,
    createdByUserId: r.created_by_user_id,
    updatedByAgentId: r.updated_by_agent_id,
    updatedByUserId: r.updated_by_user_id,
    lastTriggeredAt: iso(r.last_triggered_at),
    lastEnqueuedAt: iso(r.last_enqueued_at),
    createdAt: isoRequired(r.created_at),
    updatedAt: isoRequired(r.updated_at),
    triggers: triggers.map(toTriggerResponse),
    lastRun: lastRun ? toRunResponse(lastRun, byId) : null,
    activeIssue: open ? issueBrief(open) : null,
  };
}
