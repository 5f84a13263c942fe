import { ApiProperty } from '@nestjs/swagger';

export class FidelityEntryDto {
  /** the kind of record (`agents`, `costEvents`, …) */
  kind: string;
  /** how many the company holds */
  count: number;
  /** kept: how the package carries them; dropped: why it does not */
  note: string;
}

export class FidelityWarningDto {
  /** `<kind>_not_exported`, `secret_values_not_exported`, `issues_optional` */
  code: string;
  @ApiProperty({ enum: ['warning', 'info'] }) severity: 'warning' | 'info';
  message: string;
}

/** What an export of the company keeps and drops, counted on its records now. */
export class ExportFidelityDto {
  @ApiProperty({ example: 'export-fidelity/v1' }) schema: string;
  companyId: string;
  generatedAt: string;
  /** records of each kind the company holds */
  @ApiProperty({ type: 'object', additionalProperties: { type: 'integer' } }) counts: Record<string, number>;
  @ApiProperty({ type: [FidelityEntryDto] }) kept: FidelityEntryDto[];
  @ApiProperty({ type: [FidelityEntryDto] }) dropped: FidelityEntryDto[];
  /** one per dropped kind the company has records of, and notes on secrets and issues */
  @ApiProperty({ type: [FidelityWarningDto] }) warnings: FidelityWarningDto[];
}
