import { Injectable } from '@nestjs/common';
import { CompanyScopedRepository } from '../../database/company-scoped.repository';
import { Db } from '../../database/db.service';
import { recordColumns } from '../../database/row-mapping';

/** A question an agent asked a human on an issue, and its answer. */
export interface InteractionRecord {
  id: string;
  companyId: string;
  issueId: string;
  kind: string;
  askedByAgentId: string;
  runId: string | null;
  prompt: string;
  options: Array<{ id: string; label: string }> | null;
  allowFreeText: boolean;
  status: string;
  answerOptionId: string | null;
  answerText: string | null;
  answeredByUserId: string | null;
  answeredAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

const INTERACTION_COLUMNS = `id, company_id, issue_id, kind, asked_by_agent_id, run_id, prompt, options, allow_free_text, status,
  answer_option_id, answer_text, answered_by_user_id, answered_at, created_at, updated_at`;
const INTERACTION_RECORD = recordColumns(INTERACTION_COLUMNS);

/** The issue_interactions table: questions agents ask humans on issues, and their answers. */
@Injectable()
export class IssueInteractionsRepository extends CompanyScopedRepository {
  constructor(db: Db) {
    super(db);
  }

  async insert(
    companyId: string,
    v: {
      issueId: string;
      agentId: string;
      runId: string | null;
      prompt: string;
      options: Array<{ id: string; label: string }> | null;
      allowFreeText: boolean;
    },
  ): Promise<InteractionRecord> {
    const [row] = await this.rows<InteractionRecord>(
      companyId,
      `INSERT INTO issue_interactions (company_id, issue_id, asked_by_agent_id, run_id, prompt, options, allow_free_text)
       VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7) RETURNING ${INTERACTION_RECORD}`,
      [v.issueId, v.agentId, v.runId, v.prompt, v.options ? JSON.stringify(v.options) : null, v.allowFreeText],
    );
    return row;
  }

  /** Oldest first (the conversation order); at most `limit`, the newest ones when there are more. */
  listOfIssue(companyId: string, issueId: string, limit = 500): Promise<InteractionRecord[]> {
    return this.rows<InteractionRecord>(
      companyId,
      `SELECT ${recordColumns(INTERACTION_COLUMNS, 'x')} FROM (SELECT * FROM issue_interactions WHERE company_id = $1 AND issue_id = $2 ORDER BY created_at DESC, id DESC LIMIT $3) x
        ORDER BY x.created_at, x.id`,
      [issueId, limit],
    );
  }

  find(companyId: string, issueId: string, id: string): Promise<InteractionRecord | null> {
    return this.row<InteractionRecord>(
      companyId,
      `SELECT ${INTERACTION_RECORD} FROM issue_interactions WHERE company_id = $1 AND issue_id = $2 AND id = $3`,
      [issueId, id],
    );
  }

  /** Answers a pending interaction; null when it was already answered (of concurrent answers exactly one wins). */
  async answer(
    companyId: string,
    id: string,
    a: { optionId: string | null; text: string | null; userId: string },
  ): Promise<InteractionRecord | null> {
    const [row] = await this.returning<InteractionRecord>(
      companyId,
      `UPDATE issue_interactions
          SET status = 'answered', answer_option_id = $3, answer_text = $4, answered_by_user_id = $5, answered_at = now(), updated_at = now()
        WHERE company_id = $1 AND id = $2 AND status = 'pending' RETURNING ${INTERACTION_RECORD}`,
      [id, a.optionId, a.text, a.userId],
    );
    return row ?? null;
  }
}
