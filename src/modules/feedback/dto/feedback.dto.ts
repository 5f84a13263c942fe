import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsBoolean, IsIn, IsISO8601, IsOptional, IsString, IsUUID, MaxLength, ValidateIf } from 'class-validator';

export const FEEDBACK_TARGET_TYPES = ['comment', 'document_revision', 'run'] as const;
export type FeedbackTargetType = (typeof FEEDBACK_TARGET_TYPES)[number];
export const FEEDBACK_VOTES = ['up', 'down'] as const;
export const FEEDBACK_STATUSES = ['local', 'shared'] as const;

const bool = ({ value }: { value: unknown }) => (value === 'true' ? true : value === 'false' ? false : value);

/** A board user's vote on agent output. Voting again on the same target replaces the caller's vote. */
export class CreateFeedbackVoteDto {
  @ApiProperty({ enum: FEEDBACK_TARGET_TYPES })
  @IsIn(FEEDBACK_TARGET_TYPES)
  targetType: FeedbackTargetType;
  /** id of the comment, document revision or heartbeat run (of this company; 422 otherwise) */
  @IsUUID() targetId: string;
  @ApiProperty({ enum: FEEDBACK_VOTES })
  @IsIn(FEEDBACK_VOTES)
  vote: 'up' | 'down';
  /** optional free text (up to 4000 characters); null clears it on a re-vote */
  @ApiPropertyOptional({ nullable: true, type: String, maxLength: 4000 })
  @IsOptional()
  @ValidateIf((_, v) => v !== null)
  @IsString()
  @MaxLength(4000)
  note?: string | null;
}

export class FeedbackTraceQueryDto {
  @ApiPropertyOptional({ enum: FEEDBACK_TARGET_TYPES })
  @IsOptional()
  @IsIn(FEEDBACK_TARGET_TYPES)
  targetType?: FeedbackTargetType;
  @ApiPropertyOptional({ enum: FEEDBACK_VOTES })
  @IsOptional()
  @IsIn(FEEDBACK_VOTES)
  vote?: 'up' | 'down';
  /** `shared`: recorded while the company consented to feedback sharing (and the consent still holds); `local` otherwise */
  @ApiPropertyOptional({ enum: FEEDBACK_STATUSES })
  @IsOptional()
  @IsIn(FEEDBACK_STATUSES)
  status?: 'local' | 'shared';
  @IsOptional() @IsUUID() issueId?: string;
  /** traces whose issue belongs to this project */
  @IsOptional() @IsUUID() projectId?: string;
  /** created at or after (ISO 8601) */
  @IsOptional() @IsISO8601({ strict: true }) from?: string;
  /** created before (ISO 8601) */
  @IsOptional() @IsISO8601({ strict: true }) to?: string;
  /** only traces the company's consent lets leave the instance (status `shared`) */
  @ApiPropertyOptional({ type: Boolean })
  @IsOptional()
  @Transform(bool)
  @IsBoolean()
  sharedOnly?: boolean;
  /** add `payload`: the rated content (comment body, revision body, run result) */
  @ApiPropertyOptional({ type: Boolean })
  @IsOptional()
  @Transform(bool)
  @IsBoolean()
  includePayload?: boolean;
}

export class FeedbackTraceDto {
  id: string;
  companyId: string;
  @ApiProperty({ enum: FEEDBACK_TARGET_TYPES }) targetType: string;
  targetId: string;
  @ApiProperty({ enum: FEEDBACK_VOTES }) vote: string;
  @ApiProperty({ nullable: true, type: String }) note: string | null;
  @ApiProperty({ enum: FEEDBACK_STATUSES, description: 'shared: recorded under the company feedback-sharing consent' }) status: string;
  @ApiProperty({ nullable: true, type: String }) issueId: string | null;
  @ApiProperty({ nullable: true, type: String }) projectId: string | null;
  /** the agent whose output was rated, when known */
  @ApiProperty({ nullable: true, type: String }) agentId: string | null;
  /** the run that produced the output, when known */
  @ApiProperty({ nullable: true, type: String }) runId: string | null;
  voterUserId: string;
  createdAt: string;
  updatedAt: string;
  /** the rated content (only with includePayload=true) */
  @ApiPropertyOptional({ type: Object }) payload?: Record<string, unknown>;
}
