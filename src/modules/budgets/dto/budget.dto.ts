import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsIn, IsInt, IsOptional, IsUUID, Max, Min, ValidateIf } from 'class-validator';
import { BUDGET_METRICS, BUDGET_SCOPES, MAX_INT4, WINDOW_KINDS } from '../budget-windows';

export class UpdateBudgetDto {
  /** monthly ceiling in cents; 0 deactivates the monthly policy */
  @IsInt() @Min(0) @Max(MAX_INT4) budgetMonthlyCents: number;
}

export class UpsertBudgetPolicyDto {
  @ApiProperty({ enum: BUDGET_SCOPES }) @IsIn(BUDGET_SCOPES) scopeType: 'company' | 'agent' | 'project';
  /** the company, agent or project id; defaults to the company for company scope */
  @IsOptional() @IsUUID() scopeId?: string;
  @ApiPropertyOptional({ enum: BUDGET_METRICS, default: 'billed_cents' }) @IsOptional() @IsIn(BUDGET_METRICS) metric?:
    'billed_cents' | 'total_tokens' | 'run_count';
  @ApiPropertyOptional({ enum: WINDOW_KINDS, description: 'default calendar_month_utc for company and agent, lifetime for project' })
  @IsOptional()
  @IsIn(WINDOW_KINDS)
  windowKind?: 'calendar_month_utc' | 'lifetime';
  /** ceiling in the metric's unit (cents, tokens or runs); 0 never triggers */
  @IsInt() @Min(0) @Max(MAX_INT4) amount: number;
  @ApiPropertyOptional({ default: 80 }) @IsOptional() @IsInt() @Min(1) @Max(100) warnPercent?: number;
  @ApiPropertyOptional({ default: true }) @IsOptional() @IsBoolean() hardStopEnabled?: boolean;
  @ApiPropertyOptional({ default: true }) @IsOptional() @IsBoolean() notifyEnabled?: boolean;
  @ApiPropertyOptional({ default: true }) @IsOptional() @IsBoolean() isActive?: boolean;
}

export class ResolveIncidentDto {
  @ApiProperty({ enum: ['keep_paused', 'raise_budget_and_resume'] })
  @IsIn(['keep_paused', 'raise_budget_and_resume'])
  action: 'keep_paused' | 'raise_budget_and_resume';
  /** raise_budget_and_resume: the new policy amount (cents for billed_cents); must exceed observed spend */
  @ValidateIf((o: ResolveIncidentDto) => o.action === 'raise_budget_and_resume' || o.amount !== undefined)
  @IsInt()
  @Min(1)
  @Max(MAX_INT4)
  amount?: number;
}

export class ListIncidentsQueryDto {
  @IsOptional() @IsIn(['open', 'resolved', 'active']) status?: 'open' | 'resolved' | 'active';
}

export class BudgetPolicyResponseDto {
  id: string;
  companyId: string;
  @ApiProperty({ enum: BUDGET_SCOPES }) scopeType: string;
  scopeId: string;
  @ApiProperty({ nullable: true, type: String }) scopeName: string | null;
  @ApiProperty({ enum: BUDGET_METRICS }) metric: string;
  @ApiProperty({ enum: WINDOW_KINDS }) windowKind: string;
  windowStart: string;
  @ApiProperty({ nullable: true, type: String }) windowEnd: string | null;
  amount: number;
  /** metric value in the current window */
  observedAmount: number;
  remainingAmount: number;
  utilizationPercent: number;
  warnPercent: number;
  hardStopEnabled: boolean;
  notifyEnabled: boolean;
  isActive: boolean;
  @ApiProperty({ enum: ['ok', 'warning', 'exceeded', 'inactive'] }) state: string;
  createdAt: string;
  updatedAt: string;
}

export class BudgetIncidentResponseDto {
  id: string;
  companyId: string;
  policyId: string;
  scopeType: string;
  scopeId: string;
  metric: string;
  windowKind: string;
  windowStart: string;
  @ApiProperty({ nullable: true, type: String }) windowEnd: string | null;
  @ApiProperty({ enum: ['soft', 'hard'] }) kind: string;
  @ApiProperty({ enum: ['open', 'resolved'] }) status: string;
  /** the policy amount when the incident opened */
  budgetAmount: number;
  /** warn threshold (soft) or the amount itself (hard) */
  thresholdAmount: number;
  observedAmount: number;
  /** a hard incident keeps its scope paused while true */
  holdActive: boolean;
  @ApiProperty({ nullable: true, enum: ['keep_paused', 'raise_budget_and_resume', 'window_reset'] }) resolution: string | null;
  @ApiProperty({ nullable: true, type: String }) resolvedAt: string | null;
  @ApiProperty({ nullable: true, type: Object }) resolvedBy: { actorType: string | null; actorId: string } | null;
  createdAt: string;
}

export class BudgetOverviewResponseDto {
  companyId: string;
  budgetMonthlyCents: number;
  spentMonthlyCents: number;
  @ApiProperty({ enum: ['active', 'paused', 'archived'] }) companyStatus: string;
  @ApiProperty({ nullable: true, type: String }) companyPauseReason: string | null;
  @ApiProperty({ type: [BudgetPolicyResponseDto] }) policies: BudgetPolicyResponseDto[];
  /** open incidents and resolved hard incidents still holding their scope */
  @ApiProperty({ type: [BudgetIncidentResponseDto] }) activeIncidents: BudgetIncidentResponseDto[];
  pausedAgentCount: number;
  pausedProjectCount: number;
  /** 0 until the approvals table exists */
  pendingApprovalCount: number;
}

export class BudgetUpdateResponseDto {
  @ApiProperty({ description: 'the company or agent id' }) id: string;
  companyId: string;
  @ApiProperty({ enum: ['company', 'agent'] }) scopeType: string;
  budgetMonthlyCents: number;
  spentMonthlyCents: number;
  @ApiProperty({ nullable: true, type: BudgetPolicyResponseDto }) policy: BudgetPolicyResponseDto | null;
}

export class ResolveIncidentResponseDto extends BudgetIncidentResponseDto {
  /** whether the scope was resumed */
  resumed: boolean;
}
