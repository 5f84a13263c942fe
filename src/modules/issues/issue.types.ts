import { recordColumns } from '../../database/row-mapping';

export const ISSUE_STATUSES = ['backlog', 'todo', 'in_progress', 'blocked', 'in_review', 'done', 'cancelled'] as const;
export type IssueStatus = (typeof ISSUE_STATUSES)[number];
export const ISSUE_PRIORITIES = ['critical', 'high', 'medium', 'low'] as const;
export type IssuePriority = (typeof ISSUE_PRIORITIES)[number];
export const CLOSED_STATUSES: readonly IssueStatus[] = ['done', 'cancelled'];
export const isClosed = (s: string) => (CLOSED_STATUSES as readonly string[]).includes(s);

/** A heartbeat run holds a checkout only while it is queued or running. */
export const LIVE_RUN_STATUSES = ['queued', 'running'];

/** An issue as the issues module returns it (the `issues` columns as camelCase record fields). */
export interface IssueRecord {
  id: string;
  companyId: string;
  issueNumber: number;
  identifier: string;
  title: string;
  description: string | null;
  status: IssueStatus;
  priority: IssuePriority;
  projectId: string | null;
  goalId: string | null;
  parentId: string | null;
  assigneeAgentId: string | null;
  assigneeUserId: string | null;
  checkoutRunId: string | null;
  executionPolicy: Record<string, unknown> | null;
  executionWorkspaceId: string | null;
  executionWorkspacePreference: string | null;
  executionWorkspaceSettings: Record<string, unknown> | null;
  inheritExecutionWorkspaceFromIssueId: string | null;
  hiddenAt: Date | null;
  originKind: string;
  originId: string | null;
  createdByAgentId: string | null;
  createdByUserId: string | null;
  startedAt: Date | null;
  completedAt: Date | null;
  cancelledAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

/** Issue fields an insert or update writes, by record field (the repository names each column with `snakeName`). */
export type IssueFields = { [K in keyof IssueRecord]?: unknown };

/** Every column but the generated ones (search vector, priority rank), for SELECT and RETURNING. */
export const ISSUE_COLUMNS = `id, company_id, issue_number, identifier, title, description, status, priority, project_id, goal_id,
  parent_id, assignee_agent_id, assignee_user_id, checkout_run_id, execution_policy, execution_workspace_id,
  execution_workspace_preference, execution_workspace_settings, inherit_execution_workspace_from_issue_id, hidden_at,
  origin_kind, origin_id, created_by_agent_id, created_by_user_id, started_at, completed_at, cancelled_at, created_at, updated_at`;

/** The issue columns (snake_case) of table alias `alias`, for the inner selects of a statement that maps them at its end. */
export const issueColumns = (alias: string) =>
  ISSUE_COLUMNS.split(',')
    .map((c) => `${alias}.${c.trim()}`)
    .join(', ');

/** The issue columns as IssueRecord fields (`issue_number AS "issueNumber"`), of table alias `alias` when given. */
export const issueRecordColumns = (alias?: string) => recordColumns(ISSUE_COLUMNS, alias);

/** An issue comment as the issues module returns it. */
export interface CommentRecord {
  id: string;
  companyId: string;
  issueId: string;
  body: string;
  authorAgentId: string | null;
  authorUserId: string | null;
  runId: string | null;
  createdAt: Date;
  updatedAt: Date;
}

/** The issue_comments columns as CommentRecord fields. */
export const COMMENT_RECORD_COLUMNS = recordColumns(
  'id, company_id, issue_id, body, author_agent_id, author_user_id, run_id, created_at, updated_at',
);
