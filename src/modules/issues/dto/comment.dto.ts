import { ApiProperty } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsBoolean, IsIn, IsInt, IsNotEmpty, IsOptional, IsString, IsUUID, MaxLength, Min, ValidateIf } from 'class-validator';

export class CreateCommentDto {
  /** markdown; `@AgentName` (case-insensitive exact name) wakes that agent */
  @IsString() @IsNotEmpty() @MaxLength(100_000) body: string;
  /** a done or cancelled issue moves to todo */
  @ValidateIf((_, v) => v !== undefined) @IsBoolean() reopen?: boolean;
  /** board only: cancels the assignee's active run for this issue */
  @ValidateIf((_, v) => v !== undefined) @IsBoolean() interrupt?: boolean;
}

export class ListCommentsQueryDto {
  /** comments created after this comment (id) */
  @IsOptional() @IsUUID() after?: string;
  /** same as `after` */
  @IsOptional() @IsUUID() afterCommentId?: string;
  @IsOptional() @IsIn(['asc', 'desc']) order?: 'asc' | 'desc';
  /** positive integer, capped at 500 (default 500) */
  @IsOptional() @Type(() => Number) @IsInt() @Min(1) limit?: number;
}

export class CommentResponseDto {
  id: string;
  companyId: string;
  issueId: string;
  body: string;
  @ApiProperty({ nullable: true, type: String }) authorAgentId: string | null;
  @ApiProperty({ nullable: true, type: String }) authorUserId: string | null;
  @ApiProperty({ nullable: true, type: String }) runId: string | null;
  createdAt: string;
  updatedAt: string;
}
