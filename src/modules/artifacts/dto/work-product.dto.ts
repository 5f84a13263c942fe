import { ApiProperty } from '@nestjs/swagger';
import { IsIn, IsObject, IsOptional, IsString, IsUrl, IsUUID, Length, MaxLength, ValidateIf } from 'class-validator';
import { RefersTo } from '../../../common/references/refers-to.decorator';

export const WORK_PRODUCT_TYPES = ['artifact', 'pull_request', 'branch', 'commit', 'preview_url', 'document', 'other'] as const;
export type WorkProductType = (typeof WORK_PRODUCT_TYPES)[number];

const URL_OPTIONS = { protocols: ['http', 'https'], require_protocol: true, require_tld: false };

export class CreateWorkProductDto {
  /** `artifact` work products appear in the company artifacts view */
  @IsIn(WORK_PRODUCT_TYPES) type: WorkProductType;
  @IsString() @Length(1, 500) title: string;
  /** http(s) URL; a work product needs a URL, an attachment of the issue, or both */
  @ValidateIf((_, v) => v !== undefined && v !== null) @IsUrl(URL_OPTIONS) @MaxLength(2000) url?: string | null;
  /** an attachment of the same issue */
  @RefersTo('attachment') @ValidateIf((_, v) => v !== undefined && v !== null) @IsUUID() attachmentId?: string | null;
  @ValidateIf((_, v) => v !== undefined && v !== null) @IsString() @MaxLength(50) status?: string | null;
  @ValidateIf((_, v) => v !== undefined && v !== null) @IsString() @MaxLength(5000) summary?: string | null;
  @ValidateIf((_, v) => v !== undefined && v !== null) @IsObject() metadata?: Record<string, unknown> | null;
}

export class UpdateWorkProductDto {
  @IsOptional() @IsIn(WORK_PRODUCT_TYPES) type?: WorkProductType;
  @IsOptional() @IsString() @Length(1, 500) title?: string;
  @ValidateIf((_, v) => v !== undefined && v !== null) @IsUrl(URL_OPTIONS) @MaxLength(2000) url?: string | null;
  @RefersTo('attachment') @ValidateIf((_, v) => v !== undefined && v !== null) @IsUUID() attachmentId?: string | null;
  @ValidateIf((_, v) => v !== undefined && v !== null) @IsString() @MaxLength(50) status?: string | null;
  @ValidateIf((_, v) => v !== undefined && v !== null) @IsString() @MaxLength(5000) summary?: string | null;
  @ValidateIf((_, v) => v !== undefined && v !== null) @IsObject() metadata?: Record<string, unknown> | null;
}

export class WorkProductResponseDto {
  id: string;
  companyId: string;
  issueId: string;
  type: string;
  title: string;
  @ApiProperty({ nullable: true, type: String }) url: string | null;
  @ApiProperty({ nullable: true, type: String }) attachmentId: string | null;
  /** the attachment's content path when an attachment is linked */
  @ApiProperty({ nullable: true, type: String }) contentPath: string | null;
  @ApiProperty({ nullable: true, type: String }) status: string | null;
  @ApiProperty({ nullable: true, type: String }) summary: string | null;
  @ApiProperty({ nullable: true, type: Object }) metadata: Record<string, unknown> | null;
  @ApiProperty({ nullable: true, type: String }) createdByAgentId: string | null;
  @ApiProperty({ nullable: true, type: String }) createdByUserId: string | null;
  createdAt: string;
  updatedAt: string;
}
