import { randomUUID } from 'node:crypto';
import { Injectable, OnModuleInit } from '@nestjs/common';
import { Db } from '../../database/db.service';
import { ProbeCosts, type ProbeUsage } from '../adapters/runtimes/probe-costs.port';
import { FinanceService } from './finance.service';
import { RunCostBooking, targetOf } from './run-cost-booking.service';

const text = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() ? v.trim().slice(0, 200) : undefined);

/**
 * Books the environment test's model calls (adapters' ProbeCosts port). A test run for an agent is
 * that agent's spend: a cost event with no run (`billingCode` `environment_test`), which its budgets
 * count. The new-agent form's test runs before any agent exists and a cost event names one: it is a
 * finance event of the company (`inference_charge`, a debit, the priced cost rounded up to a whole
 * cent, `estimated` unless the CLI reported the cost itself; tokens, model and exact cents in its
 * metadata), in the company's finance reports.
 */
@Injectable()
export class ProbeCostsRegistration implements OnModuleInit {
  constructor(
    private readonly port: ProbeCosts,
    private readonly runs: RunCostBooking,
    private readonly finance: FinanceService,
    private readonly db: Db,
  ) {}

  onModuleInit(): void {
    this.port.register((u) => this.book(u));
  }

  async book(u: ProbeUsage): Promise<void> {
    if (u.agentId) return this.runs.bookProbe({ ...u, agentId: u.agentId });
    const t = targetOf(u.usage);
    if (!t || t.inputTokens + t.cachedInputTokens + t.outputTokens + (t.pricedMicros ?? t.cents) === 0) return;
    const pricedCents = t.unpriced ? null : t.pricedMicros === null ? t.cents : t.pricedMicros / 1e6;
    const model = text(u.usage.model) ?? 'unknown';
    await this.db.transaction(() =>
      this.finance.create(u.actor, u.companyId, {
        kind: 'inference_charge',
        direction: 'debit',
        amountCents: pricedCents === null ? 0 : Math.ceil(pricedCents),
        estimated: u.usage.costStatus !== 'reported',
        provider: text(u.usage.provider),
        biller: text(u.usage.biller),
        description: `environment test prompt through ${u.adapterType} (${model}), before the agent existed`,
        idempotencyKey: `environment-test:${randomUUID()}`,
        metadata: {
          billingCode: 'environment_test',
          adapterType: u.adapterType,
          model,
          costStatus: t.unpriced ? 'unpriced' : u.usage.costStatus === 'reported' ? 'reported' : 'priced',
          pricedCents,
          inputTokens: t.inputTokens,
          cachedInputTokens: t.cachedInputTokens,
          outputTokens: t.outputTokens,
        },
      }),
    );
  }
}
