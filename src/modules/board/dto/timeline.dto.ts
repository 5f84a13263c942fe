import { ApiProperty } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, IsISO8601, IsOptional, IsString, IsUUID, Max, MaxLength, Min } from 'class-validator';

export class TimelineQueryDto {
  /** window start (default: 7 days before `to`) */
  @IsOptional() @IsISO8601() from?: string;
  /** window end (default and at most: now) */
  @IsOptional() @IsISO8601() to?: string;
  /** only issues this user created, was assigned or acted on (`me`: the caller) */
  @IsOptional() @IsString() @MaxLength(200) userId?: string;
  @IsOptional() @IsUUID() goalId?: string;
  @IsOptional() @IsUUID() projectId?: string;
  @IsOptional() @IsUUID() issueId?: string;
  /** issues per page (default 100) */
  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(500) limit?: number;
  @IsOptional() @Type(() => Number) @IsInt() @Min(0) @Max(100_000) offset?: number;
}

/** Someone who acted: `user:<id>` or `agent:<id>`. */
export class TimelineActorDto {
  id: string;
  @ApiProperty({ enum: ['user', 'agent'] }) type: 'user' | 'agent';
  name: string;
  @ApiProperty({ nullable: true, type: String }) avatar: null;
}

/** A run of an agent on an issue. */
export class TimelineSpanDto {
  actorId: string;
  runId: string;
  issueId: string;
  issueIdentifier: string;
  issueTitle: string;
  /** when it started (queued runs: when queued) */
  start: string;
  /** when it ended; null while it runs */
  @ApiProperty({ nullable: true, type: String }) end: string | null;
  status: string;
  invocationSource: string;
  /** the invocation source again: the lane the UI groups by */
  laneHint: string;
  adapterType: string;
  /** the run this one retries, if any */
  @ApiProperty({ nullable: true, type: String }) retryOfRunId: string | null;
  /** the usage record the run reported, or null */
  @ApiProperty({ nullable: true, type: 'object', additionalProperties: true }) usage: Record<string, unknown> | null;
}

/** Something that happened to an issue: `created`, `status_changed` (with `status`), `commented`. */
export class TimelineEventDto {
  actorId: string;
  @ApiProperty({ enum: ['created', 'status_changed', 'commented'] }) kind: string;
  issueId: string;
  at: string;
  /** the new status of a status change */
  @ApiProperty({ nullable: true, type: String }) status: string | null;
}

/** A hand-off: someone assigned an issue to an agent (or a user). */
export class TimelineEdgeDto {
  fromActorId: string;
  toActorId: string;
  issueId: string;
  at: string;
  @ApiProperty({ enum: ['assignment'] }) kind: 'assignment';
}

export class TimelinePaginationDto {
  limit: number;
  offset: number;
  /** issues with something in the window (all pages) */
  totalIssues: number;
  hasMore: boolean;
}

export class TimelineWindowDto {
  from: string;
  to: string;
  /** true when the window was shortened (to 90 days) */
  capped: boolean;
}

export class TimelineDto {
  @ApiProperty({ type: [TimelineActorDto] }) actors: TimelineActorDto[];
  @ApiProperty({ type: [TimelineSpanDto] }) spans: TimelineSpanDto[];
  @ApiProperty({ type: [TimelineEventDto] }) events: TimelineEventDto[];
  @ApiProperty({ type: [TimelineEdgeDto] }) edges: TimelineEdgeDto[];
  pagination: TimelinePaginationDto;
  window: TimelineWindowDto;
}
