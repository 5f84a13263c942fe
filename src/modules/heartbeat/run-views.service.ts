import { Injectable } from '@nestjs/common';
import { iso } from '../../database/row-mapping';
import type { AgentRuntimeStateDto, RunEventDto, RunProviderTraceDto } from './dto/run-views.dto';
import { HeartbeatRunsService } from './heartbeat-runs.service';
import { runEvents } from './run-events';
import { RunViewsRepository } from './run-views.repository';

const n = (v: string | number | null | undefined) => Number(v ?? 0);

/** What the board's run and agent pages read beyond the run records: a run's events, an agent's runtime state. */
@Injectable()
export class RunViewsService {
  constructor(
    private readonly runs: HeartbeatRunsService,
    private readonly repo: RunViewsRepository,
  ) {}

  /** 404 unless the run is one of the route's company (`companyId`, resolved by the guard). */
  async assertVisible(companyId: string | undefined, runId: string): Promise<void> {
    await this.runs.getInRoute(companyId, runId);
  }

  /** The run's events after `afterSeq`, at most `limit` (see runEvents). */
  async events(companyId: string | undefined, runId: string, afterSeq = 0, limit = 200): Promise<RunEventDto[]> {
    const run = await this.runs.getInRoute(companyId, runId);
    return runEvents(run)
      .filter((e) => e.seq > afterSeq)
      .slice(0, limit);
  }

  /** A run's provider trace: never raw frames (see RunProviderTraceDto); its OpenTelemetry trace when it has one. */
  async providerTrace(companyId: string | undefined, runId: string): Promise<RunProviderTraceDto> {
    const run = await this.runs.getInRoute(companyId, runId);
    const m = run.traceParent ? /^[0-9a-f]{2}-([0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}$/.exec(run.traceParent) : null;
    return { trace: null, entries: [], otel: m ? { traceId: m[1], traceparent: run.traceParent! } : null };
  }

  /** The runtime state of an agent the caller may see (the agents module resolves it and checks access). */
  async runtimeState(agent: {
    id: string;
    companyId: string;
    adapterType: string;
    spentMonthlyCents: number;
  }): Promise<AgentRuntimeStateDto> {
    const t = await this.repo.runtimeTotals(agent.companyId, agent.id, agent.adapterType);
    const lastError =
      t?.lastStatus && ['failed', 'timed_out', 'cancelled'].includes(t.lastStatus) ? (t.lastError ?? t.lastErrorCode) : null;
    return {
      agentId: agent.id,
      companyId: agent.companyId,
      adapterType: agent.adapterType,
      sessionId: t?.sessionId ?? null,
      sessionDisplayId: t?.sessionId ?? null,
      lastRunId: t?.lastId ?? null,
      lastRunStatus: t?.lastStatus ?? null,
      lastRunAt: iso(t?.lastAt ?? null),
      lastError,
      runCount: t?.runCount ?? 0,
      totalInputTokens: n(t?.inputTokens),
      totalCachedInputTokens: n(t?.cachedInputTokens),
      totalOutputTokens: n(t?.outputTokens),
      totalCostCents: n(t?.costCents),
      spentMonthlyCents: agent.spentMonthlyCents,
      createdAt: iso(t?.firstAt ?? null),
      updatedAt: iso(t?.lastUpdatedAt ?? null),
    };
  }
}
