import { Injectable, Logger } from '@nestjs/common';
import type { AgentActor } from '../../common/auth/actor';
import { Db } from '../../database/db.service';
import type { RunFinishedEvent } from '../heartbeat/run-lifecycle-events';
import { isUuid } from '../../common/http/uuid';
import { CostEventsService } from './cost-events.service';
import { BILLING_TYPES } from './dto/cost-event.dto';

const int = (v: unknown): number | undefined => (Number.isInteger(v) && (v as number) >= 0 ? (v as number) : undefined);
const text = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() ? v.trim().slice(0, 200) : undefined);

/**
 * Costs an adapter reports in a run's result (`usage.costCents`, e.g. the http adapter's sync answer
 * or an async completion) are booked as a cost event of the run's agent when the run ends, once:
 * the idempotency key is the run id. Costs agents report themselves during a run count at once.
 * A coding-agent CLI's usage (`usage.runtime`) is booked whenever it used tokens, with its provider,
 * biller, model and project, and as `unpriced` when its model has no known price.
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
    // a coding-agent CLI's usage record: tokens without a known price are booked as unpriced, never as free
    const runtime = text(usage.runtime);
    const unpriced = !!runtime && usage.costStatus === 'unpriced' && (int(usage.totalTokens) ?? 0) > 0;
    if (!costCents && !unpriced && !(runtime && (int(usage.totalTokens) ?? 0) > 0)) return;
    const projectId = typeof usage.projectId === 'string' && isUuid(usage.projectId) ? usage.projectId : undefined;
    const actor: AgentActor = { kind: 'agent', agentId: e.agentId, companyId: e.companyId, source: 'run_token', runId: e.runId };
    try {
      await this.db.transaction(() =>
        this.costs.report(actor, e.companyId, {
          agentId: e.agentId,
          provider: text(usage.provider) ?? 'adapter',
          model: text(usage.model) ?? 'unknown',
          costCents: unpriced ? null : (costCents ?? 0),
          ...(unpriced ? { costStatus: 'unpriced' as const } : {}),
          biller: text(usage.biller),
          billingType: BILLING_TYPES.find((b) => b === usage.billingType),
          occurredAt: new Date().toISOString(),
          heartbeatRunId: e.runId,
          issueId: e.issueId ?? undefined,
          projectId,
          inputTokens: int(usage.bookedInputTokens) ?? int(usage.inputTokens),
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
