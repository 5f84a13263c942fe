import { Injectable } from '@nestjs/common';
import { CompanyScopedRepository } from '../../database/company-scoped.repository';
import { Db } from '../../database/db.service';
import { isoRequired } from '../../database/row-mapping';
import { CommentResponseDto } from './dto/comment.dto';
import { COMMENT_RECORD_COLUMNS, CommentRecord } from './issue.types';

export function toCommentResponse(c: CommentRecord): CommentResponseDto {
  return {
    id: c.id,
    companyId: c.companyId,
    issueId: c.issueId,
    body: c.body,
    authorAgentId: c.authorAgentId,
    authorUserId: c.authorUserId,
    runId: c.runId,
    createdAt: isoRequired(c.createdAt),
    updatedAt: isoRequired(c.updatedAt),
  };
}

/** The issue_comments table. */
@Injectable()
export class IssueCommentsRepository extends CompanyScopedRepository {
  constructor(db: Db) {
    super(db);
  }

  /** Every comment of a company's issues, oldest first. */
  allOfCompany(companyId: string): Promise<CommentRecord[]> {
    return this.rows<CommentRecord>(
      companyId,
      `SELECT ${COMMENT_RECORD_COLUMNS} FROM issue_comments WHERE company_id = $1 ORDER BY created_at, id`,
    );
  }

  /** The id of the comment when it belongs to the issue (a list cursor), else null. */
  async idOnIssue(companyId: string, issueId: string, commentId: string): Promise<string | null> {
    const c = await this.row<CommentRecord>(
      companyId,
      `SELECT id FROM issue_comments WHERE company_id = $1 AND id = $2 AND issue_id = $3`,
      [commentId, issueId],
    );
    return c ? c.id : null;
  }

  /** A page of the issue's comments, after the comment `afterId` (of this issue) when given. */
  page(companyId: string, issueId: string, p: { order: 'ASC' | 'DESC'; limit: number; afterId?: string }): Promise<CommentRecord[]> {
    const params: unknown[] = [issueId, p.limit];
    let after = '';
    if (p.afterId) {
      params.push(p.afterId);
      // compared in SQL: timestamps keep their microseconds
      after = ` AND (created_at, id) > (SELECT created_at, id FROM issue_comments WHERE company_id = $1 AND id = $4)`;
    }
    return this.rows<CommentRecord>(
      companyId,
      `SELECT ${COMMENT_RECORD_COLUMNS} FROM issue_comments WHERE company_id = $1 AND issue_id = $2${after} ORDER BY created_at ${p.order}, id ${p.order} LIMIT $3`,
      params,
    );
  }

  /** The issue's comments among `ids`, oldest first. */
  manyOfIssue(companyId: string, issueId: string, ids: string[]): Promise<CommentRecord[]> {
    return this.rows<CommentRecord>(
      companyId,
      `SELECT ${COMMENT_RECORD_COLUMNS} FROM issue_comments WHERE company_id = $1 AND issue_id = $2 AND id = ANY($3::uuid[]) ORDER BY created_at, id`,
      [issueId, ids],
    );
  }

  /** One comment of the issue, or null. */
  findOfIssue(companyId: string, issueId: string, commentId: string): Promise<CommentRecord | null> {
    return this.row<CommentRecord>(
      companyId,
      `SELECT ${COMMENT_RECORD_COLUMNS} FROM issue_comments WHERE company_id = $1 AND id = $2 AND issue_id = $3`,
      [commentId, issueId],
    );
  }

  /** How many comments the issue has, and its latest. */
  async cursorOf(companyId: string, issueId: string): Promise<{ total: number; latestId: string | null; latestAt: Date | null }> {
    const cursor = await this.row<{ total: number; latestId: string | null; latestAt: Date | null }>(
      companyId,
      `SELECT count(*)::int AS total,
                (array_agg(id ORDER BY created_at DESC, id DESC))[1] AS "latestId", max(created_at) AS "latestAt"
           FROM issue_comments WHERE company_id = $1 AND issue_id = $2`,
      [issueId],
    );
    return cursor!;
  }

  async insert(
    companyId: string,
    v: { issueId: string; body: string; authorAgentId: string | null; authorUserId: string | null; runId: string | null },
  ): Promise<CommentRecord> {
    const [comment] = await this.rows<CommentRecord>(
      companyId,
      `INSERT INTO issue_comments (company_id, issue_id, body, author_agent_id, author_user_id, run_id)
       VALUES ($1, $2, $3, $4, $5, $6) RETURNING ${COMMENT_RECORD_COLUMNS}`,
      [v.issueId, v.body, v.authorAgentId, v.authorUserId, v.runId],
    );
    return comment;
  }

  /** Comments of a package import as `[issueId, body]`, inserted in this order. */
  async insertImported(companyId: string, agentId: string | null, userId: string | null, comments: Array<[string, string]>): Promise<void> {
    await this.rows(
      companyId,
      `INSERT INTO issue_comments (company_id, issue_id, body, author_agent_id, author_user_id)
           SELECT $1::uuid, x.i, x.b, $2::uuid, $3::text FROM unnest($4::uuid[], $5::text[]) WITH ORDINALITY AS x(i, b, n) ORDER BY x.n`,
      [agentId, userId, comments.map((x) => x[0]), comments.map((x) => x[1])],
    );
  }
}
