import { Injectable } from '@nestjs/common';
import type { Actor } from '../../common/auth/actor';
import { CompanyAccessService } from '../../common/auth/company-access.service';
import { badRequest, forbidden, notFound } from '../../common/errors/domain-error';
import { decodeCursor, KeysetCursor, keysetPage } from '../../common/http/keyset-cursor';
import { isUuid } from '../../common/http/uuid';
import { iso, isoRequired } from '../../database/row-mapping';
import { outcomeFromReport } from '../adapters/executor-kit';
import { CompleteRunDto, ListRunsQueryDto, LiveRunDto, RunLogResponseDto, SchedulerHeartbeatDto } from './dto/heartbeat.dto';
import { HeartbeatAgents } from './heartbeat-agents.port';
import { HeartbeatRunsRepository, RunListFilter } from './heartbeat-runs.repository';
import { heartbeatError } from './heartbeat.errors';
import { heartbeatPolicy, RunResponse, RunRecord, toRunResponse } from './heartbeat.types';
import { RunLifecycle } from './run-lifecycle.service';
import { RunLogService } from './run-log.service';

/** Reading runs and their logs; the board's cancel; the async adapters' completion callback. */
@Injectable()
export class HeartbeatRunsService {
  constructor(
    private readonly companies: CompanyAccessService,
    private readonly lifecycle: RunLifecycle,
    private readonly logs: RunLogService,
    private readonly runsRepo: HeartbeatRunsRepository,
    private readonly agents: HeartbeatAgents,
  ) {}

  /**
   * The run of the route's company (`companyId`: resolved and checked by the guard, undefined when
   * it knows no such run): 404 for an unknown run and another company's alike.
   */
  async getInRoute(companyId: string | undefined, runId: string): Promise<RunRecord> {
    const run = companyId && isUuid(runId) ? await this.runsRepo.findById(companyId, runId) : null;
    if (!run) throw notFound('Heartbeat run');
    return run;
  }

  /** The run if it is one of this company's (null for an unknown id, or another company's run). */
  async findInCompany(companyId: string, runId: string): Promise<RunRecord | null> {
    return isUuid(runId) ? this.runsRepo.findById(companyId, runId) : null;
  }

  async get(companyId: string | undefined, runId: string): Promise<RunResponse> {
    return toRunResponse(await this.getInRoute(companyId, runId));
  }

  /** Newest first; filters agentId, status, issueId; keyset pages (`cursor`), or the deprecated `offset`. */
  async list(companyId: string, q: ListRunsQueryDto): Promise<{ items: RunResponse[]; nextCursor: string | null }> {
    if (q.cursor !== undefined && q.offset !== undefined) throw badRequest('Use either cursor or offset, not both');
    const limit = q.limit ?? 50;
    const filter = { agentId: q.agentId, status: q.status, issueId: q.issueId, limit };
    if (q.offset) {
      // deprecated offset paging: walk the keyset pages up to the offset (bounded by the DTO)
      let after: KeysetCursor | undefined;
      for (let skipped = 0; skipped < q.offset;) {
        const step = Math.min(200, q.offset - skipped);
        const rows = await this.runsRepo.list(companyId, { ...filter, limit: step, after });
        if (rows.length <= step) return { items: [], nextCursor: null };
        const last = rows[step - 1];
        after = { createdAt: last.cursorTs, id: last.id };
        skipped += step;
      }
      return this.page(companyId, { ...filter, after });
    }
    return this.page(companyId, { ...filter, after: q.cursor ? decodeCursor(q.cursor) : undefined });
  }

  private async page(companyId: string, f: RunListFilter): Promise<{ items: RunResponse[]; nextCursor: string | null }> {
    const { rows, nextCursor } = keysetPage(await this.runsRepo.list(companyId, f), f.limit);
    return { items: rows.map(toRunResponse), nextCursor };
  }

  /** Ids of the issue's comments whose wakes wait for a run (see the repository). */
  pendingWakeCommentIds(companyId: string, issueId: string): Promise<string[]> {
    return this.runsRepo.pendingWakeCommentIds(companyId, issueId);
  }

