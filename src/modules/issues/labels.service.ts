import { Injectable } from '@nestjs/common';
import { conflict, notFound } from '../../common/errors/domain-error';
import { isUuid } from '../../common/http/uuid';
import { Db } from '../../database/db.service';
import { returning } from './returning';
import { CreateLabelDto, LabelResponseDto, UpdateLabelDto } from './dto/label.dto';

interface LabelRow {
  id: string;
  company_id: string;
  name: string;
  color: string | null;
  created_at: Date;
  updated_at: Date;
}

const COLS = 'id, company_id, name, color, created_at, updated_at';

const toLabel = (l: LabelRow): LabelResponseDto => ({
  id: l.id,
  companyId: l.company_id,
  name: l.name,
  color: l.color,
  createdAt: new Date(l.created_at).toISOString(),
  updatedAt: new Date(l.updated_at).toISOString(),
});

/** Company labels; names are unique per company, case-insensitively (409 on collision). */
@Injectable()
export class LabelsService {
  constructor(private readonly db: Db) {}

  async list(companyId: string): Promise<LabelResponseDto[]> {
    const rows = await this.db.query<LabelRow>(`SELECT ${COLS} FROM labels WHERE company_id = $1 ORDER BY lower(name)`, [companyId]);
    return rows.map(toLabel);
  }

  async create(companyId: string, dto: CreateLabelDto): Promise<LabelResponseDto> {
    const [row] = await this.db.query<LabelRow>(
      `INSERT INTO labels (company_id, name, color) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING RETURNING ${COLS}`,
      [companyId, dto.name.trim(), dto.color?.toLowerCase() ?? null],
    );
    if (!row) throw this.nameTaken(dto.name);
    return toLabel(row);
  }

  async update(companyId: string, labelId: string, dto: UpdateLabelDto): Promise<LabelResponseDto> {
    await this.find(companyId, labelId);
    if (dto.name !== undefined) {
      const [clash] = await this.db.query(`SELECT 1 FROM labels WHERE company_id = $1 AND lower(name) = lower($2) AND id <> $3`, [
        companyId,
        dto.name.trim(),
        labelId,
      ]);
      if (clash) throw this.nameTaken(dto.name);
    }
    const [row] = await returning<LabelRow>(
      this.db,
      `UPDATE labels SET name = coalesce($3, name), color = CASE WHEN $4 THEN $5 ELSE color END, updated_at = now()
        WHERE id = $1 AND company_id = $2 RETURNING ${COLS}`,
      [labelId, companyId, dto.name?.trim() ?? null, dto.color !== undefined, dto.color?.toLowerCase() ?? null],
    );
    return toLabel(row);
  }

  /** Removes the label from every issue too; returns the deleted label. */
  async remove(companyId: string, labelId: string): Promise<LabelResponseDto> {
    const before = await this.find(companyId, labelId);
    await this.db.query(`DELETE FROM labels WHERE id = $1 AND company_id = $2`, [labelId, companyId]);
    return toLabel(before);
  }

  private async find(companyId: string, labelId: string): Promise<LabelRow> {
    const [row] = isUuid(labelId)
      ? await this.db.query<LabelRow>(`SELECT ${COLS} FROM labels WHERE id = $1 AND company_id = $2`, [labelId, companyId])
      : [];
    if (!row) throw notFound('Label');
    return row;
  }

  private nameTaken(name: string) {
    return conflict(`A label named "${name.trim()}" already exists in this company`, 'label_name_taken');
  }
}
