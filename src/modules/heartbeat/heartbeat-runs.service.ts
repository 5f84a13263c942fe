import { Injectable } from '@nestjs/common';
import type { Actor } from '../../common/auth/actor';
import { CompanyAccessService } from '../../common/auth/company-access.service';
import { conflict, DomainError, forbidden, notFound } from '../../common/errors/domain-error';
import { isUuid } from '../../common/http/uuid';
import { Db } from '../../database/db.service';
import { outcomeFromReport } from './adapters/http.adapter';
import { CompleteRunDto, ListRunsQueryDto, RunLogResponseDto, SchedulerHeartbeatDto } from './dto/heartbeat.dto';
import { heartbeatPolicy, RunResponse, RunRow, toRunResponse } from './heartbeat.types';
import { RunLifecycle } from './run-lifecycle.service';
import { RunLogService } from './run-log.service';
import { loadRun } from './run-store';

const snakeToCamel = (s: string) => s.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
const ISSUE_SUMMARY_FIELDS = ['id', 'identifier', 'title', 'status', 'priority', 'project_id', 'goal_id', 'parent_id', 'assignee_agent_id', 'checkout_run_id', 'updated_at'];

/** Reading runs and their logs; the board's cancel; the async adapters' completion callback. */
@Injectable()
export class HeartbeatRunsService {
  constructor(
    private readonly db: Db,
    private readonly companies: CompanyAccessService,
    private readonly lifecycle: RunLifecycle,
    private readonly logs: RunLogService,
  ) {}

  /** The run, after the caller's company access is checked; 404 for unknown ids. */
  async getAccessible(actor: Actor, runId: string): Promise<RunRow> {
    const run = isUuid(runId) ? await loadRun(this.db, runId) : null;
    if (!run) throw notFound('Heartbeat run');
    await this.companies.assertAccessToKnownCompany(actor, run.company_id);
    return run;
  }

  async get(actor: Actor, runId: string): Promise<RunResponse> {
    return toRunResponse(await this.getAccessible(actor, runId));
  }

  async list(companyId: string, q: ListRunsQueryDto): Promise<RunResponse[]> {
    const params: unknown[] = [companyId];
    const where = ['company_id = $1'];
    if (q.agentId) where.push(`agent_id = $${params.push(q.agentId)}`);
    if (q.status) where.push(`status = $${params.push(q.status)}`);
    if (q.issueId) where.push(`issue_id = $${params.push(q.issueId)}`);
    const limit = q.limit ?? 50;
    const offset = q.offset ?? 0;
    const rows = await this.db.query<RunRow>(
      `SELECT * FROM heartbeat_runs WHERE ${where.join(' AND ')} ORDER BY created_at DESC, id DESC LIMIT ${limit} OFFSET ${offset}`,
      params,
    );
    return rows.map(toRunResponse);
  }

  async readLog(actor: Actor, runId: string, offset: number, limit: number): Promise<RunLogResponseDto> {
    const run = await this.getAccessible(actor, runId);
    const r = this.logs.read(run.log_path, offset, limit);
    const ended = run.status !== 'queued' && run.status !== 'running';
    return { runId: run.id, offset, nextOffset: r.nextOffset, size: r.size, content: r.content, eof: ended && r.nextOffset >= r.size };
  }

  async cancel(actor: Actor, runId: string): Promise<RunResponse> {
    const run = await this.getAccessible(actor, runId);
    if (run.status !== 'queued' && run.status !== 'running') {
      throw conflict(`Run already ended (${run.status})`, 'run_not_live', { status: run.status });
    }
    const ended = await this.lifecycle.finishRun(run.id, { status: 'cancelled', errorCode: 'cancelled_by_board', error: 'cancelled by the board' }, { actor });
    return toRunResponse(ended ?? (await loadRun(this.db, run.id))!);
  }

  /** Async adapters report the end of a run, authenticated as that run (run token or key + run header). */
  async complete(actor: Actor, runId: string, dto: CompleteRunDto): Promise<RunResponse> {
    const run = await this.getAccessible(actor, runId);
    if (actor.kind !== 'agent' || actor.agentId !== run.agent_id || actor.runId !== run.id) {
      throw forbidden('Only the run itself may complete it (its run token, or X-Service-Run-Id naming it)');
    }
    if (run.status !== 'running' && run.status !== 'queued') {
      throw conflict(`Run already ended (${run.status})`, 'run_not_live', { status: run.status });
    }
    const report = outcomeFromReport(dto);
    const status = dto.status ?? 'succeeded';
    const ended = await this.lifecycle.finishRun(run.id, {
      status,
      errorCode: status === 'failed' ? 'remote_reported_failure' : null,
      error: status === 'failed' ? (dto.error ?? 'the remote reported a failure') : null,
      usage: report.usage,
      result: report.result,
    }, { actor });
    if (!ended) throw new DomainError(409, 'run_not_live', 'Run already ended');
    return toRunResponse(ended);
  }

