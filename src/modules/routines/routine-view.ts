import { iso, isoRequired } from '../../database/row-mapping';
import type { IssueBriefDto, RoutineResponseDto, RoutineRunResponseDto, TriggerResponseDto } from './dto/routine.dto';
import type { RoutineRecord, RoutineRunRecord, RoutineTriggerRecord } from './routines.repository';

export function toTriggerResponse(t: RoutineTriggerRecord): TriggerResponseDto {
  return {
    id: t.id,
    companyId: t.companyId,
    routineId: t.routineId,
    kind: t.kind,
    label: t.label,
    enabled: t.enabled,
    cronExpression: t.cronExpression,
    timezone: t.timezone,
    nextRunAt: iso(t.nextRunAt),
    lastFiredAt: iso(t.lastFiredAt),
    lastResult: t.lastResult,
    createdByAgentId: t.createdByAgentId,
    createdByUserId: t.createdByUserId,
    createdAt: isoRequired(t.createdAt),
    updatedAt: isoRequired(t.updatedAt),
  };
}

function issueBrief(r: RoutineRunRecord): IssueBriefDto | null {
  if (!r.linkedIssueId || !r.issueIdentifier) return null;
  return {
    id: r.linkedIssueId,
    identifier: r.issueIdentifier,
    title: r.issueTitle ?? '',
    status: r.issueStatus ?? '',
    priority: r.issuePriority ?? '',
    updatedAt: iso(r.issueUpdatedAt ?? null) ?? isoRequired(r.updatedAt),
  };
}

export function toRunResponse(r: RoutineRunRecord, triggers: Map<string, RoutineTriggerRecord> = new Map()): RoutineRunResponseDto {
  const trigger = r.triggerId ? triggers.get(r.triggerId) : undefined;
  return {
    id: r.id,
    companyId: r.companyId,
    routineId: r.routineId,
    triggerId: r.triggerId,
    source: r.source,
    status: r.status,
    triggeredAt: isoRequired(r.triggeredAt),
    scheduledFor: iso(r.scheduledFor),
    missedCount: r.missedCount,
    triggerPayload: r.triggerPayload,
    linkedIssueId: r.linkedIssueId,
    coalescedIntoRunId: r.coalescedIntoRunId,
    failureReason: r.failureReason,
    createdAt: isoRequired(r.createdAt),
    updatedAt: isoRequired(r.updatedAt),
    linkedIssue: issueBrief(r),
    trigger: trigger ? toTriggerResponse(trigger) : null,
  };
}

export function toRoutineResponse(
  r: RoutineRecord,
  triggers: RoutineTriggerRecord[],
  lastRun: RoutineRunRecord | undefined,
  open: RoutineRunRecord | undefined,
): RoutineResponseDto {
  const byId = new Map(triggers.map((t) => [t.id, t]));
  return {
    id: r.id,
    companyId: r.companyId,
    projectId: r.projectId,
    goalId: r.goalId,
    parentIssueId: r.parentIssueId,
    folderId: r.folderId,
    title: r.title,
    description: r.description,
    assigneeAgentId: r.assigneeAgentId,
    priority: r.priority,
    status: r.status,
    concurrencyPolicy: r.concurrencyPolicy,
    catchUpPolicy: r.catchUpPolicy,
    routineKey: r.routineKey,
    managedBy: r.managedBy,
    createdByAgentId: r.createdByAgentId,
    createdByUserId: r.createdByUserId,
    updatedByAgentId: r.updatedByAgentId,
    updatedByUserId: r.updatedByUserId,
    lastTriggeredAt: iso(r.lastTriggeredAt),
    lastEnqueuedAt: iso(r.lastEnqueuedAt),
    createdAt: isoRequired(r.createdAt),
    updatedAt: isoRequired(r.updatedAt),
    triggers: triggers.map(toTriggerResponse),
    lastRun: lastRun ? toRunResponse(lastRun, byId) : null,
    activeIssue: open ? issueBrief(open) : null,
  };
}
