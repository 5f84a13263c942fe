import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsNotEmpty,
  IsOptional,
  IsString,
  IsUUID,
  Max,
  MaxLength,
  Min,
  ValidateIf,
  ValidateNested,
} from 'class-validator';
import { ISSUE_PRIORITIES } from '../../issues/issue.types';
import { RefersTo } from '../../../common/references/refers-to.decorator';
import { OmittableNotNull, Nullable } from '../../../common/http/optional';

export const ROUTINE_STATUSES = ['active', 'paused'] as const;
export const CONCURRENCY_POLICIES = ['skip_if_active', 'always_create'] as const;
export const CATCH_UP_POLICIES = ['coalesce', 'skip_missed'] as const;
export const TRIGGER_KINDS = ['schedule', 'manual'] as const;
export const RUN_STATUSES = ['issue_created', 'skipped', 'failed'] as const;
export type RoutineStatus = (typeof ROUTINE_STATUSES)[number];
export type ConcurrencyPolicy = (typeof CONCURRENCY_POLICIES)[number];
export type CatchUpPolicy = (typeof CATCH_UP_POLICIES)[number];
export type TriggerKind = (typeof TRIGGER_KINDS)[number];
export type RunStatus = (typeof RUN_STATUSES)[number];

const MAX_TEXT = 100_000;

/** A trigger: `schedule` (a cron expression in a time zone) or `manual` (a label for run-now). */
export class CreateTriggerDto {
  @IsIn(TRIGGER_KINDS) @ApiProperty({ enum: TRIGGER_KINDS }) kind: TriggerKind;
  @Nullable() @IsString() @MaxLength(200) @ApiPropertyOptional({ nullable: true, type: String }) label?: string | null;
  /** default true */
  @OmittableNotNull() @IsBoolean() enabled?: boolean;
  /** schedule only: five fields (minute hour day-of-month month day-of-week) or an @alias such as `@daily` */
  @ValidateIf((o: CreateTriggerDto) => o.kind === 'schedule' || o.cronExpression !== undefined)
  @IsString()
  @IsNotEmpty()
  @MaxLength(200)
  cronExpression?: string;
  /** schedule only: IANA time zone, default `UTC` */
  @OmittableNotNull() @IsString() @IsNotEmpty() @MaxLength(100) timezone?: string;
}

export class UpdateTriggerDto {
  @Nullable() @IsString() @MaxLength(200) @ApiPropertyOptional({ nullable: true, type: String }) label?: string | null;
  @OmittableNotNull() @IsBoolean() enabled?: boolean;
  @OmittableNotNull() @IsString() @IsNotEmpty() @MaxLength(200) cronExpression?: string;
  @OmittableNotNull() @IsString() @IsNotEmpty() @MaxLength(100) timezone?: string;
}

class RoutineFieldsDto {
  /** the description of the issue each execution creates */
  @Nullable() @IsString() @MaxLength(MAX_TEXT) @ApiPropertyOptional({ nullable: true, type: String }) description?: string | null;
  @RefersTo('project') @Nullable() @IsUUID() @ApiPropertyOptional({ nullable: true, type: String, format: 'uuid' }) projectId?:
    string | null;
  @RefersTo('goal') @Nullable() @IsUUID() @ApiPropertyOptional({ nullable: true, type: String, format: 'uuid' }) goalId?: string | null;
  /** parent issue of each execution's issue (same company) */
  @RefersTo('issue') @Nullable() @IsUUID() @ApiPropertyOptional({ nullable: true, type: String, format: 'uuid' }) parentIssueId?:
    string | null;
  /** the folder the routine is filed in on the routines page (a routine folder of the company, or your own personal one); null: unfiled */
  @RefersTo('folder') @Nullable() @IsUUID() @ApiPropertyOptional({ nullable: true, type: String, format: 'uuid' }) folderId?: string | null;
  @OmittableNotNull() @IsIn(ISSUE_PRIORITIES) @ApiPropertyOptional({ enum: ISSUE_PRIORITIES }) priority?: string;
  @OmittableNotNull() @IsIn(ROUTINE_STATUSES) @ApiPropertyOptional({ enum: ROUTINE_STATUSES }) status?: RoutineStatus;
  /** skip_if_active (default): no new execution while the previous one's issue is open; always_create: one per firing */
  @OmittableNotNull()
  @IsIn(CONCURRENCY_POLICIES)
  @ApiPropertyOptional({ enum: CONCURRENCY_POLICIES })
  concurrencyPolicy?: ConcurrencyPolicy;
  /** coalesce (default): firings missed while the service was down become one execution; skip_missed: dropped */
  @OmittableNotNull() @IsIn(CATCH_UP_POLICIES) @ApiPropertyOptional({ enum: CATCH_UP_POLICIES }) catchUpPolicy?: CatchUpPolicy;
}

export class CreateRoutineDto extends RoutineFieldsDto {
  @IsString() @IsNotEmpty() @MaxLength(500) title: string;
  /** the agent each execution's issue is assigned to (needs task-assignment permission for it) */
  @IsUUID() assigneeAgentId: string;
  @OmittableNotNull()
  @IsArray()
  @ArrayMaxSize(20)
  @ValidateNested({ each: true })
  @Type(() => CreateTriggerDto)
  triggers?: CreateTriggerDto[];
}

