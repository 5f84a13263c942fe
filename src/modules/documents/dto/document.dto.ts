import { ApiProperty } from '@nestjs/swagger';
import { IsBoolean, IsIn, IsOptional, IsString, IsUUID, MaxLength, ValidateIf } from 'class-validator';
import { AnnotationThreadResponseDto } from './annotation.dto';
import { QueryBoolean } from './query-boolean';
import { RefersTo } from '../../../common/references/refers-to.decorator';

export class PutDocumentDto {
  @IsOptional() @IsString() @MaxLength(500) title?: string | null;
  /** only `markdown` */
  @IsOptional() @IsIn(['markdown']) format?: 'markdown';
  /** markdown, up to 512 KiB (UTF-8) */
  @IsString() body: string;
  @IsOptional() @IsString() @MaxLength(2000) changeSummary?: string | null;
  /** omit when creating; the current latest revision id when updating */
  @RefersTo('document_revision') @ValidateIf((_, v) => v !== undefined && v !== null) @IsUUID() baseRevisionId?: string | null;
}

export class GetDocumentQueryDto {
  /** default: true for agent callers, false for board callers */
  @IsOptional() @QueryBoolean() @IsBoolean() includeAnnotations?: boolean;
  /** include the comments of each thread (default false) */
  @IsOptional() @QueryBoolean() @IsBoolean() includeAnnotationComments?: boolean;
}

export class RedirectedFromLockedDocumentDto {
  /** the locked key the caller wrote to */
  sourceKey: string;
  /** the derived key the write went to (same as `newKey`) */
  key: string;
  newKey: string;
  lockedAt: string;
  @ApiProperty({ nullable: true, type: String }) lockedByAgentId: string | null;
  @ApiProperty({ nullable: true, type: String }) lockedByUserId: string | null;
}

export class DocumentResponseDto {
  id: string;
  companyId: string;
  issueId: string;
  key: string;
  @ApiProperty({ nullable: true, type: String }) title: string | null;
  format: string;
  body: string;
  @ApiProperty({ nullable: true, type: String }) changeSummary: string | null;
  latestRevisionId: string;
  latestRevisionNumber: number;
  @ApiProperty({ nullable: true, type: String }) lockedAt: string | null;
  @ApiProperty({ nullable: true, type: String }) lockedByAgentId: string | null;
  @ApiProperty({ nullable: true, type: String }) lockedByUserId: string | null;
  @ApiProperty({ nullable: true, type: String }) createdByAgentId: string | null;
  @ApiProperty({ nullable: true, type: String }) createdByUserId: string | null;
  @ApiProperty({ nullable: true, type: String }) updatedByAgentId: string | null;
  @ApiProperty({ nullable: true, type: String }) updatedByUserId: string | null;
  createdAt: string;
  updatedAt: string;
  /** present when an agent's write to a locked document went to a derived key */
  redirectedFromLockedDocument?: RedirectedFromLockedDocumentDto;
  /** annotation threads (GET one: agents by default, `includeAnnotations`) */
  annotations?: AnnotationThreadResponseDto[];
}

export class DocumentSummaryDto {
  id: string;
  key: string;
  @ApiProperty({ nullable: true, type: String }) title: string | null;
  format: string;
  latestRevisionId: string;
  latestRevisionNumber: number;
  @ApiProperty({ nullable: true, type: String }) lockedAt: string | null;
  updatedAt: string;
}

export class RevisionResponseDto {
  id: string;
  documentId: string;
  issueId: string;
  key: string;
  revisionNumber: number;
  @ApiProperty({ nullable: true, type: String }) title: string | null;
  format: string;
  body: string;
  @ApiProperty({ nullable: true, type: String }) changeSummary: string | null;
  @ApiProperty({ nullable: true, type: String }) baseRevisionId: string | null;
  @ApiProperty({ nullable: true, type: String }) restoredFromRevisionId: string | null;
  @ApiProperty({ nullable: true, type: String }) createdByAgentId: string | null;
  @ApiProperty({ nullable: true, type: String }) createdByUserId: string | null;
  createdAt: string;
}
