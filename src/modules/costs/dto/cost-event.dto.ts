import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsInt, IsISO8601, IsNotEmpty, IsOptional, IsString, IsUUID, Max, MaxLength, Min, ValidateIf } from 'class-validator';
import { RefersTo } from '../../../common/references/refers-to.decorator';

export const BILLING_TYPES = ['metered_api', 'subscription_included', 'subscription_overage', 'credits', 'fixed', 'unknown'] as const;
export const COST_STATUSES = ['reported', 'unpriced'] as const;
/** one event is at most $10M; sums are bigint */
const MAX_EVENT_CENTS = 1_000_000_000;
const MAX_TOKENS = 1_000_000_000_000;

export class CreateCostEventDto {
  /** an agent of the company; agent callers only themselves */
  @RefersTo('agent') @IsUUID() agentId: string;
  @IsString() @IsNotEmpty() @MaxLength(200) provider: string;
  @IsString() @IsNotEmpty() @MaxLength(200) model: string;
  /** integer cents; may be omitted (or 0/null) only when costStatus is `unpriced` */
  @ApiProperty({ type: Number, nullable: true })
  @ValidateIf((o: CreateCostEventDto) => o.costStatus !== 'unpriced' || (o.costCents !== undefined && o.costCents !== null))
  @IsInt()
  @Min(0)
  @Max(MAX_EVENT_CENTS)
  costCents?: number | null;
  @ApiProperty({ format: 'date-time' }) @IsISO8601({ strict: true }) occurredAt: string;
  @RefersTo('issue') @IsOptional() @IsUUID() issueId?: string;
  @RefersTo('project') @IsOptional() @IsUUID() projectId?: string;
  @RefersTo('goal') @IsOptional() @IsUUID() goalId?: string;
  /** defaults to the caller's run when an agent reports with a verified run */
  @RefersTo('run') @IsOptional() @IsUUID() heartbeatRunId?: string;
  @IsOptional() @IsString() @MaxLength(200) billingCode?: string;
  /** defaults to provider */
  @IsOptional() @IsString() @IsNotEmpty() @MaxLength(200) biller?: string;
  @ApiPropertyOptional({ enum: BILLING_TYPES, default: 'unknown' })
  @IsOptional()
  @IsIn(BILLING_TYPES)
  billingType?: (typeof BILLING_TYPES)[number];
  @ApiPropertyOptional({
    enum: COST_STATUSES,
    default: 'reported',
    description: '`unpriced`: tokens recorded, money unknown (stored as null)',
  })
  @IsOptional()
  @IsIn(COST_STATUSES)
  costStatus?: (typeof COST_STATUSES)[number];
  @IsOptional() @IsInt() @Min(0) @Max(MAX_TOKENS) inputTokens?: number;
  @IsOptional() @IsInt() @Min(0) @Max(MAX_TOKENS) cachedInputTokens?: number;
  @IsOptional() @IsInt() @Min(0) @Max(MAX_TOKENS) outputTokens?: number;
  /** a repeat with the same key returns the original event (200) and counts nothing */
  @IsOptional() @IsString() @IsNotEmpty() @MaxLength(200) idempotencyKey?: string;
}

export class CostEventResponseDto {
  id: string;
  companyId: string;
  agentId: string;
  @ApiProperty({ nullable: true, type: String }) issueId: string | null;
  @ApiProperty({ nullable: true, type: String }) projectId: string | null;
  @ApiProperty({ nullable: true, type: String }) goalId: string | null;
  @ApiProperty({ nullable: true, type: String }) heartbeatRunId: string | null;
  provider: string;
  model: string;
  biller: string;
  @ApiProperty({ enum: BILLING_TYPES }) billingType: string;
  @ApiProperty({ nullable: true, type: String }) billingCode: string | null;
  @ApiProperty({ enum: COST_STATUSES }) costStatus: string;
  /** null when unpriced */
  @ApiProperty({ nullable: true, type: Number }) costCents: number | null;
  /**
   * A run's usage booked by the service: its priced cost in cents with sub-cent precision. The
   * event's whole `costCents` carry the remainder forward (per agent and UTC day, booked cents stay
   * within one cent of the priced total), so a small run may book 0 cents. Null for reported events.
   */
  @ApiProperty({ nullable: true, type: Number }) pricedCents: number | null;
  @ApiProperty({ nullable: true, type: Number }) inputTokens: number | null;
  @ApiProperty({ nullable: true, type: Number }) cachedInputTokens: number | null;
  @ApiProperty({ nullable: true, type: Number }) outputTokens: number | null;
  occurredAt: string;
  @ApiProperty({ nullable: true, type: String }) idempotencyKey: string | null;
  createdAt: string;
}

export class CostRangeQueryDto {
  /** inclusive lower bound on occurredAt */
  @ApiPropertyOptional({ format: 'date-time' }) @IsOptional() @IsISO8601({ strict: true }) from?: string;
  /** exclusive upper bound on occurredAt */
  @ApiPropertyOptional({ format: 'date-time' }) @IsOptional() @IsISO8601({ strict: true }) to?: string;
}

/** Sums shared by every breakdown row. */
export class CostTotalsDto {
  /** cents of priced events */
  costCents: number;
  inputTokens: number;
  cachedInputTokens: number;
  outputTokens: number;
  eventCount: number;
  /** events whose money is unknown */
  unpricedEventCount: number;
}

export class CostSummaryResponseDto extends CostTotalsDto {
  companyId: string;
  @ApiProperty({ nullable: true, type: String }) from: string | null;
  @ApiProperty({ nullable: true, type: String }) to: string | null;
  spendCents: number;
  /** the company's budgetMonthlyCents */
  budgetCents: number;
  /** spendCents / budgetCents × 100, two decimals; 0 without a budget */
  utilizationPercent: number;
}

export class CostByAgentRowDto extends CostTotalsDto {
  agentId: string;
  @ApiProperty({ nullable: true, type: String }) agentName: string | null;
  @ApiProperty({ nullable: true, type: String }) agentStatus: string | null;
}

export class CostByAgentModelRowDto extends CostByAgentRowDto {
  provider: string;
  model: string;
}

export class CostByProviderRowDto extends CostTotalsDto {
  provider: string;
}

export class CostByBillerRowDto extends CostTotalsDto {
  biller: string;
}

export class CostByProjectRowDto extends CostTotalsDto {
  /** null: events not attributed to a project */
  @ApiProperty({ nullable: true, type: String }) projectId: string | null;
  @ApiProperty({ nullable: true, type: String }) projectName: string | null;
}

export class WindowSpendDto extends CostTotalsDto {
  @ApiProperty({ enum: ['5h', '24h', '7d'] }) window: string;
  hours: number;
  from: string;
  to: string;
  spendCents: number;
}

export class WindowSpendResponseDto {
  companyId: string;
  asOf: string;
  @ApiProperty({ type: [WindowSpendDto] }) windows: WindowSpendDto[];
}

export class QuotaWindowDto extends WindowSpendDto {
  /** oldest event inside the window */
  @ApiProperty({ nullable: true, type: String }) oldestEventAt: string | null;
  /** when the oldest event leaves the rolling window */
  @ApiProperty({ nullable: true, type: String }) nextReleaseAt: string | null;
}

export class QuotaProviderDto {
  provider: string;
  biller: string;
  @ApiProperty({ type: [QuotaWindowDto] }) windows: QuotaWindowDto[];
}

export class QuotaWindowsResponseDto {
  companyId: string;
  asOf: string;
  @ApiProperty({ type: [QuotaProviderDto] }) providers: QuotaProviderDto[];
}