export class UpdateRoutineDto extends RoutineFieldsDto {
  @OmittableNotNull() @IsString() @IsNotEmpty() @MaxLength(500) title?: string;
  @OmittableNotNull() @IsUUID() assigneeAgentId?: string;
}

export class ListRunsQueryDto {
  /** newest first; default 50, at most 500 */
  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(500) limit?: number;
}

export class IssueBriefDto {
  id: string;
  identifier: string;
  title: string;
  status: string;
  priority: string;
  updatedAt: string;
}

export class TriggerResponseDto {
  id: string;
  companyId: string;
  routineId: string;
  @ApiProperty({ enum: TRIGGER_KINDS }) kind: string;
  @ApiProperty({ nullable: true, type: String }) label: string | null;
  enabled: boolean;
  @ApiProperty({ nullable: true, type: String }) cronExpression: string | null;
  @ApiProperty({ nullable: true, type: String }) timezone: string | null;
  /** next firing (UTC); null for manual or disabled triggers and paused routines */
  @ApiProperty({ nullable: true, type: String }) nextRunAt: string | null;
  @ApiProperty({ nullable: true, type: String }) lastFiredAt: string | null;
  /** status of the last execution this trigger produced */
  @ApiProperty({ nullable: true, type: String }) lastResult: string | null;
  @ApiProperty({ nullable: true, type: String }) createdByAgentId: string | null;
  @ApiProperty({ nullable: true, type: String }) createdByUserId: string | null;
  createdAt: string;
  updatedAt: string;
}

/** One execution of a routine (a firing): the issue it created, or why it created none. */
export class RoutineRunResponseDto {
  id: string;
  companyId: string;
  routineId: string;
  @ApiProperty({ nullable: true, type: String }) triggerId: string | null;
  @ApiProperty({ enum: ['schedule', 'manual'] }) source: string;
  @ApiProperty({ enum: RUN_STATUSES }) status: string;
  triggeredAt: string;
  /** the scheduled time this execution stands for (schedule source) */
  @ApiProperty({ nullable: true, type: String }) scheduledFor: string | null;
  /** firings missed during downtime that were coalesced into this one */
  missedCount: number;
  @ApiProperty({ nullable: true, type: Object }) triggerPayload: Record<string, unknown> | null;
  @ApiProperty({ nullable: true, type: String }) linkedIssueId: string | null;
  /** skipped: the execution whose issue was still open */
  @ApiProperty({ nullable: true, type: String }) coalescedIntoRunId: string | null;
  @ApiProperty({ nullable: true, type: String }) failureReason: string | null;
  createdAt: string;
  updatedAt: string;
  @ApiProperty({ nullable: true, type: IssueBriefDto }) linkedIssue: IssueBriefDto | null;
  @ApiProperty({ nullable: true, type: TriggerResponseDto }) trigger: TriggerResponseDto | null;
}

export class RoutineResponseDto {
  id: string;
  companyId: string;
  @ApiProperty({ nullable: true, type: String }) projectId: string | null;
  @ApiProperty({ nullable: true, type: String }) goalId: string | null;
  @ApiProperty({ nullable: true, type: String }) parentIssueId: string | null;
  /** the folder it is filed in (see /companies/{companyId}/folders), null when unfiled */
  @ApiProperty({ nullable: true, type: String, format: 'uuid' }) folderId: string | null;
  title: string;
  @ApiProperty({ nullable: true, type: String }) description: string | null;
  assigneeAgentId: string;
  priority: string;
  @ApiProperty({ enum: ROUTINE_STATUSES }) status: string;
  @ApiProperty({ enum: CONCURRENCY_POLICIES }) concurrencyPolicy: string;
  @ApiProperty({ enum: CATCH_UP_POLICIES }) catchUpPolicy: string;
  /** set for routines a built-in agent owns (e.g. `recent-agent-reflection`) */
  @ApiProperty({ nullable: true, type: String }) routineKey: string | null;
  /** e.g. `built_in_agent:reflection-coach`: such a routine is deleted only through its owner */
  @ApiProperty({ nullable: true, type: String }) managedBy: string | null;
  @ApiProperty({ nullable: true, type: String }) createdByAgentId: string | null;
  @ApiProperty({ nullable: true, type: String }) createdByUserId: string | null;
  @ApiProperty({ nullable: true, type: String }) updatedByAgentId: string | null;
  @ApiProperty({ nullable: true, type: String }) updatedByUserId: string | null;
  @ApiProperty({ nullable: true, type: String }) lastTriggeredAt: string | null;
  @ApiProperty({ nullable: true, type: String }) lastEnqueuedAt: string | null;
  createdAt: string;
  updatedAt: string;
  @ApiProperty({ type: [TriggerResponseDto] }) triggers: TriggerResponseDto[];
  @ApiProperty({ nullable: true, type: RoutineRunResponseDto }) lastRun: RoutineRunResponseDto | null;
  /** the open issue of the latest execution, if any */
  @ApiProperty({ nullable: true, type: IssueBriefDto }) activeIssue: IssueBriefDto | null;
}

export class RoutineDetailResponseDto extends RoutineResponseDto {
  @ApiProperty({ type: [RoutineRunResponseDto] }) recentRuns: RoutineRunResponseDto[];
  @ApiProperty({ nullable: true, type: Object }) assignee: {
    id: string;
    name: string;
    role: string;
    title: string | null;
    urlKey: string;
  } | null;
}
