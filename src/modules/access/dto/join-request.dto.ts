import { ApiProperty } from '@nestjs/swagger';
import { IsIn, IsNotEmpty, IsOptional, IsString, MaxLength } from 'class-validator';

export const JOIN_REQUEST_STATUSES = ['pending_approval', 'approved', 'rejected'] as const;

export class ListJoinRequestsQueryDto {
  /** `pending` is an alias of `pending_approval` */
  @IsOptional() @IsIn([...JOIN_REQUEST_STATUSES, 'pending']) status?: string;
  @IsOptional() @IsIn(['human', 'agent']) 'request-type'?: 'human' | 'agent';
  /** alias of `request-type` */
  @IsOptional() @IsIn(['human', 'agent']) requestType?: 'human' | 'agent';
}

export class DecideJoinRequestDto {
  @IsOptional() @IsString() @MaxLength(2000) note?: string;
}

export class ClaimApiKeyDto {
  /** the secret returned once when the invite was accepted */
  @IsString() @IsNotEmpty() @MaxLength(200) claimSecret: string;
}

export class JoinRequestResponseDto {
  id: string;
  companyId: string;
  @ApiProperty({ nullable: true, type: String }) inviteId: string | null;
  @ApiProperty({ enum: ['human', 'agent'] }) requestType: string;
  @ApiProperty({ enum: JOIN_REQUEST_STATUSES }) status: string;
  @ApiProperty({ nullable: true, type: String }) requestingUserId: string | null;
  @ApiProperty({ nullable: true, type: String }) agentName: string | null;
  @ApiProperty({ nullable: true, type: String }) adapterType: string | null;
  @ApiProperty({ nullable: true, type: String }) capabilities: string | null;
  @ApiProperty({ nullable: true, type: String }) createdAgentId: string | null;
  @ApiProperty({ nullable: true, type: String }) decidedByUserId: string | null;
  @ApiProperty({ nullable: true, type: String }) decidedAt: string | null;
  @ApiProperty({ nullable: true, type: String }) decisionNote: string | null;
  @ApiProperty({ nullable: true, type: String }) apiKeyClaimedAt: string | null;
  createdAt: string;
  updatedAt: string;
}

export class AcceptedJoinRequestDto extends JoinRequestResponseDto {
  /** shown once; exchange it for an API key at POST /api/join-requests/{id}/claim-api-key after approval */
  claimSecret: string;
}

export class ClaimedApiKeyDto {
  /** key id */
  id: string;
  agentId: string;
  companyId: string;
  name: string;
  /** the agent API key, shown once */
  token: string;
  createdAt: string;
}
