import { Injectable } from '@nestjs/common';
import { notFound } from '../../common/errors/domain-error';
import { DashboardRepository, RunGroupRecord } from './dashboard.repository';
import { DashboardResponseDto, DashboardRunDayDto } from './dto/dashboard.dto';

export const RUN_ACTIVITY_DAYS = 14;
const DAY_MS = 86_400_000;

/** How long the closed days of a company's run activity are reused before they are counted again. */
export const PAST_DAYS_TTL_MS = 60_000;
const MAX_CACHED_COMPANIES = 10_000;

interface PastDays {
  today: number;
  at: number;
  groups: RunGroupRecord[];
}

/**
 * The board's company dashboard: agents, tasks, spend, approvals, budgets, and 14 days of run
 * activity. Today's runs are counted on every request; the 13 closed days change only when one of
 * their runs ends late or is deleted, so their counts are reused for a minute (per instance), which
 * keeps a request to one small index range however long the history is.
 */
@Injectable()
export class DashboardService {
  private readonly pastDays = new Map<string, PastDays>();

  constructor(private readonly repo: DashboardRepository) {}

  async get(companyId: string, now = new Date()): Promise<DashboardResponseDto> {
    const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
    const first = today - (RUN_ACTIVITY_DAYS - 1) * DAY_MS;
    const [row, todayGroups, pastGroups] = await Promise.all([
      this.repo.counts(companyId),
      this.repo.runGroups(companyId, new Date(today), new Date(today + DAY_MS)),
      this.closedDays(companyId, first, today),
    ]);
    if (!row) throw notFound('Company');
    const agents = row.agents ?? {};
    const issues = row.issues ?? {};
    const n = (m: Record<string, number>, ...keys: string[]) => keys.reduce((sum, k) => sum + (m[k] ?? 0), 0);
    const openIssues = Object.entries(issues)
      .filter(([s]) => s !== 'done' && s !== 'cancelled')
      .reduce((sum, [, c]) => sum + c, 0);
    const budget = row.budgetMonthlyCents;
    const spent = row.spentMonthlyCents;
    return {
      companyId,
      agents: {
        active: n(agents, 'active', 'idle'),
        running: n(agents, 'running'),
        paused: n(agents, 'paused'),
        error: n(agents, 'error'),
      },
      tasks: { open: openIssues, inProgress: n(issues, 'in_progress'), blocked: n(issues, 'blocked'), done: n(issues, 'done') },
      costs: {
        monthSpendCents: spent,
        monthBudgetCents: budget,
        monthUtilizationPercent: budget > 0 ? Math.round((spent / budget) * 10000) / 100 : 0,
      },
      pendingApprovals: row.pendingApprovals,
      budgets: {
        activeIncidents: row.activeIncidents,
        pendingApprovals: 0,
        pausedAgents: n(agents, 'paused'),
        pausedProjects: row.pausedProjects,
      },
      runActivity: runActivity(first, [...pastGroups, ...todayGroups]),
    };
  }

  private async closedDays(companyId: string, first: number, today: number): Promise<RunGroupRecord[]> {
    const cached = this.pastDays.get(companyId);
    if (cached && cached.today === today && Date.now() - cached.at < PAST_DAYS_TTL_MS) return cached.groups;
    const groups = await this.repo.runGroups(companyId, new Date(first), new Date(today));
    if (this.pastDays.size >= MAX_CACHED_COMPANIES) this.pastDays.delete(this.pastDays.keys().next().value as string);
    this.pastDays.delete(companyId);
    this.pastDays.set(companyId, { today, at: Date.now(), groups });
    return groups;
  }
}

/** One entry per UTC day from `first` (14 days), filled from (day, status, error code, count) groups. */
export function runActivity(first: number, groups: RunGroupRecord[]): DashboardRunDayDto[] {
  const days = new Map<string, DashboardRunDayDto>();
  for (let i = 0; i < RUN_ACTIVITY_DAYS; i++) {
    const date = new Date(first + i * DAY_MS).toISOString().slice(0, 10);
    days.set(date, { date, succeeded: 0, failed: 0, recovered: 0, other: 0, total: 0, failedByErrorCode: {} });
  }
  for (const g of groups) {
    const d = days.get(g.day);
    if (!d) continue;
    d.total += g.n;
    if (g.status === 'succeeded') d.succeeded += g.n;
    else if (g.status === 'failed' || g.status === 'timed_out') {
      d.failed += g.n;
      const code = g.errorCode ?? 'unknown';
      d.failedByErrorCode[code] = (d.failedByErrorCode[code] ?? 0) + g.n;
    } else d.other += g.n;
  }
  return [...days.values()];
}
