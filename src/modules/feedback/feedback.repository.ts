import { Injectable } from '@nestjs/common';
import { CompanyScopedRepository } from '../../database/company-scoped.repository';
import { Db } from '../../database/db.service';
import type { FeedbackTargetType } from './dto/feedback.dto';

export interface FeedbackTarget {
  issueId: string | null;
  agentId: string | null;
  runId: string | null;
}

interface FeedbackRow {
  id: string;
  company_id: string;
  target_type: FeedbackTargetType;
  target_id: string;
  vote: 'up' | 'down';
  note: string | null;
  issue_id: string | null;
  project_id: string | null;
  agent_id: string | null;
  run_id: string | null;
  voter_user_id: string;
  status: 'local' | 'shared';
  created_at: Date;
  updated_at: Date;
  payload?: Record<string, unknown> | null;
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

function toRecord(r: FeedbackRow): FeedbackRecord {
  return {
    id: r.id,
    companyId: r.company_id,
    targetType: r.target_type,
    targetId: r.target_id,
    vote: r.vote,
    note: r.note,
    issueId: r.issue_id,
    projectId: r.project_id,
    agentId: r.agent_id,
    runId: r.run_id,
    voterUserId: r.voter_user_id,
    status: r.status,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    ...(r.payload !== undefined ? { payload: r.payload } : {}),
  };
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
  async target(companyId: string, type: FeedbackTargetType, id: string): Promise<FeedbackTarget | null> {
    type Row = { issue_id: string | null; agent_id: string | null; run_id: string | null };
    let row: Row | null;
    if (type === 'comment') {
      row = await this.row<Row>(
        companyId,
        `SELECT issue_id, author_agent_id AS agent_id, run_id FROM issue_comments WHERE company_id = $1 AND id = $2`,
        [id],
      );
    } else if (type === 'document_revision') {
      row = await this.row<Row>(
        companyId,
        `SELECT d.issue_id, r.created_by_agent_id AS agent_id, r.run_id FROM issue_document_revisions r
           JOIN issue_documents d ON d.id = r.document_id WHERE r.company_id = $1 AND r.id = $2`,
        [id],
      );
    } else {
      row = await this.row<Row>(
        companyId,
        `SELECT issue_id, agent_id, id AS run_id FROM heartbeat_runs WHERE company_id = $1 AND id = $2`,
        [id],
      );
    }
    return row ? { issueId: row.issue_id, agentId: row.agent_id, runId: row.run_id } : null;
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

  async list(companyId: string, f: FeedbackFilter): Promise<FeedbackRecord[]> {
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
    const rows = await this.rows<FeedbackRow>(
      companyId,
      `SELECT t.*, i.project_id, ${STATUS_SQL} AS status${payload}
         FROM feedback_traces t
         JOIN companies c ON c.id = t.company_id
         LEFT JOIN issues i ON i.id = t.issue_id
        WHERE ${where.join(' AND ')}
        ORDER BY t.created_at DESC, t.id DESC
        LIMIT $${params.length + 1}`,
      params,
    );
    return rows.map(toRecord);
  }

  async get(companyId: string, id: string): Promise<FeedbackRecord | null> {
    const row = await this.row<FeedbackRow>(
      companyId,
      `SELECT t.*, i.project_id, ${STATUS_SQL} AS status FROM feedback_traces t JOIN companies c ON c.id = t.company_id
         LEFT JOIN issues i ON i.id = t.issue_id WHERE t.company_id = $1 AND t.id = $2`,
      [id],
    );
    return row ? toRecord(row) : null;
  }
}

/**
 * A trace is shared when the company's feedback-sharing consent is on and was given before the
 * vote was last recorded: consent is not retroactive, and withdrawing it makes every trace local.
 */
const STATUS_SQL = `(CASE WHEN c.feedback_sharing_enabled IS TRUE AND c.feedback_sharing_consented_at <= t.updated_at THEN 'shared' ELSE 'local' END)`;

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
