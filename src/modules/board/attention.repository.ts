import { Injectable } from '@nestjs/common';
import { CompanyScopedRepository } from '../../database/company-scoped.repository';
import { Db } from '../../database/db.service';

/** An issue as an attention item names it (with its project). */
export interface AttentionIssueFields {
  issueId: string;
  identifier: string;
  issueTitle: string;
  issueStatus: string;
  priority: string;
  assigneeAgentId: string | null;
  assigneeUserId: string | null;
  projectId: string | null;
  projectName: string | null;
  projectUrlKey: string | null;
  projectColor: string | null;
}

const ISSUE_COLS = `i.id AS "issueId", i.identifier, i.title AS "issueTitle", i.status AS "issueStatus", i.priority,
  i.assignee_agent_id AS "assigneeAgentId", i.assignee_user_id AS "assigneeUserId", i.project_id AS "projectId", p.name AS "projectName",
  p.url_key AS "projectUrlKey", p.color AS "projectColor"`;
const PROJECT_JOIN = 'LEFT JOIN projects p ON p.id = i.project_id AND p.company_id = i.company_id';

export interface ApprovalAttentionRecord {
  id: string;
  type: string;
  agentId: string | null;
  agentName: string | null;
  requestedByActorType: string;
  createdAt: Date;
  updatedAt: Date;
}
export interface JoinAttentionRecord {
  id: string;
  requestType: string;
  agentName: string | null;
  userName: string | null;
  createdAt: Date;
  updatedAt: Date;
}
export interface InteractionAttentionRecord extends AttentionIssueFields {
  id: string;
  prompt: string;
  agentName: string;
  createdAt: Date;
  updatedAt: Date;
}
export interface BlockedAttentionRecord extends AttentionIssueFields {
  createdAt: Date;
  updatedAt: Date;
  openBlockers: number;
  blocksOpen: number;
  firstBlocker: string | null;
}
export interface FailedRunAttentionRecord {
  id: string;
  status: string;
  errorCode: string | null;
  error: string | null;
  agentId: string;
  agentName: string;
  createdAt: Date;
  finishedAt: Date;
  issueId: string | null;
  identifier: string | null;
  issueTitle: string | null;
  issueStatus: string | null;
}
export interface BudgetAttentionRecord {
  id: string;
  kind: string;
  scopeType: string;
  scopeId: string;
  scopeName: string | null;
  budgetAmount: string | number;
  observedAmount: string | number;
  holdActive: boolean;
  createdAt: Date;
}
export interface AgentErrorAttentionRecord {
  id: string;
  name: string;
  urlKey: string;
  updatedAt: Date;
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

  approvals(companyId: string): Promise<ApprovalAttentionRecord[]> {
    return this.rows(
      companyId,
      `SELECT a.id, a.type, a.agent_id AS "agentId", g.name AS "agentName", a.requested_by_actor_type AS "requestedByActorType",
              a.created_at AS "createdAt", a.updated_at AS "updatedAt"
         FROM approvals a LEFT JOIN agents g ON g.id = a.agent_id AND g.company_id = a.company_id
        WHERE a.company_id = $1 AND a.status = 'pending'`,
    );
  }

  joinRequests(companyId: string): Promise<JoinAttentionRecord[]> {
    return this.rows(
      companyId,
      `SELECT j.id, j.request_type AS "requestType", j.agent_name AS "agentName", u.name AS "userName", j.created_at AS "createdAt",
              j.updated_at AS "updatedAt"
         FROM join_requests j LEFT JOIN users u ON u.id = j.requesting_user_id
        WHERE j.company_id = $1 AND j.status = 'pending_approval'`,
    );
  }

