import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString, MaxLength } from 'class-validator';
import { APPROVAL_TYPES } from '../approval.entity';

export const APPROVAL_STATUSES = ['pending', 'approved', 'rejected', 'cancelled'] as const;

export class ListApprovalsQueryDto {
  @ApiPropertyOptional({ enum: APPROVAL_STATUSES }) @IsOptional() @IsIn(APPROVAL_STATUSES) status?: string;
  @ApiPropertyOptional({ enum: APPROVAL_TYPES }) @IsOptional() @IsIn(APPROVAL_TYPES) type?: string;
}

export class DecideApprovalDto {
  /** why the board decided so */
  @IsOptional() @IsString() @MaxLength(10_000) decisionNote?: string;
}

export class ApprovalResponseDto {
  id: string;
  companyId: string;
  @ApiProperty({ enum: APPROVAL_TYPES }) type: string;
  @ApiProperty({ enum: APPROVAL_STATUSES }) status: string;
  @ApiProperty({ nullable: true, type: String, description: 'the agent a hire approval or an agent change suggestion concerns' }) agentId:
    string | null;
  @ApiProperty({ description: 'hire: the requested configuration snapshot; suggestions: the proposed change and its reason' })
  payload: Record<string, unknown>;
  sourceIssueIds: string[];
  @ApiProperty({ enum: ['user', 'agent', 'system'] }) requestedByActorType: string;
  requestedByActorId: string;
  @ApiProperty({ nullable: true, type: String }) decisionNote: string | null;
  @ApiProperty({ nullable: true, type: String }) decidedByUserId: string | null;
  @ApiProperty({ nullable: true, type: String }) decidedAt: string | null;
  createdAt: string;
  updatedAt: string;
}
