import { Injectable } from '@nestjs/common';
import { notFound } from '../../common/errors/domain-error';
import { isUuid } from '../../common/http/uuid';
import { CreateLabelDto, LabelResponseDto, UpdateLabelDto } from './dto/label.dto';
import { issueError } from './issues.errors';
import { LabelRecord, LabelsRepository, toLabel } from './labels.repository';

/** Company labels; names are unique per company, case-insensitively (409 on collision). */
@Injectable()
export class LabelsService {
  constructor(private readonly labels: LabelsRepository) {}

  async list(companyId: string): Promise<LabelResponseDto[]> {
    const rows = await this.labels.listOfCompany(companyId);
    return rows.map(toLabel);
  }

  async create(companyId: string, dto: CreateLabelDto): Promise<LabelResponseDto> {
    const row = await this.labels.insert(companyId, dto.name.trim(), dto.color?.toLowerCase() ?? null);
    if (!row) throw this.nameTaken(dto.name);
    return toLabel(row);
  }

  async update(companyId: string, labelId: string, dto: UpdateLabelDto): Promise<LabelResponseDto> {
    await this.find(companyId, labelId);
    if (dto.name !== undefined) {
      if (await this.labels.nameTakenByOther(companyId, dto.name.trim(), labelId)) throw this.nameTaken(dto.name);
    }
    const row = await this.labels.update(companyId, labelId, {
      name: dto.name?.trim() ?? null,
      setColor: dto.color !== undefined,
      color: dto.color?.toLowerCase() ?? null,
    });
    return toLabel(row);
  }

  /** Removes the label from every issue too; returns the deleted label. */
  async remove(companyId: string, labelId: string): Promise<LabelResponseDto> {
    const before = await this.find(companyId, labelId);
    await this.labels.delete(companyId, labelId);
    return toLabel(before);
  }

  private async find(companyId: string, labelId: string): Promise<LabelRecord> {
    const row = isUuid(labelId) ? await this.labels.find(companyId, labelId) : null;
    if (!row) throw notFound('Label');
    return row;
  }

  private nameTaken(name: string) {
    return issueError('label_name_taken', `A label named "${name.trim()}" already exists in this company`);
  }
}