  /** Queued and running runs of the company, with agent name and last output time. */
  async live(companyId: string, limit: number, issue?: { id: string; checkoutRunId: string | null }, minCount = 0): Promise<LiveRunDto[]> {
    const scope = { issueId: issue?.id, checkoutRunId: issue?.checkoutRunId };
    const rows = await this.runsRepo.live(companyId, { ...scope, limit });
    // minCount: fewer live runs than that are topped up with the most recent ended ones (the board's "recent runs" cards)
    const fill = Math.min(minCount, limit) - rows.length;
    if (fill > 0) rows.push(...(await this.runsRepo.live(companyId, { ...scope, limit: fill, finished: true })));
    return rows.map((r) => ({
      id: r.id,
      companyId: r.companyId,
      status: r.status,
      agentId: r.agentId,
      agentName: r.agentName,
      adapterType: r.adapterType,
      invocationSource: r.invocationSource,
      triggerDetail: r.triggerDetail,
      wakeReason: r.wakeReason,
      issueId: r.issueId,
      contextCommentId: r.commentId,
      startedAt: iso(r.startedAt),
      finishedAt: iso(r.finishedAt),
      createdAt: isoRequired(r.createdAt),
      logBytes: Number(r.logBytes ?? 0),
      lastOutputAt: iso(r.lastOutputAt),
    }));
  }

  async readLog(companyId: string | undefined, runId: string, offset: number, limit: number): Promise<RunLogResponseDto> {
    const run = await this.getInRoute(companyId, runId);
    const r = this.logs.read(run.logPath, offset, limit);
    const ended = run.status !== 'queued' && run.status !== 'running';
    const eof = ended && r.nextOffset >= r.size;
    // the board UI offers "Load more log" while nextOffset is present: none once the log is final and read
    return { runId: run.id, offset, ...(eof ? {} : { nextOffset: r.nextOffset }), size: r.size, content: r.content, eof };
  }

  /** The board, or the run's own agent (any of its credentials), cancels a live run. */
  async cancel(actor: Actor, companyId: string | undefined, runId: string): Promise<RunResponse> {
    const run = await this.getInRoute(companyId, runId);
    if (actor.kind === 'agent' && actor.agentId !== run.agentId) throw forbidden('An agent may cancel only its own runs');
    if (run.status !== 'queued' && run.status !== 'running') {
      throw heartbeatError('run_not_live', `Run already ended (${run.status})`, { status: run.status });
    }
    const by =
      actor.kind === 'agent'
        ? { errorCode: 'cancelled_by_agent', error: 'cancelled by its agent' }
        : { errorCode: 'cancelled_by_board', error: 'cancelled by the board' };
    const ended = await this.lifecycle.finishRun(run.id, { status: 'cancelled', ...by }, { actor });
    return toRunResponse(ended ?? (await this.runsRepo.findById(run.companyId, run.id))!);
  }

  /** Async adapters report the end of a run, authenticated as that run (run token or key + run header). */
  async complete(actor: Actor, companyId: string | undefined, runId: string, dto: CompleteRunDto): Promise<RunResponse> {
    const run = await this.getInRoute(companyId, runId);
    if (actor.kind !== 'agent' || actor.agentId !== run.agentId || actor.runId !== run.id) {
      throw forbidden('Only the run itself may complete it (its run token, or X-Service-Run-Id naming it)');
    }
    if (run.status !== 'running' && run.status !== 'queued') {
      throw heartbeatError('run_not_live', `Run already ended (${run.status})`, { status: run.status });
    }
    const report = outcomeFromReport(dto);
    const status = dto.status ?? 'succeeded';
    const ended = await this.lifecycle.finishRun(
      run.id,
      {
        status,
        errorCode: status === 'failed' ? 'remote_reported_failure' : null,
        error: status === 'failed' ? (dto.error ?? 'the remote reported a failure') : null,
        usage: report.usage,
        result: report.result,
      },
      { actor },
    );
    if (!ended) throw heartbeatError('run_not_live', 'Run already ended');
    return toRunResponse(ended);
  }

  /** Agents with a timer: next due time and last run. Board callers see the companies they can access. */
  async schedulerHeartbeats(actor: Actor): Promise<SchedulerHeartbeatDto[]> {
    const ids = await this.companies.accessibleCompanyIds(actor);
    const agents = await this.agents.timerAgents(ids ?? null);
    const latest = new Map((await this.runsRepo.latestOfAgents(agents.map((a) => a.id))).map((r) => [r.agentId, r]));
    return agents.map((r) => {
      const p = heartbeatPolicy(r.runtimeConfig);
      const run = latest.get(r.id);
      return {
        agentId: r.id,
        companyId: r.companyId,
        agentName: r.name,
        agentStatus: r.status,
        enabled: p.enabled,
        intervalSec: p.intervalSec,
        nextDueAt: iso(r.heartbeatNextDueAt),
        lastFiredAt: iso(r.heartbeatLastFiredAt),
        lastRun: run
          ? {
              id: run.id,
              status: run.status,
              invocationSource: run.invocationSource,
              createdAt: isoRequired(run.createdAt),
              finishedAt: iso(run.finishedAt),
            }
          : null,
      };
    });
  }
}
