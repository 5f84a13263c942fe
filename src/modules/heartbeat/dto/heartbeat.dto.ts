import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsBoolean, IsIn, IsInt, IsNotEmpty, IsNumber, IsObject, IsOptional, IsString, IsUUID, Max, MaxLength, Min } from 'class-validator';
import { RUN_STATUSES } from '../../adapters/run.types';
import { RefersTo } from '../../../common/references/refers-to.decorator';

const toInt = ({ value }: { value: unknown }) => (typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value);

export class WakeupDto {
  @ApiPropertyOptional({ enum: ['timer', 'assignment', 'on_demand', 'automation'], default: 'on_demand' })
  @IsOptional()
  @IsIn(['timer', 'assignment', 'on_demand', 'automation'])
  source?: 'timer' | 'assignment' | 'on_demand' | 'automation';
  @ApiPropertyOptional({ enum: ['manual', 'ping', 'callback', 'system'] })
  @IsOptional()
  @IsIn(['manual', 'ping', 'callback', 'system'])
  triggerDetail?: 'manual' | 'ping' | 'callback' | 'system';
  @IsOptional() @IsString() @MaxLength(2000) reason?: string;
  /** e.g. `{ issueId, commentId }`; an `issueId` makes the wake issue-scoped (coalescing, deferral, loop breaker) */
  @RefersTo({
    issueId: 'issue',
    commentId: 'comment',
    projectId: 'project',
    goalId: 'goal',
    agentId: 'agent',
    routineId: 'routine',
    approvalId: 'approval',
    runId: 'run',
  })
  @IsOptional()
  @IsObject()
  payload?: Record<string, unknown>;
  /** the same key for the same agent within 24 hours returns the first wake's result, no second run */
  @IsOptional() @IsString() @IsNotEmpty() @MaxLength(255) idempotencyKey?: string;
  @IsOptional() @IsBoolean() forceFreshSession?: boolean;
}

export class SkippedWakeupDto {
  @ApiProperty({ example: true }) skipped: true;
  @ApiProperty({
    example: 'wake_loop_suppressed',
    description:
      'agent_paused, self_comment, heartbeat_disabled, wake_on_demand_disabled, budget, company_paused, wake_loop_suppressed, no_actionable_work',
  })
  reason: string;
  wakeupRequestId: string;
}

/** The wake waits: the issue's subtree is paused by a hold; it runs once the hold is released. */
export class HeldWakeupDto {
  @ApiProperty({ example: true }) deferred: true;
  @ApiProperty({ example: 'issue_tree_held' }) reason: string;
  holdId: string;
  wakeupRequestId: string;
}

export class RunResponseDto {
  id: string;
  /** same as id */
  runId: string;
  companyId: string;
  agentId: string;
  @ApiProperty({ nullable: true, type: String }) wakeupRequestId: string | null;
  @ApiProperty({ enum: RUN_STATUSES }) status: string;
  @ApiProperty({ enum: ['timer', 'assignment', 'on_demand', 'automation'] }) invocationSource: string;
  @ApiProperty({ nullable: true, type: String }) triggerDetail: string | null;
  adapterType: string;
  @ApiProperty({ nullable: true, type: String }) issueId: string | null;
  /** what woke the run: source, reason, payload, issueId, commentId, coalesced wakes */
  contextSnapshot: Record<string, unknown>;
  @ApiProperty({ nullable: true, type: String }) startedAt: string | null;
  @ApiProperty({ nullable: true, type: String }) finishedAt: string | null;
  @ApiProperty({ nullable: true, type: Number }) exitCode: number | null;
  @ApiProperty({
    nullable: true,
    type: String,
    description:
      'why it ended: timeout, lease_expired, cancelled_by_board, scope_cancelled, adapter_command_not_found, adapter_exit_nonzero, ...',
  })
  errorCode: string | null;
  @ApiProperty({ nullable: true, type: String }) error: string | null;
  @ApiProperty({ nullable: true, type: Object }) usageJson: Record<string, unknown> | null;
  @ApiProperty({ nullable: true, type: Object }) resultJson: Record<string, unknown> | null;
  @ApiProperty({ nullable: true, type: String, description: 'NDJSON log, relative to the data directory' }) logPath: string | null;
  @ApiProperty({
    nullable: true,
    enum: ['local_file'],
    description: 'where the log is kept (null before the run has one); read it with GET /api/heartbeat-runs/{runId}/log',
  })
  logStore: 'local_file' | null;
  @ApiProperty({ nullable: true, type: String, description: 'the log within its store (here: logPath); null before the run has a log' })
  logRef: string | null;
  logBytes: number;
  @ApiProperty({ nullable: true, type: String, description: "when the log last grew (to the owner's keepalive interval)" }) lastOutputAt:
    string | null;
  @ApiProperty({ nullable: true, type: String }) claimedBy: string | null;
  @ApiProperty({ nullable: true, type: String }) leaseExpiresAt: string | null;
  createdAt: string;
  updatedAt: string;
}

