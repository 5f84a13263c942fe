import { Injectable } from '@nestjs/common';
import { CompanyScopedRepository } from '../../database/company-scoped.repository';
import { Db } from '../../database/db.service';
import type { RunRecord } from './heartbeat.types';
import { runRecordColumns } from './heartbeat-runs.repository';

/**
 * heartbeat_runs as the dispatcher and the reaper see it: claims across companies, leases, the
 * sweeps for expired leases and lost instances (these go to the pool, outside any transaction, as
 * they always did), and the checks of run credentials (run tokens, live runs).
 */
@Injectable()
export class RunClaimsRepository extends CompanyScopedRepository {
  constructor(db: Db) {
    super(db);
  }

  /** The oldest queued run of each agent under its concurrency limit, oldest first. */
  // reads agents (owned by agents): the dispatcher's claim, see FOREIGN_READS
  claimCandidates(limit: number): Promise<Array<{ id: string; companyId: string; agentId: string; createdAt: Date }>> {
    return this.unscoped<{ id: string; companyId: string; agentId: string; createdAt: Date }>(
      "the dispatcher's claim: queued runs of every company, fairly by agent",
      `SELECT c.id, c.company_id AS "companyId", c.agent_id AS "agentId", c.created_at AS "createdAt" FROM (SELECT DISTINCT ON (r.agent_id) r.id, r.company_id, r.agent_id, r.created_at
                        FROM heartbeat_runs r JOIN agents a ON a.id = r.agent_id AND a.company_id = r.company_id
        WHERE r.status = 'queued'
          AND (SELECT count(*) FROM heartbeat_runs x WHERE x.agent_id = r.agent_id AND x.status = 'running')
              < CASE WHEN a.runtime_config->'heartbeat'->>'maxConcurrentRuns' ~ '^[1-9][0-9]{0,3}$'
                     THEN (a.runtime_config->'heartbeat'->>'maxConcurrentRuns')::int ELSE 1 END
        ORDER BY r.agent_id, r.created_at) c ORDER BY c.created_at LIMIT $1`,
      [limit],
      { detached: true },
    );
  }

  /** The run if still queued, with what the budget check needs. */
  async queuedForClaim(
    companyId: string,
    runId: string,
  ): Promise<{ companyId: string; contextSnapshot: { projectId?: unknown } } | undefined> {
    const queued = await this.row<{ companyId: string; contextSnapshot: { projectId?: unknown } }>(
      companyId,
      `SELECT company_id AS "companyId", context_snapshot AS "contextSnapshot" FROM heartbeat_runs WHERE company_id = $1 AND id = $2 AND status = 'queued'`,
      [runId],
    );
    return queued ?? undefined;
  }

  async countRunning(companyId: string, agentId: string): Promise<number> {
    const row = await this.row<{ n: string }>(
      companyId,
      `SELECT count(*) AS n FROM heartbeat_runs WHERE company_id = $1 AND agent_id = $2 AND status = 'running'`,
      [agentId],
    );
    return Number(row?.n ?? 0);
  }

  /** queued -> running for this instance, with a lease and the log path; null if another claimed it first. */
  async claim(companyId: string, runId: string, instanceId: string, leaseSec: number, logPath: string): Promise<RunRecord | null> {
    const [run] = await this.returning<RunRecord>(
      companyId,
      `UPDATE heartbeat_runs
          SET status = 'running', started_at = now(), claimed_by = $3, lease_expires_at = now() + make_interval(secs => $4),
              log_path = $5, updated_at = now()
        WHERE company_id = $1 AND id = $2 AND status = 'queued' RETURNING ${runRecordColumns()}`,
      [runId, instanceId, leaseSec, logPath],
    );
    return run ?? null;
  }

  /** Renews this instance's leases on its running runs (rows another statement holds are skipped), with their log sizes. */
  async renewLeases(ids: string[], bytes: number[], leaseSec: number, instanceId: string): Promise<void> {
    await this.unscoped(
      "this instance's lease renewal: the runs it executes, in any company",
      `UPDATE heartbeat_runs r SET lease_expires_at = now() + make_interval(secs => $3), log_bytes = GREATEST(r.log_bytes, v.bytes),
               last_output_at = CASE WHEN v.bytes > r.log_bytes THEN now() ELSE r.last_output_at END
           FROM unnest($1::uuid[], $2::bigint[]) AS v(id, bytes)
          WHERE r.id = v.id AND r.id IN (
            SELECT id FROM heartbeat_runs WHERE id = ANY($1::uuid[]) AND status = 'running' AND claimed_by = $4 ORDER BY id FOR UPDATE SKIP LOCKED)`,
      [ids, bytes, leaseSec, instanceId],
      { detached: true },
    );
  }

  /** Status and claimer of the runs this instance executes (any company). */
  ownership(ids: string[]): Promise<Array<{ id: string; status: string; claimedBy: string | null }>> {
    return this.unscoped<{ id: string; status: string; claimedBy: string | null }>(
      "this instance's lease renewal: who holds the runs it executes, in any company",
      `SELECT id, status, claimed_by AS "claimedBy" FROM heartbeat_runs WHERE id = ANY($1::uuid[])`,
      [ids],
      { detached: true },
    );
  }

  /** Running runs claimed by some instance, started more than 2 seconds ago. */
  runningClaimed(): Promise<Array<{ id: string; claimedBy: string }>> {
    return this.unscoped<{ id: string; claimedBy: string }>(
      "the reaper's sweep for runs of lost instances, across companies",
      `SELECT id, claimed_by AS "claimedBy" FROM heartbeat_runs WHERE status = 'running' AND claimed_by IS NOT NULL AND started_at < now() - interval '2 seconds'`,
      [],
      { detached: true },
    );
  }

  /** Up to 100 running runs whose lease has expired, oldest lease first. */
  leaseExpired(): Promise<Array<{ id: string }>> {
    return this.unscoped<{ id: string }>(
      "the reaper's sweep for expired leases, across companies",
      `SELECT id FROM heartbeat_runs WHERE status = 'running' AND lease_expires_at < now() ORDER BY lease_expires_at LIMIT 100`,
      [],
      { detached: true },
    );
  }

  /** Whether a run token's run is live (or ended within the grace) and its agent may act; no row when neither. */
  // reads agents (owned by agents): every request with a run token, see FOREIGN_READS
  tokenRun(claims: { runId: string; agentId: string; companyId: string }, graceSec: number): Promise<Array<{ live: boolean }>> {
    return this.rows<{ live: boolean }>(
      claims.companyId,
      `SELECT r.status IN ('queued','running') AS live FROM heartbeat_runs r JOIN agents a ON a.id = r.agent_id AND a.company_id = r.company_id
        WHERE r.company_id = $1 AND r.id = $2 AND r.agent_id = $3
          AND (r.status IN ('queued','running') OR r.finished_at > now() - make_interval(secs => $4))
          AND a.status NOT IN ('terminated','pending_approval')`,
      [claims.runId, claims.agentId, graceSec],
      { detached: true },
    );
  }

  /** Whether the agent's run is queued or running (the guard's run check, outside any request transaction). */
  async isLiveRun(companyId: string, runId: string, agentId: string): Promise<boolean> {
    const rows = await this.rows(
      companyId,
      `SELECT 1 FROM heartbeat_runs WHERE company_id = $1 AND id = $2 AND agent_id = $3 AND status IN ('queued','running')`,
      [runId, agentId],
      { detached: true },
    );
    return rows.length > 0;
  }
}
