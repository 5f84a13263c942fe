import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, IsOptional, IsUUID, Matches, Max, MaxLength, Min } from 'class-validator';

export class RunEventsQueryDto {
  /** events after this sequence number (0: from the first) */
  @IsOptional() @Type(() => Number) @IsInt() @Min(0) @Max(1_000_000) afterSeq?: number;
  /** at most this many (default 200) */
  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(1000) limit?: number;
}

/** One event of a run's life: queued, started, usage, ended (see docs/api/heartbeat.md). */
export class RunEventDto {
  /** the same as seq (events have no row of their own) */
  id: number;
  companyId: string;
  runId: string;
  agentId: string;
  /** 1, 2, … in order */
  seq: number;
  /** `lifecycle`, `usage` or `error` */
  eventType: string;
  @ApiProperty({ enum: ['system'] }) stream: 'system';
  @ApiProperty({ enum: ['info', 'warn', 'error'] }) level: 'info' | 'warn' | 'error';
  @ApiProperty({ nullable: true, type: String }) color: null;
  message: string;
  @ApiProperty({ nullable: true, type: 'object', additionalProperties: true }) payload: Record<string, unknown> | null;
  createdAt: string;
}

export class RuntimeStateQueryDto {
  /** the company a shortname is looked up in (the board UI sends it) */
  @IsOptional() @IsUUID() companyId?: string;
}

/** An agent's runtime: its resumable session, its last run and the usage its runs have reported so far. */
export class AgentRuntimeStateDto {
  agentId: string;
  companyId: string;
  adapterType: string;
  /** the session the agent's next run of the same adapter may resume (the latest succeeded run's), or null */
  @ApiProperty({ nullable: true, type: String }) sessionId: string | null;
  /** the same session id, for display */
  @ApiProperty({ nullable: true, type: String }) sessionDisplayId: string | null;
  @ApiProperty({ nullable: true, type: String, format: 'uuid' }) lastRunId: string | null;
  @ApiProperty({ nullable: true, type: String }) lastRunStatus: string | null;
  @ApiProperty({ nullable: true, type: String }) lastRunAt: string | null;
  /** why the last run failed (its error, or its error code), null when it did not */
  @ApiProperty({ nullable: true, type: String }) lastError: string | null;
  /** runs of the agent so far */
  runCount: number;
  /** tokens and cost the agent's runs reported (usage records of every run) */
  totalInputTokens: number;
  totalCachedInputTokens: number;
  totalOutputTokens: number;
  totalCostCents: number;
  /** the agent's spend this calendar month (all cost events, as its budget counts it) */
  spentMonthlyCents: number;
  /** the first run's creation, or null without runs */
  @ApiProperty({ nullable: true, type: String }) createdAt: string | null;
  /** the last change of the last run, or null without runs */
  @ApiPropertyOptional({ nullable: true, type: String }) updatedAt: string | null;
}

export class ProviderTracesQueryDto {
  /** run ids, comma-separated (at most 100) */
  @IsOptional()
  @MaxLength(3_800)
  @Matches(/^([0-9a-fA-F-]{36})(,[0-9a-fA-F-]{36}){0,99}$/, { message: 'runIds must be up to 100 run ids, comma-separated' })
  runIds?: string;
}

/** Where a run's OpenTelemetry trace is (the operator's collector holds the spans). */
export class RunOtelTraceDto {
  /** the W3C trace id */
  traceId: string;
  /** the run's W3C traceparent */
  traceparent: string;
}

/**
 * A run's provider trace: raw provider frames are never captured here (they would hold prompts and
 * credentials), so `trace` is null and `entries` empty; `otel` names the run's OpenTelemetry trace
 * when tracing was on at its wake.
 */
export class RunProviderTraceDto {
  @ApiProperty({ nullable: true, type: 'object', additionalProperties: true, description: 'always null' }) trace: null;
  @ApiProperty({ type: [Object], maxItems: 0 }) entries: never[];
  @ApiProperty({ nullable: true, type: RunOtelTraceDto }) otel: RunOtelTraceDto | null;
}