  openInteractions(companyId: string): Promise<InteractionAttentionRecord[]> {
    return this.rows(
      companyId,
      `SELECT x.id, x.prompt, g.name AS "agentName", x.created_at AS "createdAt", x.updated_at AS "updatedAt", ${ISSUE_COLS}
         FROM issue_interactions x JOIN issues i ON i.id = x.issue_id AND i.company_id = x.company_id
         JOIN agents g ON g.id = x.asked_by_agent_id AND g.company_id = x.company_id ${PROJECT_JOIN}
        WHERE x.company_id = $1 AND x.status = 'pending' AND i.hidden_at IS NULL`,
    );
  }

  /** Blocked issues with their open blockers and the open issues they block. */
  blockedIssues(companyId: string): Promise<BlockedAttentionRecord[]> {
    return this.rows(
      companyId,
      `SELECT ${ISSUE_COLS}, i.created_at AS "createdAt", i.updated_at AS "updatedAt",
              (SELECT count(*)::int FROM issue_relations r JOIN issues b ON b.id = r.issue_id AND b.company_id = r.company_id
                WHERE r.company_id = $1 AND r.related_issue_id = i.id AND r.type = 'blocks' AND b.status NOT IN ('done', 'cancelled')) AS "openBlockers",
              (SELECT count(*)::int FROM issue_relations r JOIN issues d ON d.id = r.related_issue_id AND d.company_id = r.company_id
                WHERE r.company_id = $1 AND r.issue_id = i.id AND r.type = 'blocks' AND d.status NOT IN ('done', 'cancelled')) AS "blocksOpen",
              (SELECT b.identifier FROM issue_relations r JOIN issues b ON b.id = r.issue_id AND b.company_id = r.company_id
                WHERE r.company_id = $1 AND r.related_issue_id = i.id AND r.type = 'blocks' AND b.status NOT IN ('done', 'cancelled')
                ORDER BY b.issue_number LIMIT 1) AS "firstBlocker"
         FROM issues i ${PROJECT_JOIN}
        WHERE i.company_id = $1 AND i.status = 'blocked' AND i.hidden_at IS NULL`,
    );
  }

  /** Runs that failed or timed out in the last 24 hours (by finish time), as the sidebar badge counts them. */
  failedRuns(companyId: string): Promise<FailedRunAttentionRecord[]> {
    return this.rows(
      companyId,
      `SELECT r.id, r.status, r.error_code AS "errorCode", r.error, r.agent_id AS "agentId", g.name AS "agentName", r.created_at AS "createdAt",
              r.finished_at AS "finishedAt", i.id AS "issueId", i.identifier, i.title AS "issueTitle", i.status AS "issueStatus"
         FROM heartbeat_runs r JOIN agents g ON g.id = r.agent_id AND g.company_id = r.company_id
         LEFT JOIN issues i ON i.id = r.issue_id AND i.company_id = r.company_id
        WHERE r.company_id = $1 AND r.status IN ('failed', 'timed_out') AND r.finished_at > now() - interval '24 hours'`,
    );
  }

  openBudgetIncidents(companyId: string): Promise<BudgetAttentionRecord[]> {
    return this.rows(
      companyId,
      `SELECT b.id, b.kind, b.scope_type AS "scopeType", b.scope_id AS "scopeId", b.budget_amount AS "budgetAmount",
              b.observed_amount AS "observedAmount", b.hold_active AS "holdActive", b.created_at AS "createdAt",
              CASE b.scope_type WHEN 'company' THEN (SELECT name FROM companies WHERE id = b.scope_id)
                                WHEN 'agent' THEN (SELECT name FROM agents WHERE id = b.scope_id AND company_id = $1)
                                ELSE (SELECT name FROM projects WHERE id = b.scope_id AND company_id = $1) END AS "scopeName"
         FROM budget_incidents b WHERE b.company_id = $1 AND (b.status = 'open' OR b.hold_active)`,
    );
  }

  agentsInError(companyId: string): Promise<AgentErrorAttentionRecord[]> {
    return this.rows(
      companyId,
      `SELECT id, name, url_key AS "urlKey", updated_at AS "updatedAt" FROM agents WHERE company_id = $1 AND status = 'error'`,
    );
  }
}
