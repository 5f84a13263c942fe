import { Injectable } from '@nestjs/common';
import { CompanyScopedRepository } from '../../database/company-scoped.repository';
import { Db } from '../../database/db.service';

export interface InteractionRow {
  id: string;
  company_id: string;
  issue_id: string;
  kind: string;
  asked_by_agent_id: string;
  run_id: string | null;
  prompt: string;
  options: Array<{ id: string; label: string }> | null;
  allow_free_text: boolean;
  status: string;
  answer_option_id: string | null;
  answer_text: string | null;
  answered_by_user_id: string | null;
  answered_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

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
  ): Promise<InteractionRow> {
    const [row] = await this.rows<InteractionRow>(
      companyId,
      `INSERT INTO issue_interactions (company_id, issue_id, asked_by_agent_id, run_id, prompt, options, allow_free_text)
       VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7) RETURNING *`,
      [v.issueId, v.agentId, v.runId, v.prompt, v.options ? JSON.stringify(v.options) : null, v.allowFreeText],
    );
    return row;
  }

  /** Oldest first (the conversation order); at most `limit`, the newest ones when there are more. */
  listOfIssue(companyId: string, issueId: string, limit = 500): Promise<InteractionRow[]> {
    return this.rows<InteractionRow>(
      companyId,
      `SELECT * FROM (SELECT * FROM issue_interactions WHERE company_id = $1 AND issue_id = $2 ORDER BY created_at DESC, id DESC LIMIT $3) x
        ORDER BY created_at, id`,
      [issueId, limit],
    );
  }

  find(companyId: string, issueId: string, id: string): Promise<InteractionRow | null> {
    return this.row<InteractionRow>(companyId, `SELECT * FROM issue_interactions WHERE company_id = $1 AND issue_id = $2 AND id = $3`, [
      issueId,
      id,
    ]);
  }

  /** Answers a pending interaction; null when it was already answered (of concurrent answers exactly one wins). */
  async answer(
    companyId: string,
    id: string,
    a: { optionId: string | null; text: string | null; userId: string },
  ): Promise<InteractionRow | null> {
    const [row] = await this.returning<InteractionRow>(
      companyId,
      `UPDATE issue_interactions
          SET status = 'answered', answer_option_id = $3, answer_text = $4, answered_by_user_id = $5, answered_at = now(), updated_at = now()
        WHERE company_id = $1 AND id = $2 AND status = 'pending' RETURNING *`,
      [id, a.optionId, a.text, a.userId],
    );
    return row ?? null;
  }
}
