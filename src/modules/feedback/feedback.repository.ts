import { Injectable } from '@nestjs/common';
import { CompanyScopedRepository } from '../../database/company-scoped.repository';
import { Db } from '../../database/db.service';
import { recordColumns } from '../../database/row-mapping';
import type { FeedbackTargetType } from './dto/feedback.dto';

export interface FeedbackTarget {
  issueId: string | null;
  agentId: string | null;
  runId: string | null;
}

export interface FeedbackRecord {
  id: string;
  companyId: string;
  targetType: FeedbackTargetType;
  targetId: string;
  vote: 'up' | 'down';
  note: string | null;
  issueId: string | null;
  projectId: string | null;
  agentId: string | null;
  runId: string | null;
  voterUserId: string;
  status: 'local' | 'shared';
  createdAt: Date;
  updatedAt: Date;
  payload?: Record<string, unknown> | null;
}

export interface FeedbackFilter {
  targetType?: string;
  vote?: string;
  status?: string;
  issueId?: string;
  projectId?: string;
  from?: string;
  to?: string;
  includePayload?: boolean;
  limit: number;
}

/**
 * Table feedback_traces. Resolving a vote's target reads comments, document revisions and runs
 * (owned by the issues, documents and heartbeat modules) and the list joins issues for the
 * project and the company for its consent: reads for this page, kept here, never writes.
 */
@Injectable()
export class FeedbackRepository extends CompanyScopedRepository {
  constructor(db: Db) {
    super(db);
  }

  /** The rated output, if it exists in the company: its issue, author agent and run. */
  target(companyId: string, type: FeedbackTargetType, id: string): Promise<FeedbackTarget | null> {
    if (type === 'comment') {
      return this.row<FeedbackTarget>(
        companyId,
        `SELECT issue_id AS "issueId", author_agent_id AS "agentId", run_id AS "runId" FROM issue_comments WHERE company_id = $1 AND id = $2`,
        [id],
      );
    }
    if (type === 'document_revision') {
      return this.row<FeedbackTarget>(
        companyId,
        `SELECT d.issue_id AS "issueId", r.created_by_agent_id AS "agentId", r.run_id AS "runId" FROM issue_document_revisions r
           JOIN issue_documents d ON d.id = r.document_id WHERE r.company_id = $1 AND r.id = $2`,
        [id],
      );
    }
    return this.row<FeedbackTarget>(
      companyId,
      `SELECT issue_id AS "issueId", agent_id AS "agentId", id AS "runId" FROM heartbeat_runs WHERE company_id = $1 AND id = $2`,
      [id],
    );
  }

  /** Inserts the caller's vote, or replaces it (one vote per user and target). `created` tells which. */
  async upsert(v: {
    companyId: string;
    targetType: string;
    targetId: string;
    vote: string;
    note: string | null;
    target: FeedbackTarget;
    userId: string;
  }): Promise<{ id: string; created: boolean }> {
    const [row] = await this.rows<{ id: string; created: boolean }>(
      v.companyId,
      `INSERT INTO feedback_traces (company_id, target_type, target_id, vote, note, issue_id, agent_id, run_id, voter_user_id)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
       ON CONFLICT (company_id, target_type, target_id, voter_user_id)
       DO UPDATE SET vote = EXCLUDED.vote, note = EXCLUDED.note, updated_at = clock_timestamp()
       RETURNING id, (xmax = 0) AS created`,
      [v.targetType, v.targetId, v.vote, v.note, v.target.issueId, v.target.agentId, v.target.runId, v.userId],
    );
    return row;
  }

  list(companyId: string, f: FeedbackFilter): Promise<FeedbackRecord[]> {
    const where = ['t.company_id = $1'];
    // the company is `$1` (the scoped path puts it first): the filters' parameters start at `$2`
    const params: unknown[] = [];
    const add = (sql: string, value: unknown) => {
      params.push(value);
      where.push(sql.replace('?', `$${params.length + 1}`));
    };
    if (f.targetType) add('t.target_type = ?', f.targetType);
    if (f.vote) add('t.vote = ?', f.vote);
    if (f.issueId) add('t.issue_id = ?', f.issueId);
    if (f.projectId) add('i.project_id = ?', f.projectId);
    if (f.from) add('t.created_at >= ?::timestamptz', f.from);
    if (f.to) add('t.created_at < ?::timestamptz', f.to);
    if (f.status) add(`${STATUS_SQL} = ?`, f.status);
    params.push(f.limit);
    const payload = f.includePayload ? `, ${PAYLOAD_SQL} AS payload` : '';
    return this.rows<FeedbackRecord>(
      companyId,
      `SELECT ${TRACE_COLUMNS}${payload}
         FROM feedback_traces t
         JOIN companies c ON c.id = t.company_id
         LEFT JOIN issues i ON i.id = t.issue_id
        WHERE ${where.join(' AND ')}
        ORDER BY t.created_at DESC, t.id DESC
        LIMIT $${params.length + 1}`,
      params,
    );
  }

  get(companyId: string, id: string): Promise<FeedbackRecord | null> {
    return this.row<FeedbackRecord>(
      companyId,
      `SELECT ${TRACE_COLUMNS} FROM feedback_traces t JOIN companies c ON c.id = t.company_id
         LEFT JOIN issues i ON i.id = t.issue_id WHERE t.company_id = $1 AND t.id = $2`,
      [id],
    );
  }
}

/**
 * A trace is shared when the company's feedback-sharing consent is on and was given before the
 * vote was last recorded: consent is not retroactive, and withdrawing it makes every trace local.
 */
const STATUS_SQL = `(CASE WHEN c.feedback_sharing_enabled IS TRUE AND c.feedback_sharing_consented_at <= t.updated_at THEN 'shared' ELSE 'local' END)`;

/** A trace as its record (`t` the trace, `i` its issue, `c` its company): the project is its issue's, the status from the consent. */
const TRACE_COLUMNS = `${recordColumns('id, company_id, target_type, target_id, vote, note, issue_id', 't')}, i.project_id AS "projectId",
  ${recordColumns('agent_id, run_id, voter_user_id', 't')}, ${STATUS_SQL} AS status, ${recordColumns('created_at, updated_at', 't')}`;

/** The rated content, read at list time (a deleted target gives null). */
const PAYLOAD_SQL = `(CASE t.target_type
  WHEN 'comment' THEN (SELECT jsonb_build_object('body', x.body, 'authorAgentId', x.author_agent_id, 'authorUserId', x.author_user_id, 'createdAt', x.created_at)
                         FROM issue_comments x WHERE x.id = t.target_id AND x.company_id = t.company_id)
  WHEN 'document_revision' THEN (SELECT jsonb_build_object('documentKey', d.key, 'revisionNumber', r.revision_number, 'title', r.title, 'body', r.body,
                                   'changeSummary', r.change_summary, 'createdByAgentId', r.created_by_agent_id, 'createdAt', r.created_at)
                                   FROM issue_document_revisions r JOIN issue_documents d ON d.id = r.document_id WHERE r.id = t.target_id AND r.company_id = t.company_id)
  WHEN 'run' THEN (SELECT jsonb_build_object('status', x.status, 'adapterType', x.adapter_type, 'errorCode', x.error_code, 'error', x.error,
                     'result', x.result_json, 'usage', x.usage_json, 'startedAt', x.started_at, 'finishedAt', x.finished_at)
                     FROM heartbeat_runs x WHERE x.id = t.target_id AND x.company_id = t.company_id)
END)`;
