import { Injectable } from '@nestjs/common';
import { CompanyScopedRepository } from '../../database/company-scoped.repository';
import { Db } from '../../database/db.service';

/** An issue as an attention item names it (with its project). */
export interface AttentionIssueCols {
  issue_id: string;
  identifier: string;
  issue_title: string;
  issue_status: string;
  priority: string;
  assignee_agent_id: string | null;
  assignee_user_id: string | null;
  project_id: string | null;
  project_name: string | null;
  project_url_key: string | null;
  project_color: string | null;
}

const ISSUE_COLS = `i.id AS issue_id, i.identifier, i.title AS issue_title, i.status AS issue_status, i.priority, i.assignee_agent_id,
  i.assignee_user_id, i.project_id, p.name AS project_name, p.url_key AS project_url_key, p.color AS project_color`;
const PROJECT_JOIN = 'LEFT JOIN projects p ON p.id = i.project_id AND p.company_id = i.company_id';

export interface ApprovalAttentionRow {
  id: string;
  type: string;
  agent_id: string | null;
  agent_name: string | null;
  requested_by_actor_type: string;
  created_at: Date;
  updated_at: Date;
}
export interface JoinAttentionRow {
  id: string;
  request_type: string;
  agent_name: string | null;
  user_name: string | null;
  created_at: Date;
  updated_at: Date;
}
export interface InteractionAttentionRow extends AttentionIssueCols {
  id: string;
  prompt: string;
  agent_name: string;
  created_at: Date;
  updated_at: Date;
}
export interface BlockedAttentionRow extends AttentionIssueCols {
  created_at: Date;
  updated_at: Date;
  open_blockers: number;
  blocks_open: number;
  first_blocker: string | null;
}
export interface FailedRunAttentionRow {
  id: string;
  status: string;
  error_code: string | null;
  error: string | null;
  agent_id: string;
  agent_name: string;
  created_at: Date;
  finished_at: Date;
  issue_id: string | null;
  identifier: string | null;
  issue_title: string | null;
  issue_status: string | null;
}
export interface BudgetAttentionRow {
  id: string;
  kind: string;
  scope_type: string;
  scope_id: string;
  scope_name: string | null;
  budget_amount: string | number;
  observed_amount: string | number;
  hold_active: boolean;
  created_at: Date;
}
export interface AgentErrorAttentionRow {
  id: string;
  name: string;
  url_key: string;
  updated_at: Date;
}

/**
 * The board's attention queue read model: pending approvals and join requests, open questions of
 * agents, blocked issues, runs failed in the last day, open budget incidents and agents in error.
 * Each is a read of the owning module's table (listed in FOREIGN_READS), one indexed statement each.
 */
@Injectable()
export class AttentionRepository extends CompanyScopedRepository {
  constructor(db: Db) {
    super(db);
  }

  approvals(companyId: string): Promise<ApprovalAttentionRow[]> {
    return this.rows(
      companyId,
      `SELECT a.id, a.type, a.agent_id, g.name AS agent_name, a.requested_by_actor_type, a.created_at, a.updated_at
         FROM approvals a LEFT JOIN agents g ON g.id = a.agent_id AND g.company_id = a.company_id
        WHERE a.company_id = $1 AND a.status = 'pending'`,
    );
  }

  joinRequests(companyId: string): Promise<JoinAttentionRow[]> {
    return this.rows(
      companyId,
      `SELECT j.id, j.request_type, j.agent_name, u.name AS user_name, j.created_at, j.updated_at
         FROM join_requests j LEFT JOIN users u ON u.id = j.requesting_user_id
        WHERE j.company_id = $1 AND j.status = 'pending_approval'`,
    );
  }

  openInteractions(companyId: string): Promise<InteractionAttentionRow[]> {
    return this.rows(
      companyId,
      `SELECT x.id, x.prompt, g.name AS agent_name, x.created_at, x.updated_at, ${ISSUE_COLS}
         FROM issue_interactions x JOIN issues i ON i.id = x.issue_id AND i.company_id = x.company_id
         JOIN agents g ON g.id = x.asked_by_agent_id AND g.company_id = x.company_id ${PROJECT_JOIN}
        WHERE x.company_id = $1 AND x.status = 'pending' AND i.hidden_at IS NULL`,
    );
  }

  /** Blocked issues with their open blockers and the open issues they block. */
  blockedIssues(companyId: string): Promise<BlockedAttentionRow[]> {
    return this.rows(
      companyId,
      `SELECT ${ISSUE_COLS}, i.created_at, i.updated_at,
              (SELECT count(*)::int FROM issue_relations r JOIN issues b ON b.id = r.issue_id AND b.company_id = r.company_id
                WHERE r.company_id = $1 AND r.related_issue_id = i.id AND r.type = 'blocks' AND b.status NOT IN ('done', 'cancelled')) AS open_blockers,
              (SELECT count(*)::int FROM issue_relations r JOIN issues d ON d.id = r.related_issue_id AND d.company_id = r.company_id
                WHERE r.company_id = $1 AND r.issue_id = i.id AND r.type = 'blocks' AND d.status NOT IN ('done', 'cancelled')) AS blocks_open,
              (SELECT b.identifier FROM issue_relations r JOIN issues b ON b.id = r.issue_id AND b.company_id = r.company_id
                WHERE r.company_id = $1 AND r.related_issue_id = i.id AND r.type = 'blocks' AND b.status NOT IN ('done', 'cancelled')
                ORDER BY b.issue_number LIMIT 1) AS first_blocker
         FROM issues i ${PROJECT_JOIN}
        WHERE i.company_id = $1 AND i.status = 'blocked' AND i.hidden_at IS NULL`,
    );
  }

  /** Runs that failed or timed out in the last 24 hours (by finish time), as the sidebar badge counts them. */
  failedRuns(companyId: string): Promise<FailedRunAttentionRow[]> {
    return this.rows(
      companyId,
      `SELECT r.id, r.status, r.error_code, r.error, r.agent_id, g.name AS agent_name, r.created_at, r.finished_at,
              i.id AS issue_id, i.identifier, i.title AS issue_title, i.status AS issue_status
         FROM heartbeat_runs r JOIN agents g ON g.id = r.agent_id AND g.company_id = r.company_id
         LEFT JOIN issues i ON i.id = r.issue_id AND i.company_id = r.company_id
        WHERE r.company_id = $1 AND r.status IN ('failed', 'timed_out') AND r.finished_at > now() - interval '24 hours'`,
    );
  }

  openBudgetIncidents(companyId: string): Promise<BudgetAttentionRow[]> {
    return this.rows(
      companyId,
      `SELECT b.id, b.kind, b.scope_type, b.scope_id, b.budget_amount, b.observed_amount, b.hold_active, b.created_at,
              CASE b.scope_type WHEN 'company' THEN (SELECT name FROM companies WHERE id = b.scope_id)
                                WHEN 'agent' THEN (SELECT name FROM agents WHERE id = b.scope_id AND company_id = $1)
                                ELSE (SELECT name FROM projects WHERE id = b.scope_id AND company_id = $1) END AS scope_name
         FROM budget_incidents b WHERE b.company_id = $1 AND (b.status = 'open' OR b.hold_active)`,
    );
  }

  agentsInError(companyId: string): Promise<AgentErrorAttentionRow[]> {
    return this.rows(companyId, `SELECT id, name, url_key, updated_at FROM agents WHERE company_id = $1 AND status = 'error'`);
  }
}
