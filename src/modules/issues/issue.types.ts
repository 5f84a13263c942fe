export const ISSUE_STATUSES = ['backlog', 'todo', 'in_progress', 'blocked', 'in_review', 'done', 'cancelled'] as const;
export type IssueStatus = (typeof ISSUE_STATUSES)[number];
export const ISSUE_PRIORITIES = ['critical', 'high', 'medium', 'low'] as const;
export type IssuePriority = (typeof ISSUE_PRIORITIES)[number];
export const CLOSED_STATUSES: readonly IssueStatus[] = ['done', 'cancelled'];
export const isClosed = (s: string) => (CLOSED_STATUSES as readonly string[]).includes(s);

/** A heartbeat run holds a checkout only while it is queued or running. */
export const LIVE_RUN_STATUSES = ['queued', 'running'];

/** An `issues` row as the database returns it (snake_case). */
export interface IssueRow {
  id: string;
  company_id: string;
  issue_number: number;
  identifier: string;
  title: string;
  description: string | null;
  status: IssueStatus;
  priority: IssuePriority;
  project_id: string | null;
  goal_id: string | null;
  parent_id: string | null;
  assignee_agent_id: string | null;
  assignee_user_id: string | null;
  checkout_run_id: string | null;
  execution_policy: Record<string, unknown> | null;
  execution_workspace_id: string | null;
  execution_workspace_preference: string | null;
  execution_workspace_settings: Record<string, unknown> | null;
  inherit_execution_workspace_from_issue_id: string | null;
  hidden_at: Date | null;
  origin_kind: string;
  origin_id: string | null;
  created_by_agent_id: string | null;
  created_by_user_id: string | null;
  started_at: Date | null;
  completed_at: Date | null;
  cancelled_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

/** Every column but the generated ones (search vector, priority rank), for SELECT and RETURNING. */
export const ISSUE_COLUMNS = `id, company_id, issue_number, identifier, title, description, status, priority, project_id, goal_id,
  parent_id, assignee_agent_id, assignee_user_id, checkout_run_id, execution_policy, execution_workspace_id,
  execution_workspace_preference, execution_workspace_settings, inherit_execution_workspace_from_issue_id, hidden_at,
  origin_kind, origin_id, created_by_agent_id, created_by_user_id, started_at, completed_at, cancelled_at, created_at, updated_at`;

export const issueColumns = (alias: string) =>
  ISSUE_COLUMNS.split(',')
    .map((c) => `${alias}.${c.trim()}`)
    .join(', ');

export interface CommentRow {
  id: string;
  company_id: string;
  issue_id: string;
  body: string;
  author_agent_id: string | null;
  author_user_id: string | null;
  run_id: string | null;
  created_at: Date;
  updated_at: Date;
}

export const COMMENT_COLUMNS = 'id, company_id, issue_id, body, author_agent_id, author_user_id, run_id, created_at, updated_at';
