import { Injectable, Logger } from '@nestjs/common';
import type { AgentActor } from '../../common/auth/actor';
import { Db } from '../../database/db.service';
import type { RunFinishedEvent } from '../heartbeat/run-lifecycle-events';
import { CostEventsService } from './cost-events.service';

const int = (v: unknown): number | undefined => (Number.isInteger(v) && (v as number) >= 0 ? (v as number) : undefined);
const text = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() ? v.trim().slice(0, 200) : undefined);

/**
 * Costs an adapter reports in a run's result (`usage.costCents`, e.g. the http adapter's sync answer
 * or an async completion) are booked as a cost event of the run's agent when the run ends, once:
 * the idempotency key is the run id. Costs agents report themselves during a run count at once.
 */
@Injectable()
export class RunCostBooking {
  private readonly logger = new Logger('RunCostBooking');

  constructor(
    private readonly db: Db,
    private readonly costs: CostEventsService,
  ) {}

  async book(e: RunFinishedEvent): Promise<void> {
    const usage = e.usage ?? {};
    const costCents = int(usage.costCents);
    if (!costCents) return;
    const actor: AgentActor = { kind: 'agent', agentId: e.agentId, companyId: e.companyId, source: 'run_token', runId: e.runId };
    try {
      await this.db.transaction(() =>
        this.costs.report(actor, e.companyId, {
          agentId: e.agentId,
          provider: text(usage.provider) ?? 'adapter',
          model: text(usage.model) ?? 'unknown',
          costCents,
          occurredAt: new Date().toISOString(),
          heartbeatRunId: e.runId,
          issueId: e.issueId ?? undefined,
          inputTokens: int(usage.inputTokens),
          cachedInputTokens: int(usage.cachedInputTokens),
          outputTokens: int(usage.outputTokens),
          idempotencyKey: `run:${e.runId}`,
        }),
      );
    } catch (err) {
      this.logger.error(`could not book the cost of run ${e.runId}: ${(err as Error).message}`);
    }
  }
}
