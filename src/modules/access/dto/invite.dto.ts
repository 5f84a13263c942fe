import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsIn, IsInt, IsNotEmpty, IsOptional, IsString, Max, MaxLength, Min, ValidateIf } from 'class-validator';
import { MEMBERSHIP_ROLES, MembershipRole } from '../permission-keys';

export const JOIN_TYPES = ['human', 'agent', 'both'] as const;
export type AllowedJoinTypes = (typeof JOIN_TYPES)[number];

export class CreateInviteDto {
  /** membership role of a human who accepts (default member) */
  @ApiPropertyOptional({ enum: MEMBERSHIP_ROLES })
  @IsOptional()
  @IsIn(MEMBERSHIP_ROLES)
  role?: MembershipRole;
  /** who may accept: humans, agents or both (default both) */
  @ApiPropertyOptional({ enum: JOIN_TYPES })
  @IsOptional()
  @IsIn(JOIN_TYPES)
  allowedJoinTypes?: AllowedJoinTypes;
  /** validity in hours, 1 to 720 (default 168, one week) */
  @IsOptional() @IsInt() @Min(1) @Max(720) expiresInHours?: number;
  /** shown to the recipient */
  @IsOptional() @IsString() @MaxLength(2000) message?: string;
  /** the board UI's name of `role` (null: not given); `role` wins when both are given */
  @ApiPropertyOptional({ enum: MEMBERSHIP_ROLES, nullable: true })
  @IsOptional()
  @ValidateIf((_, v) => v !== null)
  @IsIn(MEMBERSHIP_ROLES)
  humanRole?: MembershipRole | null;
  /** the board UI's name of `message` (null: none) */
  @IsOptional() @ValidateIf((_, v) => v !== null) @IsString() @MaxLength(2000) agentMessage?: string | null;
}

export class AcceptInviteDto {
  /** `human` (needs a signed-in user) or `agent`; default: human for a signed-in user, else agent */
  @ApiPropertyOptional({ enum: ['human', 'agent'] })
  @IsOptional()
  @IsIn(['human', 'agent'])
  requestType?: 'human' | 'agent';
  /** required for agent requests */
  @IsOptional() @IsString() @IsNotEmpty() @MaxLength(200) agentName?: string;
  @IsOptional() @IsString() @IsNotEmpty() @MaxLength(100) adapterType?: string;
  @IsOptional() @IsString() @MaxLength(10_000) capabilities?: string;
}

export class TestResolutionQueryDto {
  /** the invite URL as the recipient sees it */
  @IsString() @IsNotEmpty() @MaxLength(4000) url: string;
}

export class InvitePromptDto {
  /** suggested name for the joining agent */
  @IsOptional() @IsString() @IsNotEmpty() @MaxLength(200) agentName?: string;
  @IsOptional() @IsString() @IsNotEmpty() @MaxLength(100) adapterType?: string;
  @IsOptional() @IsInt() @Min(1) @Max(720) expiresInHours?: number;
  /** extra instructions appended to the prompt */
  @IsOptional() @IsString() @MaxLength(4000) note?: string;
}

export class InviteResponseDto {
  id: string;
  companyId: string;
  @ApiProperty({ enum: MEMBERSHIP_ROLES }) role: string;
  @ApiProperty({ enum: JOIN_TYPES }) allowedJoinTypes: string;
  @ApiProperty({ enum: ['active', 'revoked', 'expired'] }) status: string;
  @ApiProperty({ nullable: true, type: String }) message: string | null;
  /** first characters of the token, to recognise an invite */
  tokenPrefix: string;
  expiresAt: string;
  @ApiProperty({ nullable: true, type: String }) revokedAt: string | null;
  @ApiProperty({ nullable: true, type: String }) createdByUserId: string | null;
  @ApiProperty({ nullable: true, type: String }) createdByAgentId: string | null;
  createdAt: string;
  /** the same as `status`, under the name the board UI reads */
  @ApiProperty({ enum: ['active', 'revoked', 'expired'] }) state: string;
  /** always `company_join`: an invite joins the company */
  @ApiProperty({ enum: ['company_join'] }) inviteType: 'company_join';
  /** the role a human joins with (`role`); null for agent-only invites */
  @ApiProperty({ nullable: true, type: String }) humanRole: string | null;
  /** the same as `message` */
  @ApiProperty({ nullable: true, type: String }) inviteMessage: string | null;
  /** the same as `createdByUserId` */
  @ApiProperty({ nullable: true, type: String }) invitedByUserId: string | null;
}

export class InviterDto {
  id: string;
  name: string;
  @ApiProperty({ nullable: true, type: String }) email: string | null;
}

/** An invite on the invites page, with who sent it. */
export class InviteListItemDto extends InviteResponseDto {
  @ApiProperty({ nullable: true, type: InviterDto }) invitedByUser: InviterDto | null;
}

/** GET invites as the board UI reads it (the request carries `X-Paperclip-Route`): a page and the offset of the next. */
export class InvitesPageDto {
  @ApiProperty({ type: [InviteListItemDto] }) invites: InviteListItemDto[];
  @ApiProperty({ nullable: true, type: Number }) nextOffset: number | null;
}

export class InvitesPageQueryDto {
  /** page size (board UI page only; default 50) */
  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(200) limit?: number;
  @IsOptional() @Type(() => Number) @IsInt() @Min(0) @Max(1_000_000) offset?: number;
}

export class CreatedInviteResponseDto extends InviteResponseDto {
  /** shown once */
  token: string;
  inviteUrl: string;
  onboardingTextUrl: string;
}

export class PublicInviteDto {
  id: string;
  companyId: string;
  companyName: string;
  @ApiProperty({ nullable: true, type: String }) companyDescription: string | null;
  @ApiProperty({ nullable: true, type: String }) companyLogoUrl: string | null;
  @ApiProperty({ enum: MEMBERSHIP_ROLES }) role: string;
  @ApiProperty({ enum: JOIN_TYPES }) allowedJoinTypes: string;
  @ApiProperty({ enum: ['active'] }) status: string;
  @ApiProperty({ nullable: true, type: String }) message: string | null;
  expiresAt: string;
  onboardingUrl: string;
  onboardingTextUrl: string;
  skillsIndexUrl: string;
  acceptUrl: string;
}

export class InvitePromptResponseDto {
  invite: CreatedInviteResponseDto;
  /** paste into the agent's conversation */
  prompt: string;
}

export class TestResolutionResponseDto {
  url: string;
  /** the URL carries this invite's token */
  tokenMatches: boolean;
  /** the URL's origin is this service's public URL */
  originMatches: boolean;
  /** both: the URL leads the recipient to this invite */
  resolves: boolean;
  expectedOrigin: string;
  @ApiProperty({ enum: ['active', 'revoked', 'expired'] }) inviteStatus: string;
}