  /** Runs touching an issue: bound to it, woken for it, or named by the issue's activity. */
  async issueRuns(actor: Actor, issueId: string): Promise<RunResponse[]> {
    if (!isUuid(issueId)) throw notFound('Issue');
    const companyId = await this.issueCompany(issueId);
    if (companyId === undefined) throw notFound('Issue');
    const rows = await this.db.query<RunRow>(
      `SELECT * FROM heartbeat_runs r
        WHERE ($2::uuid IS NULL OR r.company_id = $2)
          AND (r.issue_id = $1 OR r.context_snapshot->>'issueId' = $3 OR r.context_snapshot->'payload'->>'issueId' = $3
               OR r.id IN (SELECT a.run_id FROM activity_log a WHERE a.entity_type = 'issue' AND a.entity_id = $3 AND a.run_id IS NOT NULL))
        ORDER BY r.created_at DESC LIMIT 500`,
      [issueId, companyId, issueId],
    );
    const owner = companyId ?? rows[0]?.company_id;
    if (owner) await this.companies.assertAccessToKnownCompany(actor, owner);
    return rows.map(toRunResponse);
  }

  /** Compact summaries of the issues a run touched; [] for unknown runs or without an issues table. */
  async runIssues(actor: Actor, runId: string): Promise<Record<string, unknown>[]> {
    const run = isUuid(runId) ? await loadRun(this.db, runId) : null;
    if (!run) return [];
    await this.companies.assertAccessToKnownCompany(actor, run.company_id);
    if (!(await this.hasIssuesTable())) return [];
    const rows = await this.db.query<{ row: Record<string, unknown> }>(
      `SELECT to_jsonb(i.*) AS row FROM issues i
        WHERE i.company_id = $1 AND (i.id = $2 OR to_jsonb(i)->>'checkout_run_id' = $3
              OR i.id::text IN (SELECT a.entity_id FROM activity_log a WHERE a.run_id = $4 AND a.entity_type = 'issue'))
        LIMIT 200`,
      [run.company_id, run.issue_id, run.id, run.id],
    );
    return rows.map(({ row }) => Object.fromEntries(ISSUE_SUMMARY_FIELDS.filter((f) => f in row).map((f) => [snakeToCamel(f), row[f]])));
  }

  /** Agents with a timer: next due time and last run. Board callers see the companies they can access. */
  async schedulerHeartbeats(actor: Actor): Promise<SchedulerHeartbeatDto[]> {
    const ids = await this.companies.accessibleCompanyIds(actor);
    const rows = await this.db.query<Record<string, unknown> & { runtime_config: Record<string, unknown> }>(
      `SELECT a.id, a.company_id, a.name, a.status, a.runtime_config, a.heartbeat_next_due_at, a.heartbeat_last_fired_at,
              lr.id AS run_id, lr.status AS run_status, lr.invocation_source, lr.created_at AS run_created_at, lr.finished_at AS run_finished_at
         FROM agents a
         LEFT JOIN LATERAL (SELECT * FROM heartbeat_runs r WHERE r.agent_id = a.id ORDER BY r.created_at DESC LIMIT 1) lr ON true
        WHERE a.status <> 'terminated' AND jsonb_typeof(a.runtime_config->'heartbeat') = 'object'
          AND a.runtime_config->'heartbeat'->>'enabled' = 'true'
          AND ($1::uuid[] IS NULL OR a.company_id = ANY($1::uuid[]))
        ORDER BY a.heartbeat_next_due_at NULLS LAST, a.id LIMIT 1000`,
      [ids ?? null],
    );
    const iso = (v: unknown) => (v ? new Date(v as string).toISOString() : null);
    return rows.map((r) => {
      const p = heartbeatPolicy(r.runtime_config);
      return {
        agentId: r.id as string,
        companyId: r.company_id as string,
        agentName: r.name as string,
        agentStatus: r.status as string,
        enabled: p.enabled,
        intervalSec: p.intervalSec,
        nextDueAt: iso(r.heartbeat_next_due_at),
        lastFiredAt: iso(r.heartbeat_last_fired_at),
        lastRun: r.run_id
          ? { id: r.run_id as string, status: r.run_status as string, invocationSource: r.invocation_source as string, createdAt: iso(r.run_created_at)!, finishedAt: iso(r.run_finished_at) }
          : null,
      };
    });
  }

  private async hasIssuesTable(): Promise<boolean> {
    const [t] = await this.db.query<{ exists: boolean }>(`SELECT to_regclass('public.issues') IS NOT NULL AS exists`);
    return !!t?.exists;
  }

  /** The issue's company; null when the issues table does not exist here; undefined for an unknown issue. */
  private async issueCompany(issueId: string): Promise<string | null | undefined> {
    if (!(await this.hasIssuesTable())) return null;
    const [row] = await this.db.query<{ company_id: string }>('SELECT company_id FROM issues WHERE id = $1', [issueId]);
    return row ? row.company_id : undefined;
  }
}
