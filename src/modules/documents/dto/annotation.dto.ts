import { ApiProperty } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  IsBoolean,
  IsIn,
  IsInt,
  IsObject,
  IsNotEmpty,
  IsOptional,
  IsString,
  IsUUID,
  Length,
  MaxLength,
  Min,
  ValidateNested,
} from 'class-validator';
import { QueryBoolean } from './query-boolean';
import { RefersTo } from '../../../common/references/refers-to.decorator';

export class QuoteSelectorDto {
  /** the selected text */
  @IsString() @IsNotEmpty() @MaxLength(20_000) exact: string;
  @IsOptional() @IsString() @MaxLength(2000) prefix?: string;
  @IsOptional() @IsString() @MaxLength(2000) suffix?: string;
}

export class PositionSelectorDto {
  @IsInt() @Min(0) normalizedStart: number;
  @IsInt() @Min(0) normalizedEnd: number;
  @IsInt() @Min(0) markdownStart: number;
  @IsInt() @Min(0) markdownEnd: number;
}

export class AnnotationSelectorDto {
  @IsObject() @ValidateNested() @Type(() => QuoteSelectorDto) quote: QuoteSelectorDto;
  @IsOptional() @IsObject() @ValidateNested() @Type(() => PositionSelectorDto) position?: PositionSelectorDto;
}

export class CreateAnnotationThreadDto {
  /** must be the document's latest revision (409 otherwise, naming the current one) */
  @RefersTo('document_revision') @IsUUID() baseRevisionId: string;
  @IsInt() @Min(1) baseRevisionNumber: number;
  @IsObject() @ValidateNested() @Type(() => AnnotationSelectorDto) selector: AnnotationSelectorDto;
  /** first comment, 1..20,000 characters */
  @IsString() @Length(1, 20_000) body: string;
}

export class AnnotationCommentDto {
  /** 1..20,000 characters */
  @IsString() @Length(1, 20_000) body: string;
}

export class UpdateAnnotationThreadDto {
  @IsIn(['open', 'resolved']) status: 'open' | 'resolved';
}

export class ListAnnotationsQueryDto {
  @IsOptional() @IsIn(['open', 'resolved', 'all']) status?: 'open' | 'resolved' | 'all';
  @IsOptional() @QueryBoolean() @IsBoolean() includeComments?: boolean;
}

export class AnnotationCommentResponseDto {
  id: string;
  threadId: string;
  body: string;
  @ApiProperty({ nullable: true, type: String }) authorAgentId: string | null;
  @ApiProperty({ nullable: true, type: String }) authorUserId: string | null;
  createdAt: string;
}

export class AnnotationThreadResponseDto {
  id: string;
  companyId: string;
  issueId: string;
  documentId: string;
  documentKey: string;
  status: string;
  /** active | shifted | orphaned, recomputed on every new revision */
  anchorState: string;
  baseRevisionId: string;
  baseRevisionNumber: number;
  /** the revision the current selector refers to */
  anchorRevisionId: string;
  anchorRevisionNumber: number;
  @ApiProperty({ type: Object }) selector: Record<string, unknown>;
  @ApiProperty({ type: Object }) originalSelector: Record<string, unknown>;
  @ApiProperty({ nullable: true, type: String }) createdByAgentId: string | null;
  @ApiProperty({ nullable: true, type: String }) createdByUserId: string | null;
  @ApiProperty({ nullable: true, type: String }) resolvedAt: string | null;
  @ApiProperty({ nullable: true, type: String }) resolvedByAgentId: string | null;
  @ApiProperty({ nullable: true, type: String }) resolvedByUserId: string | null;
  commentCount: number;
  lastActivityAt: string;
  createdAt: string;
  updatedAt: string;
  comments?: AnnotationCommentResponseDto[];
}
