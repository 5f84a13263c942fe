import { iso, isoRequired } from '../../database/row-mapping';
import { IssueResponseDto, IssueSummaryDto, LabelSummaryDto } from './dto/issue.dto';
import { IssueRow } from './issue.types';

export function toIssueResponse(r: IssueRow, labels: LabelSummaryDto[], blockedByIssueIds: string[]): IssueResponseDto {
  return {
    id: r.id,
    companyId: r.company_id,
    identifier: r.identifier,
    issueNumber: r.issue_number,
    title: r.title,
    description: r.description,
    status: r.status,
    priority: r.priority,
    projectId: r.project_id,
    goalId: r.goal_id,
    parentId: r.parent_id,
    blockedByIssueIds,
    labelIds: labels.map((l) => l.id),
    labels,
    assigneeAgentId: r.assignee_agent_id,
    assigneeUserId: r.assignee_user_id,
    checkoutRunId: r.checkout_run_id,
    executionPolicy: r.execution_policy,
    executionWorkspaceId: r.execution_workspace_id,
    executionWorkspacePreference: r.execution_workspace_preference,
    executionWorkspaceSettings: r.execution_workspace_settings,
    inheritExecutionWorkspaceFromIssueId: r.inherit_execution_workspace_from_issue_id,
    hiddenAt: iso(r.hidden_at),
    originKind: r.origin_kind,
    originId: r.origin_id,
    createdByAgentId: r.created_by_agent_id,
    createdByUserId: r.created_by_user_id,
    startedAt: iso(r.started_at),
    completedAt: iso(r.completed_at),
    cancelledAt: iso(r.cancelled_at),
    createdAt: isoRequired(r.created_at),
    updatedAt: isoRequired(r.updated_at),
  };
}

export function toIssueSummary(r: IssueRow): IssueSummaryDto {
  return {
    id: r.id,
    identifier: r.identifier,
    title: r.title,
    status: r.status,
    priority: r.priority,
    assigneeAgentId: r.assignee_agent_id,
    projectId: r.project_id,
    goalId: r.goal_id,
    parentId: r.parent_id,
    updatedAt: isoRequired(r.updated_at),
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
