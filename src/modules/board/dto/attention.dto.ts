import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import { IsBoolean, IsIn, IsInt, IsISO8601, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';

export const ATTENTION_KINDS = [
  'approval',
  'join_request',
  'issue_thread_interaction',
  'blocker_attention',
  'failed_run',
  'budget_alert',
  'agent_error_alert',
] as const;
export type AttentionKind = (typeof ATTENTION_KINDS)[number];

const bool = () =>
  Transform(({ value }) => (value === 'true' || value === true ? true : value === 'false' || value === false ? false : value));

export class AttentionQueryDto {
  /** also the items the calling board user dismissed or snoozed (with their `dismissal`) */
  @IsOptional() @bool() @IsBoolean() includeDismissed?: boolean;
  /** accepted for the board UI; every open item is listed either way */
  @IsOptional() @bool() @IsBoolean() all?: boolean;
  /** accepted for the board UI: nothing is archived here, so `true` lists nothing */
  @IsOptional() @bool() @IsBoolean() archived?: boolean;
  /** only items whose last activity is at or after this time */
  @IsOptional() @IsISO8601() activitySince?: string;
  /** only items whose last activity is before this time */
  @IsOptional() @IsISO8601() activityUntil?: string;
  /** only items of this source kind */
  @ApiPropertyOptional({ enum: ATTENTION_KINDS }) @IsOptional() @IsIn(ATTENTION_KINDS) queue?: AttentionKind;
  /** `rank` (default: severity, then newest activity) or `recent` (newest activity first) */
  @ApiPropertyOptional({ enum: ['rank', 'recent'] }) @IsOptional() @IsIn(['rank', 'recent']) sort?: 'rank' | 'recent';
  /** the `nextCursor` of the previous page */
  @IsOptional() @IsString() @MaxLength(20) cursor?: string;
  /** page size, default 100 */
  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(500) limit?: number;
}

/** What an item is about: an issue, an approval, a join request, a run, an agent or a budget incident. */
export class AttentionSubjectDto {
  @ApiProperty({ enum: ['issue', 'approval', 'join_request', 'heartbeat_run', 'agent', 'budget_incident'] }) kind: string;
  id: string;
  companyId: string;
  title: string;
  /** the issue identifier (issue subjects) */
  @ApiProperty({ nullable: true, type: String }) identifier: string | null;
  @ApiProperty({ nullable: true, type: String }) status: string | null;
  /** where the board UI shows it */
  @ApiProperty({ nullable: true, type: String }) href: string | null;
  @ApiProperty({ type: 'object', additionalProperties: true }) metadata: Record<string, unknown>;
}

export class AttentionProjectDto {
  id: string;
  name: string;
  urlKey: string;
  @ApiProperty({ nullable: true, type: String }) color: string | null;
  @ApiProperty({ nullable: true, type: String }) icon: null;
}

export class AttentionDismissalDto {
  @ApiProperty({ enum: ['dismiss', 'snooze'] }) kind: string;
  @ApiProperty({ nullable: true, type: String }) snoozedUntil: string | null;
  updatedAt: string;
}

/** One thing that waits for the board. */
export class AttentionItemDto {
  /** `<sourceKind>:<subject id>` */
  id: string;
  companyId: string;
  @ApiProperty({ enum: ATTENTION_KINDS }) sourceKind: AttentionKind;
  subject: AttentionSubjectDto;
  /** why it needs the board now */
  whyNow: string;
  /** the rule that put it here and the one that takes it away */
  entryRule: string;
  exitRule: string;
  @ApiProperty({ enum: ['critical', 'high', 'medium', 'low'] }) severity: string;
  /** the item's latest activity */
  activityAt: string;
  createdAt: string;
  updatedAt: string;
  @ApiProperty({ nullable: true, type: AttentionSubjectDto }) relatedIssue: AttentionSubjectDto | null;
  @ApiProperty({ nullable: true, type: AttentionProjectDto }) project: AttentionProjectDto | null;
  /** source-specific facts (`kind` names the source) */
  @ApiProperty({ type: 'object', additionalProperties: true }) detail: Record<string, unknown>;
  /** the inbox-dismissals item key that hides it (POST …/inbox-dismissals) */
  dismissalKey: string;
  @ApiProperty({ nullable: true, type: AttentionDismissalDto }) dismissal: AttentionDismissalDto | null;
  /** always []: resolving happens on the item's own page */
  @ApiProperty({ type: [Object] }) decisionVerbs: never[];
  /** always false: nothing is resolved inline from the queue */
  inlineResolvable: boolean;
  /** always []: one queue per source kind (see `queue`) */
  @ApiProperty({ type: [String] }) queues: string[];
  /** 1-based position in the list's order */
  rank: number;
}

export class AttentionListDto {
  companyId: string;
  generatedAt: string;
  /** items matching the filters (all pages) */
  totalCount: number;
  /** of those, the ones not dismissed or snoozed by the caller */
  deskBadgeCount: number;
  @ApiProperty({ nullable: true, type: String }) nextCursor: string | null;
  @ApiProperty({ type: 'object', additionalProperties: { type: 'integer' } }) countsBySourceKind: Record<string, number>;
  @ApiProperty({ type: [AttentionItemDto] }) items: AttentionItemDto[];
}
