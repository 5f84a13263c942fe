import { iso, isoRequired } from '../../database/row-mapping';
import { IssueResponseDto, IssueSummaryDto, LabelSummaryDto } from './dto/issue.dto';
import { IssueRecord } from './issue.types';

export function toIssueResponse(r: IssueRecord, labels: LabelSummaryDto[], blockedByIssueIds: string[]): IssueResponseDto {
  return {
    id: r.id,
    companyId: r.companyId,
    identifier: r.identifier,
    issueNumber: r.issueNumber,
    title: r.title,
    description: r.description,
    status: r.status,
    priority: r.priority,
    projectId: r.projectId,
    goalId: r.goalId,
    parentId: r.parentId,
    blockedByIssueIds,
    labelIds: labels.map((l) => l.id),
    labels,
    assigneeAgentId: r.assigneeAgentId,
    assigneeUserId: r.assigneeUserId,
    checkoutRunId: r.checkoutRunId,
    executionPolicy: r.executionPolicy,
    executionWorkspaceId: r.executionWorkspaceId,
    executionWorkspacePreference: r.executionWorkspacePreference,
    executionWorkspaceSettings: r.executionWorkspaceSettings,
    inheritExecutionWorkspaceFromIssueId: r.inheritExecutionWorkspaceFromIssueId,
    hiddenAt: iso(r.hiddenAt),
    originKind: r.originKind,
    originId: r.originId,
    createdByAgentId: r.createdByAgentId,
    createdByUserId: r.createdByUserId,
    startedAt: iso(r.startedAt),
    completedAt: iso(r.completedAt),
    cancelledAt: iso(r.cancelledAt),
    createdAt: isoRequired(r.createdAt),
    updatedAt: isoRequired(r.updatedAt),
  };
}

export function toIssueSummary(r: IssueRecord): IssueSummaryDto {
  return {
    id: r.id,
    identifier: r.identifier,
    title: r.title,
    status: r.status,
    priority: r.priority,
    assigneeAgentId: r.assigneeAgentId,
    projectId: r.projectId,
    goalId: r.goalId,
    parentId: r.parentId,
    updatedAt: isoRequired(r.updatedAt),
  };
}

export interface IssueSets {
  labels: LabelSummaryDto[];
  blockers: string[];
}

/**
 * SQL select items `labels` (json) and `blockers` (uuid[]) for the issue whose id is `<alias>.id`,
 * of the company `company` (an SQL expression: `$1`, or `<alias>.company_id`).
 */
export function issueSetsSql(alias: string, company: string): string {
  return `(SELECT coalesce(json_agg(json_build_object('id', l.id, 'name', l.name, 'color', l.color) ORDER BY lower(l.name), l.id), '[]')
             FROM issue_labels il JOIN labels l ON l.id = il.label_id WHERE il.issue_id = ${alias}.id AND il.company_id = ${company}) AS labels,
          (SELECT coalesce(array_agg(r.issue_id ORDER BY r.created_at, r.issue_id), '{}')
             FROM issue_relations r WHERE r.related_issue_id = ${alias}.id AND r.company_id = ${company} AND r.type = 'blocks') AS blockers`;
}
