import { priceOf, priceTokens, type PriceTable, type TokenCounts } from './model-prices';

export type CostStatus = 'reported' | 'priced' | 'unpriced';

/** What a run has used so far (or in total once `final`), as the run's usage record and live events carry it. */
export interface UsageSnapshot extends TokenCounts {
  totalTokens: number;
  /** model calls (assistant turns) */
  turns: number;
  costUsd: number | null;
  /** whole cents, rounded up (what caps compare); null when unpriced */
  costCents: number | null;
  /** the cost in cents with sub-cent precision (6 decimals): what booking adds up; null when unpriced */
  costCentsExact: number | null;
  /** reported: the CLI's own total; priced: from the model price table; unpriced: model unknown */
  costStatus: CostStatus;
  model: string | null;
  provider: string;
  biller: string;
  billingType: string;
  /** the CLI's final result arrived: the totals are its authoritative numbers */
  final: boolean;
}

const zero = (): TokenCounts => ({ inputTokens: 0, cachedInputTokens: 0, cacheCreationInputTokens: 0, outputTokens: 0 });
const add = (a: TokenCounts, b: TokenCounts): TokenCounts => ({
  inputTokens: a.inputTokens + b.inputTokens,
  cachedInputTokens: a.cachedInputTokens + b.cachedInputTokens,
  cacheCreationInputTokens: a.cacheCreationInputTokens + b.cacheCreationInputTokens,
  outputTokens: a.outputTokens + b.outputTokens,
});
const sub = (a: TokenCounts, b: TokenCounts): TokenCounts => ({
  inputTokens: a.inputTokens - b.inputTokens,
  cachedInputTokens: a.cachedInputTokens - b.cachedInputTokens,
  cacheCreationInputTokens: a.cacheCreationInputTokens - b.cacheCreationInputTokens,
  outputTokens: a.outputTokens - b.outputTokens,
});
const maxOf = (a: TokenCounts, b: TokenCounts): TokenCounts => ({
  inputTokens: Math.max(a.inputTokens, b.inputTokens),
  cachedInputTokens: Math.max(a.cachedInputTokens, b.cachedInputTokens),
  cacheCreationInputTokens: Math.max(a.cacheCreationInputTokens, b.cacheCreationInputTokens),
  outputTokens: Math.max(a.outputTokens, b.outputTokens),
});

/** Cents with sub-cent precision (6 decimals), from USD (float noise of a CLI's total rounded away). */
export const exactCentsOf = (usd: number): number => Math.round(usd * 1e8) / 1e6;

export const centsOf = (usd: number): number => Math.ceil(exactCentsOf(usd));

/** A non-negative integer out of an unknown value (0 otherwise). */
export const count = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? Math.floor(v) : 0);

/** One model call as the runtime reported it (for a trace span per turn), once its usage is complete. */
export interface MeteredTurn extends TokenCounts {
  /** 1-based, per run (attempts included) */
  index: number;
  model: string | null;
  costUsd: number | null;
  /** when the previous turn ended (or metering started) and when this one's usage last changed, ms since the epoch */
  startTime: number;
  endTime: number;
}

/**
 * The usage ledger of one run. Parsers report per-turn usage keyed by the model call's id (a CLI that
 * prints a message once per content block repeats its usage: the same id counts once, with the
 * largest numbers seen) and, at the end, the CLI's own totals, which replace the per-turn sum
 * (never added to it). A fallback attempt (a resume that failed) is folded in with `endAttempt`.
 */
export class RunMeter {
  private readonly turnsById = new Map<string, TokenCounts>();
  /** the CLI's own cost per turn, when it reports one per turn (OpenCode) */
  private readonly turnCosts = new Map<string, number>();
  /** running sums of turnsById and turnCosts (a snapshot per stream line must not walk every turn) */
  private turnSum = zero();
  private turnCostSum = 0;
  private finalTotals: TokenCounts | null = null;
  private finalCostUsd: number | null = null;
  private finalTurns = 0;
  private base = zero();
  private baseCostUsd = 0;
  private baseTurns = 0;
  private baseUnpriced = false;
  private model: string | null;
  billingType: string;
  /** told each turn once it is complete (the next turn began, or the attempt ended); set only when tracing is on */
  onTurn: ((t: MeteredTurn) => void) | null = null;
  private pending: { id: string; startTime: number; endTime: number } | null = null;
  private turnIndex = 0;
  private lastTurnEnd = Date.now();

  constructor(
    private readonly provider: string,
    private readonly biller: string,
    model: string | null,
    private readonly prices: PriceTable = {},
    billingType = 'metered_api',
  ) {
    this.model = model;
    this.billingType = billingType;
  }

  setModel(model: string | null | undefined): void {
    if (model && !model.startsWith('<')) this.model = model;
  }

