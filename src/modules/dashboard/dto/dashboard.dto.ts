import { ApiProperty } from '@nestjs/swagger';

export class DashboardAgentsDto {
  /** idle or active: ready for work */
  active: number;
  running: number;
  paused: number;
  error: number;
}

export class DashboardTasksDto {
  /** every issue not done or cancelled (in progress and blocked included) */
  open: number;
  inProgress: number;
  blocked: number;
  done: number;
}

export class DashboardCostsDto {
  /** spend of the current calendar month (UTC) */
  monthSpendCents: number;
  /** the company's monthly budget; 0 when none */
  monthBudgetCents: number;
  /** spend / budget in percent (two decimals); 0 without a budget */
  monthUtilizationPercent: number;
}

export class DashboardBudgetsDto {
  /** open incidents and incidents still holding a scope */
  activeIncidents: number;
  /** approvals about budgets (none exist in this service: always 0) */
  pendingApprovals: number;
  pausedAgents: number;
  pausedProjects: number;
}

export class DashboardRunDayDto {
  /** UTC day, YYYY-MM-DD (runs by creation time) */
  date: string;
  succeeded: number;
  /** failed and timed out */
  failed: number;
  /** runs that succeeded after a lost process was retried; counted under succeeded here, so always 0 */
  recovered: number;
  /** queued, running and cancelled */
  other: number;
  total: number;
  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'number' },
    description: 'failed runs by error code (`unknown` without one)',
  })
  failedByErrorCode: Record<string, number>;
}

export class DashboardResponseDto {
  companyId: string;
  agents: DashboardAgentsDto;
  tasks: DashboardTasksDto;
  costs: DashboardCostsDto;
  /** pending approvals of the company (hires) */
  pendingApprovals: number;
  budgets: DashboardBudgetsDto;
  /** the last 14 UTC days, oldest first, today last */
  @ApiProperty({ type: [DashboardRunDayDto] }) runActivity: DashboardRunDayDto[];
}
