import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsBoolean, IsIn, IsInt, IsOptional, IsString, IsUUID, Max, MaxLength, Min } from 'class-validator';

export const ACTION_REQUEST_FILTERS = ['pending', 'approved', 'rejected', 'expired', 'executed', 'failed', 'all'] as const;

export class ListActionRequestsQueryDto {
  /** default pending */
  @ApiPropertyOptional({ enum: ACTION_REQUEST_FILTERS })
  @IsOptional()
  @IsIn(ACTION_REQUEST_FILTERS)
  status?: (typeof ACTION_REQUEST_FILTERS)[number];
  @ApiPropertyOptional({ minimum: 1, maximum: 200, default: 100 })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(200)
  limit?: number;
}

export class ApproveActionRequestDto {
  /** the request's company (the board UI sends it); checked when given */
  @IsOptional() @IsUUID() companyId?: string;
  /** "always allow" is not offered: approve each call, or change the profile's policy */
  @IsOptional() @IsBoolean() rememberAction?: boolean;
}

export class DeclineActionRequestDto {
  @IsOptional() @IsUUID() companyId?: string;
  /** told to the agent */
  @ApiPropertyOptional({ nullable: true, type: String }) @IsOptional() @IsString() @MaxLength(1000) reason?: string | null;
}

export class ActionRequestDto {
  id: string;
  companyId: string;
  agentId: string;
  @ApiProperty({ nullable: true, type: String }) runId: string | null;
  connectionId: string;
  toolName: string;
  /** the call's arguments, secrets redacted */
  @ApiProperty({ type: Object }) arguments: Record<string, unknown>;
  @ApiProperty({ enum: ['pending', 'approved', 'rejected', 'expired', 'executed', 'failed'] }) status: string;
  /** what the board sees: the tool and its arguments */
  previewMarkdown: string;
  @ApiProperty({ nullable: true, type: String }) issueId: null;
  @ApiProperty({ nullable: true, type: String }) interactionId: null;
  @ApiProperty({ nullable: true, type: String }) approvalId: null;
  @ApiProperty({ nullable: true, type: String }) decisionReason: string | null;
  @ApiProperty({ nullable: true, type: String }) decidedByUserId: string | null;
  @ApiProperty({ nullable: true, type: String }) decidedAt: string | null;
  expiresAt: string;
  @ApiProperty({ nullable: true, type: String }) executedAt: string | null;
  createdAt: string;
  updatedAt: string;
}

export class ActionRequestItemDto {
  @ApiProperty({ type: ActionRequestDto }) request: ActionRequestDto;
  connectionId: string;
  connectionName: string;
  applicationId: string;
  applicationName: string;
  toolName: string;
  @ApiProperty({ nullable: true, type: String }) toolTitle: string | null;
  agentId: string;
  @ApiProperty({ nullable: true, type: String }) runId: string | null;
}

export class ActionRequestListDto {
  @ApiProperty({ type: [ActionRequestItemDto] }) actionRequests: ActionRequestItemDto[];
}