  /** One model call's usage (cumulative for that call); repeats of the same id keep the largest numbers. */
  turn(id: string, t: TokenCounts, costUsd?: number | null): void {
    if (this.onTurn) this.track(id);
    const seen = this.turnsById.get(id);
    const sum = this.turnSum;
    if (!seen) {
      // a new call (the usual line): its counts are added in place, no objects made
      this.turnsById.set(id, t);
      sum.inputTokens += t.inputTokens;
      sum.cachedInputTokens += t.cachedInputTokens;
      sum.cacheCreationInputTokens += t.cacheCreationInputTokens;
      sum.outputTokens += t.outputTokens;
    } else {
      const next = maxOf(seen, t);
      this.turnsById.set(id, next);
      this.turnSum = add(sub(sum, seen), next);
    }
    if (typeof costUsd === 'number' && Number.isFinite(costUsd) && costUsd >= 0) {
      this.turnCostSum += costUsd - (this.turnCosts.get(id) ?? 0);
      this.turnCosts.set(id, costUsd);
    }
  }

  private track(id: string): void {
    const now = Date.now();
    if (this.pending?.id === id) {
      this.pending.endTime = now;
      return;
    }
    this.flushTurns();
    this.pending = { id, startTime: this.lastTurnEnd, endTime: now };
  }

  /** Reports the turn still open (at the end of an attempt). */
  flushTurns(): void {
    const p = this.pending;
    if (!p || !this.onTurn) return;
    this.pending = null;
    this.lastTurnEnd = p.endTime;
    const t = this.turnsById.get(p.id);
    if (!t) return;
    this.onTurn({
      ...t,
      index: ++this.turnIndex,
      model: this.model,
      costUsd: this.turnCosts.get(p.id) ?? null,
      startTime: p.startTime,
      endTime: p.endTime,
    });
  }

  /** The CLI's final totals for this attempt (tokens, and its own cost when it reports one). */
  final(t: TokenCounts | null, costUsd: number | null, turns?: number): void {
    if (t) this.finalTotals = t;
    if (costUsd !== null && Number.isFinite(costUsd) && costUsd >= 0) this.finalCostUsd = costUsd;
    if (turns !== undefined) this.finalTurns = turns;
  }

  get isFinal(): boolean {
    return this.finalTotals !== null;
  }

  private attempt(): { tokens: TokenCounts; turns: number; costUsd: number | null; status: CostStatus } {
    const tokens = this.finalTotals ?? this.turnSum;
    const turns = Math.max(this.turnsById.size, this.finalTurns);
    if (this.finalCostUsd !== null) return { tokens, turns, costUsd: this.finalCostUsd, status: 'reported' };
    if (!this.finalTotals && this.turnCosts.size > 0 && this.turnCosts.size === this.turnsById.size) {
      return { tokens, turns, costUsd: this.turnCostSum, status: 'reported' };
    }
    const price = priceOf(this.model, this.prices);
    if (price) return { tokens, turns, costUsd: priceTokens(tokens, price), status: 'priced' };
    const used = tokens.inputTokens + tokens.cachedInputTokens + tokens.cacheCreationInputTokens + tokens.outputTokens;
    return { tokens, turns, costUsd: used > 0 ? null : 0, status: used > 0 ? 'unpriced' : 'priced' };
  }

  /** Keeps this attempt's usage and starts counting a new one (the same run, e.g. after a dead session). */
  endAttempt(): void {
    this.flushTurns();
    const a = this.attempt();
    this.base = add(this.base, a.tokens);
    this.baseTurns += a.turns;
    if (a.costUsd === null) this.baseUnpriced = true;
    else this.baseCostUsd += a.costUsd;
    this.turnsById.clear();
    this.turnCosts.clear();
    this.turnSum = zero();
    this.turnCostSum = 0;
    this.finalTotals = null;
    this.finalCostUsd = null;
    this.finalTurns = 0;
  }

  snapshot(): UsageSnapshot {
    const a = this.attempt();
    const tokens = add(this.base, a.tokens);
    const unpriced = this.baseUnpriced || a.costUsd === null;
    const costUsd = unpriced ? null : this.baseCostUsd + (a.costUsd ?? 0);
    return {
      ...tokens,
      totalTokens: tokens.inputTokens + tokens.cachedInputTokens + tokens.cacheCreationInputTokens + tokens.outputTokens,
      turns: this.baseTurns + a.turns,
      costUsd,
      costCents: costUsd === null ? null : centsOf(costUsd),
      costCentsExact: costUsd === null ? null : exactCentsOf(costUsd),
      costStatus: unpriced ? 'unpriced' : a.status,
      model: this.model,
      provider: this.provider,
      biller: this.biller,
      billingType: this.billingType,
      final: a.tokens === this.finalTotals && this.finalTotals !== null,
    };
  }
}