/** The board UI sends the agent's company along; the agent id alone decides. */
export class InvokeQueryDto {
  @IsOptional() @IsUUID() companyId?: string;
}

export class WakeupRunResponseDto extends RunResponseDto {
  @ApiProperty({ enum: ['queued', 'coalesced', 'deferred'], description: 'deferred: the record is the live run this wake waits for' })
  wakeupStatus: string;
  wakeupRequestIdOfThisWake: string;
  @ApiPropertyOptional() idempotentReplay?: boolean;
}

export class ListRunsQueryDto {
  @IsOptional() @IsUUID() agentId?: string;
  @IsOptional() @IsIn(RUN_STATUSES) status?: string;
  @IsOptional() @IsUUID() issueId?: string;
  @ApiPropertyOptional({ minimum: 1, maximum: 200, default: 50 })
  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(200)
  limit?: number;
  /** deprecated: slow deep in a long history; use `cursor` (keyset) */
  @ApiPropertyOptional({ minimum: 0, default: 0, deprecated: true })
  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(0)
  @Max(100000)
  offset?: number;
  /** the `X-Next-Cursor` header of the previous page */
  @ApiPropertyOptional({ description: "opaque keyset cursor from the previous page's X-Next-Cursor header" })
  @IsOptional()
  @IsString()
  @IsNotEmpty()
  @MaxLength(200)
  cursor?: string;
}

export class LiveRunsQueryDto {
  @ApiPropertyOptional({ minimum: 1, maximum: 500, default: 200 })
  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(500)
  limit?: number;

  /** fewer live runs than this are topped up with the most recent ended runs (newest first) */
  @ApiPropertyOptional({ minimum: 0, maximum: 500, default: 0 })
  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(0)
  @Max(500)
  minCount?: number;
}

/** A queued or running run as the board's live views show it. */
export class LiveRunDto {
  id: string;
  companyId: string;
  @ApiProperty({ enum: ['queued', 'running'] }) status: string;
  agentId: string;
  agentName: string;
  adapterType: string;
  @ApiProperty({ enum: ['timer', 'assignment', 'on_demand', 'automation'] }) invocationSource: string;
  @ApiProperty({ nullable: true, type: String }) triggerDetail: string | null;
  /** the wake's reason, e.g. issue_assigned, issue_commented */
  @ApiProperty({ nullable: true, type: String }) wakeReason: string | null;
  @ApiProperty({ nullable: true, type: String }) issueId: string | null;
  /** the comment that woke the run, if any */
  @ApiProperty({ nullable: true, type: String }) contextCommentId: string | null;
  @ApiProperty({ nullable: true, type: String }) startedAt: string | null;
  @ApiProperty({ nullable: true, type: String }) finishedAt: string | null;
  createdAt: string;
  logBytes: number;
  /** when the log last grew (to the owner's keepalive interval); null before any output */
  @ApiProperty({ nullable: true, type: String }) lastOutputAt: string | null;
}

export class RunLogQueryDto {
  /** byte offset to read from (tailing: pass the previous nextOffset) */
  @ApiPropertyOptional({ minimum: 0, default: 0 })
  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(0)
  offset?: number;
  @ApiPropertyOptional({ minimum: 1, maximum: 1048576, default: 65536 })
  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(1048576)
  limitBytes?: number;
}

export class RunLogResponseDto {
  runId: string;
  offset: number;
  /** pass as offset to continue; absent once the run has ended and its log is read to the end (eof) */
  @ApiPropertyOptional({ type: Number })
  nextOffset?: number;
  /** current size of the log in bytes */
  size: number;
  /** whole NDJSON lines `{ ts, stream, chunk }` */
  content: string;
  /** the run has ended and everything was read */
  eof: boolean;
}

export class CompleteRunDto {
  @ApiPropertyOptional({ enum: ['succeeded', 'failed'], default: 'succeeded' })
  @IsOptional()
  @IsIn(['succeeded', 'failed'])
  status?: 'succeeded' | 'failed';
  @IsOptional() @IsString() @MaxLength(20000) summary?: string;
  @IsOptional() @IsObject() usage?: Record<string, unknown>;
  @IsOptional() @IsNumber() @Min(0) costCents?: number;
  @IsOptional() @IsObject() result?: Record<string, unknown>;
  @IsOptional() @IsString() @MaxLength(4000) error?: string;
}

export class SchedulerHeartbeatDto {
  agentId: string;
  companyId: string;
  agentName: string;
  agentStatus: string;
  enabled: boolean;
  intervalSec: number;
  @ApiProperty({ nullable: true, type: String }) nextDueAt: string | null;
  @ApiProperty({ nullable: true, type: String }) lastFiredAt: string | null;
  @ApiProperty({ nullable: true, type: Object }) lastRun: {
    id: string;
    status: string;
    invocationSource: string;
    createdAt: string;
    finishedAt: string | null;
  } | null;
}
