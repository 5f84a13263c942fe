import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  IsBoolean,
  IsIn,
  IsInt,
  IsISO8601,
  IsNotEmpty,
  IsObject,
  IsOptional,
  IsString,
  IsUUID,
  Matches,
  Max,
  MaxLength,
  Min,
} from 'class-validator';
import { CostRangeQueryDto } from './cost-event.dto';
import { RefersTo } from '../../../common/references/refers-to.decorator';

export const FINANCE_DIRECTIONS = ['debit', 'credit'] as const;
/** known kinds; any other snake_case kind is accepted as well */
export const FINANCE_KINDS = [
  'inference_charge',
  'platform_fee',
  'credit_purchase',
  'credit_refund',
  'manual_adjustment',
  'subscription_charge',
  'tax',
];

export class CreateFinanceEventDto {
  @ApiProperty({ example: 'platform_fee', description: `snake_case; known kinds: ${FINANCE_KINDS.join(', ')}` })
  @Matches(/^[a-z][a-z0-9_]{0,63}$/, { message: 'kind must be a snake_case word (e.g. platform_fee)' })
  kind: string;
  /** debit: money out (a charge); credit: money in (a purchase of credits, a refund) */
  @ApiProperty({ enum: FINANCE_DIRECTIONS }) @IsIn(FINANCE_DIRECTIONS) direction: 'debit' | 'credit';
  @IsInt() @Min(0) @Max(Number.MAX_SAFE_INTEGER) amountCents: number;
  @ApiPropertyOptional({ default: 'USD' })
  @IsOptional()
  @Matches(/^[A-Z]{3}$/, { message: 'currency must be an ISO 4217 code such as USD' })
  currency?: string;
  @ApiPropertyOptional({ default: false }) @IsOptional() @IsBoolean() estimated?: boolean;
  @ApiPropertyOptional({ format: 'date-time', description: 'default: now' }) @IsOptional() @IsISO8601({ strict: true }) occurredAt?: string;
  @IsOptional() @IsString() @IsNotEmpty() @MaxLength(200) biller?: string;
  @IsOptional() @IsString() @IsNotEmpty() @MaxLength(200) provider?: string;
  /** an agent of the company the event concerns */
  @RefersTo('agent') @IsOptional() @IsUUID() agentId?: string;
  /** a cost event of the company this record settles or adjusts */
  @RefersTo('cost_event') @IsOptional() @IsUUID() costEventId?: string;
  @IsOptional() @IsString() @MaxLength(2000) description?: string;
  /** invoice or transaction id at the biller */
  @IsOptional() @IsString() @MaxLength(500) externalRef?: string;
  @IsOptional() @IsString() @IsNotEmpty() @MaxLength(200) idempotencyKey?: string;
  @ApiPropertyOptional({ type: Object }) @IsOptional() @IsObject() metadata?: Record<string, unknown>;
}

export class FinanceEventResponseDto {
  id: string;
  companyId: string;
  kind: string;
  @ApiProperty({ enum: FINANCE_DIRECTIONS }) direction: string;
  amountCents: number;
  currency: string;
  estimated: boolean;
  @ApiProperty({ nullable: true, type: String }) biller: string | null;
  @ApiProperty({ nullable: true, type: String }) provider: string | null;
  @ApiProperty({ nullable: true, type: String }) agentId: string | null;
  @ApiProperty({ nullable: true, type: String }) costEventId: string | null;
  @ApiProperty({ nullable: true, type: String }) description: string | null;
  @ApiProperty({ nullable: true, type: String }) externalRef: string | null;
  @ApiProperty({ nullable: true, type: String }) idempotencyKey: string | null;
  @ApiProperty({ nullable: true, type: Object }) metadata: Record<string, unknown> | null;
  occurredAt: string;
  createdAt: string;
}

export class ListFinanceEventsQueryDto extends CostRangeQueryDto {
  /** 1 to 500, default 100 */
  @ApiPropertyOptional({ default: 100, minimum: 1, maximum: 500 })
  @IsOptional()
  @Type(() => Number)
  @IsInt({ message: 'limit must be an integer from 1 to 500' })
  @Min(1)
  @Max(500)
  limit?: number;
  @IsOptional() @Matches(/^[a-z][a-z0-9_]{0,63}$/) kind?: string;
  @IsOptional() @IsIn(FINANCE_DIRECTIONS) direction?: 'debit' | 'credit';
}

export class FinanceTotalsDto {
  currency: string;
  debitCents: number;
  creditCents: number;
  /** debit − credit */
  netCents: number;
  /** part of debit and credit that is estimated */
  estimatedCents: number;
  eventCount: number;
}

export class FinanceSummaryResponseDto {
  companyId: string;
  @ApiProperty({ nullable: true, type: String }) from: string | null;
  @ApiProperty({ nullable: true, type: String }) to: string | null;
  /** one row per currency */
  @ApiProperty({ type: [FinanceTotalsDto] }) totals: FinanceTotalsDto[];
}

export class FinanceByBillerRowDto extends FinanceTotalsDto {
  /** `unknown` when the event names no biller */
  biller: string;
}

export class FinanceByKindRowDto extends FinanceTotalsDto {
  kind: string;
}
