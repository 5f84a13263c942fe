import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, IsArray, IsBoolean, IsIn, IsISO8601, IsOptional, IsString, IsUUID, Matches, MaxLength } from 'class-validator';
import { RefersTo } from '../../../common/references/refers-to.decorator';

export const MEMBERSHIP_STATES = ['joined', 'left'] as const;
export type MembershipState = (typeof MEMBERSHIP_STATES)[number];

export class MembershipStateDto {
  @ApiProperty({ enum: MEMBERSHIP_STATES })
  @IsIn(MEMBERSHIP_STATES)
  state: MembershipState;
}

export class ResourceMembershipsDto {
  /** every project of the company: `joined` unless the user left it */
  @ApiProperty({ type: 'object', additionalProperties: { type: 'string', enum: [...MEMBERSHIP_STATES] } })
  projectMemberships: Record<string, MembershipState>;
  /** every non-terminated agent of the company */
  @ApiProperty({ type: 'object', additionalProperties: { type: 'string', enum: [...MEMBERSHIP_STATES] } })
  agentMemberships: Record<string, MembershipState>;
  /** last change of any of the user's memberships in the company; null if never changed */
  @ApiProperty({ nullable: true, type: String }) updatedAt: string | null;
}

export class ResourceMembershipDto {
  @ApiProperty({ enum: ['project', 'agent'] }) resourceType: 'project' | 'agent';
  resourceId: string;
  @ApiProperty({ enum: MEMBERSHIP_STATES }) state: MembershipState;
  /** null while the resource has never been left or rejoined */
  @ApiProperty({ nullable: true, type: String }) updatedAt: string | null;
}

export const SIDEBAR_SECTIONS = [
  'inbox',
  'issues',
  'goals',
  'projects',
  'agents',
  'approvals',
  'costs',
  'activity',
  'artifacts',
  'skills',
] as const;

/** Global (per user) sidebar preferences; PUT replaces the whole document (omitted fields reset to defaults). */
export class GlobalSidebarPreferencesDto {
  /** sidebar collapsed to icons (default false) */
  @IsOptional() @IsBoolean() collapsed?: boolean;
  /** company switcher order (company ids) */
  @IsOptional() @IsArray() @ArrayMaxSize(500) @IsUUID(undefined, { each: true }) companyOrder?: string[];
}

/** Per user and company; PUT replaces the whole document. Ids must be projects/agents of the company (422). */
export class CompanySidebarPreferencesDto {
  @RefersTo('project') @IsOptional() @IsArray() @ArrayMaxSize(1000) @IsUUID(undefined, { each: true }) projectOrder?: string[];
  @RefersTo('agent') @IsOptional() @IsArray() @ArrayMaxSize(1000) @IsUUID(undefined, { each: true }) agentOrder?: string[];
  /** sections shown collapsed */
  @ApiPropertyOptional({ isArray: true, enum: SIDEBAR_SECTIONS })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(SIDEBAR_SECTIONS.length)
  @IsIn(SIDEBAR_SECTIONS, { each: true })
  collapsedSections?: string[];
}

export class GlobalSidebarPreferencesResponseDto {
  collapsed: boolean;
  companyOrder: string[];
  @ApiProperty({ nullable: true, type: String }) updatedAt: string | null;
}

export class CompanySidebarPreferencesResponseDto {
  companyId: string;
  projectOrder: string[];
  agentOrder: string[];
  collapsedSections: string[];
  @ApiProperty({ nullable: true, type: String }) updatedAt: string | null;
}

export const INBOX_KINDS = ['dismiss', 'snooze'] as const;

export class CreateInboxDismissalDto {
  /** `approval:<id>`, `join:<id>`, `run:<id>` or `attention:<key>` */
  @IsString()
  @MaxLength(500)
  @Matches(/^(approval|join|run|attention):\S.*$/, { message: 'itemKey must start with approval:, join:, run: or attention:' })
  itemKey: string;
  /** default `dismiss` */
  @ApiPropertyOptional({ enum: INBOX_KINDS })
  @IsOptional()
  @IsIn(INBOX_KINDS)
  kind?: 'dismiss' | 'snooze';
  /** future timestamp; required for snooze, forbidden for dismiss */
  @IsOptional() @IsISO8601() snoozedUntil?: string;
}

export class InboxDismissalDto {
  id: string;
  companyId: string;
  userId: string;
  itemKey: string;
  @ApiProperty({ enum: INBOX_KINDS }) kind: string;
  @ApiProperty({ nullable: true, type: String }) snoozedUntil: string | null;
  createdAt: string;
  updatedAt: string;
}

export class SidebarBadgesDto {
  /** pending approvals (0 until approvals exist on the instance) */
  approvals: number;
  /** pending join requests */
  joinRequests: number;
  /** heartbeat runs that failed or timed out in the last 24 hours */
  failedRuns: number;
  /** inbox items (pending approvals and join requests, failed runs of the last 24 h) not dismissed or snoozed by the user */
  inbox: number;
}
