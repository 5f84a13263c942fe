/** Budget windows: calendar months in UTC, or the whole lifetime of a scope. */
export type WindowKind = 'calendar_month_utc' | 'lifetime';
export type BudgetMetric = 'billed_cents' | 'total_tokens' | 'run_count';
export type BudgetScope = 'company' | 'agent' | 'project';

export const WINDOW_KINDS: WindowKind[] = ['calendar_month_utc', 'lifetime'];
export const BUDGET_METRICS: BudgetMetric[] = ['billed_cents', 'total_tokens', 'run_count'];
export const BUDGET_SCOPES: BudgetScope[] = ['company', 'agent', 'project'];

/** Window start of lifetime windows. */
export const LIFETIME_START = new Date(0);

export function monthStartUtc(at: Date): Date {
  return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1));
}

export function floorDayUtc(at: Date): Date {
  return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate()));
}

export function ceilDayUtc(at: Date): Date {
  const floor = floorDayUtc(at);
  return floor.getTime() === at.getTime() ? floor : new Date(floor.getTime() + 86_400_000);
}

export function nextMonthStartUtc(at: Date): Date {
  return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1));
}

export interface BudgetWindow {
  start: Date;
  /** exclusive; null for lifetime */
  end: Date | null;
}

/** The window of `kind` that contains `at`. */
export function windowAt(kind: WindowKind, at: Date): BudgetWindow {
  return kind === 'lifetime' ? { start: LIFETIME_START, end: null } : { start: monthStartUtc(at), end: nextMonthStartUtc(at) };
}

/** Default window of a scope: projects budget over their lifetime, companies and agents per month. */
export const defaultWindowKind = (scope: BudgetScope): WindowKind => (scope === 'project' ? 'lifetime' : 'calendar_month_utc');

/** Integer columns of companies and agents hold at most this many cents. */
export const MAX_INT4 = 2_147_483_647;
