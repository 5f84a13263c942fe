import { Injectable } from '@nestjs/common';
import { CompanyScopedRepository } from '../../database/company-scoped.repository';
import { Db } from '../../database/db.service';
import type { WakeContext } from '../adapters/run.types';
import type { RunRecord } from './heartbeat.types';
import { WAKE_RECORD_COLUMNS, type WakeRecord } from './wakeup-requests.repository';

/** A recorded process group of a run on this host. */
export interface RecordedGroup {
  id: string;
  companyId: string;
  status: string;
  claimedBy: string | null;
  startedAt: Date | null;
  processGroupId: number;
  processStartTicks: string | null;
  graceSec: string | null;
}

const SOURCES = ['timer', 'assignment', 'on_demand', 'automation'];
const TRIGGERS = ['manual', 'ping', 'callback', 'system'];
const wakeSource = (v: unknown) => (typeof v === 'string' && SOURCES.includes(v) ? v : 'automation');
const wakeTrigger = (v: unknown) => (typeof v === 'string' && TRIGGERS.includes(v) ? v : null);

/**
 * The engine's crash-recovery statements on heartbeat_runs and agent_wakeup_requests: process
 * groups recorded per run (engine-wide, across companies, like the reaper), and wakes re-queued
 * after an instance loss.
 */
@Injectable()
export class RunRecoveryRepository extends CompanyScopedRepository {
  constructor(db: Db) {
    super(db);
  }

  async recordGroup(companyId: string, runId: string, pgid: number, host: string, startTicks: number | null): Promise<void> {
    await this.returning(
      companyId,
      `UPDATE heartbeat_runs SET process_group_id = $3, process_host = $4, process_start_ticks = $5 WHERE company_id = $1 AND id = $2`,
      [runId, pgid, host, startTicks],
      { detached: true },
    );
  }

  async forgetGroup(companyId: string, runId: string, pgid?: number): Promise<void> {
    await this.returning(
      companyId,
      `UPDATE heartbeat_runs SET process_group_id = NULL WHERE company_id = $1 AND id = $2 ${pgid === undefined ? '' : 'AND process_group_id = $3'}`,
      pgid === undefined ? [runId] : [runId, pgid],
      { detached: true },
    );
  }

  /** Runs of this host that still have a recorded process group (excluding the given live ones). */
  // reads agents (owned by agents): each run's grace period, see FOREIGN_READS
  groupsOnHost(host: string, exceptRunIds: string[]): Promise<RecordedGroup[]> {
    return this.unscoped<RecordedGroup>(
      "the recovery sweep of this host's process groups, across companies",
      `SELECT r.id, r.company_id AS "companyId", r.status, r.claimed_by AS "claimedBy", r.started_at AS "startedAt",
              r.process_group_id AS "processGroupId", r.process_start_ticks AS "processStartTicks", a.adapter_config->>'graceSec' AS "graceSec"
         FROM heartbeat_runs r LEFT JOIN agents a ON a.id = r.agent_id AND a.company_id = r.company_id
        WHERE r.process_host = $1 AND r.process_group_id IS NOT NULL AND NOT (r.id = ANY($2::uuid[]))
        LIMIT 500`,
      [host, exceptRunIds],
      { detached: true },
    );
  }

  /** Wakes of a run that were themselves a retry (a second loss is final). */
  async isRetry(companyId: string, wakeIds: string[]): Promise<boolean> {
    if (wakeIds.length === 0) return false;
    const row = await this.row<{ n: string }>(
      companyId,
      `SELECT count(*) AS n FROM agent_wakeup_requests WHERE company_id = $1 AND id = ANY($2::uuid[]) AND retry_of_run_id IS NOT NULL`,
      [wakeIds],
    );
    return Number(row?.n ?? 0) > 0;
  }

  /** A copy of the lost run's wake, pointing at it; `deferred` waits for the agent's live run on the issue. */
  async insertRetryWake(run: RunRecord, context: WakeContext, status: 'queued' | 'deferred'): Promise<WakeRecord> {
    const [row] = await this.rows<WakeRecord>(
      run.companyId,
      `INSERT INTO agent_wakeup_requests
         (company_id, agent_id, source, trigger_detail, reason, payload, issue_id, force_fresh_session, status,
          requested_by_actor_type, requested_by_actor_id, retry_of_run_id)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 'system', 'heartbeat_retry', $10)
       RETURNING ${WAKE_RECORD_COLUMNS}`,
      [
        run.agentId,
        wakeSource(context.source ?? run.invocationSource),
        wakeTrigger(context.triggerDetail ?? run.triggerDetail),
        context.reason ?? null,
        context.payload ?? {},
        run.issueId,
        context.forceFreshSession === true,
        status,
        run.id,
      ],
    );
    return row;
  }
}
