import { Injectable } from '@nestjs/common';
import { CompanyScopedRepository } from '../../database/company-scoped.repository';
import { Db } from '../../database/db.service';
import { isoRequired, recordColumns } from '../../database/row-mapping';
import { LabelResponseDto } from './dto/label.dto';

/** A company label. */
export interface LabelRecord {
  id: string;
  companyId: string;
  name: string;
  color: string | null;
  createdAt: Date;
  updatedAt: Date;
}

const COLS = recordColumns('id, company_id, name, color, created_at, updated_at');

export const toLabel = (l: LabelRecord): LabelResponseDto => ({
  id: l.id,
  companyId: l.companyId,
  name: l.name,
  color: l.color,
  createdAt: isoRequired(l.createdAt),
  updatedAt: isoRequired(l.updatedAt),
});

/** The labels table and the issue_labels links. */
@Injectable()
export class LabelsRepository extends CompanyScopedRepository {
  constructor(db: Db) {
    super(db);
  }

  listOfCompany(companyId: string): Promise<LabelRecord[]> {
    return this.rows<LabelRecord>(companyId, `SELECT ${COLS} FROM labels WHERE company_id = $1 ORDER BY lower(name)`);
  }

  /** A new label; null when the name is taken (unique index). */
  insert(companyId: string, name: string, color: string | null): Promise<LabelRecord | null> {
    return this.row<LabelRecord>(
      companyId,
      `INSERT INTO labels (company_id, name, color) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING RETURNING ${COLS}`,
      [name, color],
    );
  }

  /** Whether another label of the company has this name (case-insensitively). */
  async nameTakenByOther(companyId: string, name: string, labelId: string): Promise<boolean> {
    const [clash] = await this.rows(companyId, `SELECT 1 FROM labels WHERE company_id = $1 AND lower(name) = lower($2) AND id <> $3`, [
      name,
      labelId,
    ]);
    return !!clash;
  }

  /** Sets the name when given and the color when `setColor`. */
  async update(
    companyId: string,
    labelId: string,
    v: { name: string | null; setColor: boolean; color: string | null },
  ): Promise<LabelRecord> {
    const [row] = await this.returning<LabelRecord>(
      companyId,
      `UPDATE labels SET name = coalesce($3, name), color = CASE WHEN $4 THEN $5 ELSE color END, updated_at = now()
        WHERE company_id = $1 AND id = $2 RETURNING ${COLS}`,
      [labelId, v.name, v.setColor, v.color],
    );
    return row;
  }

  async delete(companyId: string, labelId: string): Promise<void> {
    await this.rows(companyId, `DELETE FROM labels WHERE company_id = $1 AND id = $2`, [labelId]);
  }

  find(companyId: string, labelId: string): Promise<LabelRecord | null> {
    return this.row<LabelRecord>(companyId, `SELECT ${COLS} FROM labels WHERE company_id = $1 AND id = $2`, [labelId]);
  }

  /** How many of `ids` are labels of the company. */
  async countOfCompany(companyId: string, ids: string[]): Promise<number> {
    const rows = await this.rows<{ id: string }>(companyId, `SELECT id FROM labels WHERE company_id = $1 AND id = ANY($2::uuid[])`, [ids]);
    return rows.length;
  }

  /** The issue's labels become exactly `ids` (labels of its company). */
  async replaceOfIssue(issue: { id: string; companyId: string }, ids: string[]): Promise<void> {
    await this.rows(
      issue.companyId,
      `DELETE FROM issue_labels WHERE company_id = $1 AND issue_id = $2 AND NOT (label_id = ANY($3::uuid[]))`,
      [issue.id, ids],
    );
    if (ids.length) {
      await this.rows(
        issue.companyId,
        `INSERT INTO issue_labels (issue_id, label_id, company_id) SELECT $2, l, $1 FROM unnest($3::uuid[]) AS l ON CONFLICT DO NOTHING`,
        [issue.id, ids],
      );
    }
  }

  /** Links of a package import as `[issueId, labelId]`. */
  async insertImported(companyId: string, links: Array<[string, string]>): Promise<void> {
    await this.rows(
      companyId,
      `INSERT INTO issue_labels (issue_id, label_id, company_id) SELECT x.i, x.l, $1::uuid FROM unnest($2::uuid[], $3::uuid[]) AS x(i, l) ON CONFLICT DO NOTHING`,
      [links.map((x) => x[0]), links.map((x) => x[1])],
    );
  }
}
