import { Injectable } from '@nestjs/common';
import { InstanceRepository } from '../../database/company-scoped.repository';
import { Db } from '../../database/db.service';

/** The advisory lock key runMigrations holds (src/database/data-source.ts): held means a migration is running somewhere. */
const MIGRATION_LOCK = 7_214_001;

/** The gauges count every company's rows: instance-wide operator metrics, never one tenant's view. */
const GAUGE = "instance-wide gauge for the operators' GET /api/metrics: counts over all companies";

/**
 * Read-only counts for the operators' metrics. They read tables of the heartbeat and budgets
 * modules (runs, wakeups, budget incidents): a cross-domain read kept in the owner of the page
 * it serves (GET /api/metrics), never a write (FOREIGN_READS in src/database/table-owners.ts).
 */
@Injectable()
export class MetricsRepository extends InstanceRepository {
  constructor(db: Db) {
    super(db);
  }

  async runsByStatus(): Promise<Array<{ status: string; n: number }>> {
    const rows = await this.unscoped<{ status: string; n: string }>(
      GAUGE,
      `SELECT status, count(*) AS n FROM heartbeat_runs GROUP BY status`,
    );
    return rows.map((r) => ({ status: r.status, n: Number(r.n) }));
  }

  async wakeupsByStatus(): Promise<Array<{ status: string; n: number }>> {
    const rows = await this.unscoped<{ status: string; n: string }>(
      GAUGE,
      `SELECT status, count(*) AS n FROM agent_wakeup_requests WHERE status IN ('queued','deferred','claimed') GROUP BY status`,
    );
    return rows.map((r) => ({ status: r.status, n: Number(r.n) }));
  }

  async budgetIncidents(): Promise<Array<{ kind: string; status: string; n: number }>> {
    const rows = await this.unscoped<{ kind: string; status: string; n: string }>(
      GAUGE,
      `SELECT kind, status, count(*) AS n FROM budget_incidents GROUP BY kind, status`,
    );
    return rows.map((r) => ({ kind: r.kind, status: r.status, n: Number(r.n) }));
  }

  /** Whether a migration runs somewhere (its advisory lock is held); rejects when the database is unreachable. */
  async migrationRunning(): Promise<boolean> {
    const lock = await this.row<{ held: boolean }>(
      `SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND database = (SELECT oid FROM pg_database WHERE datname = current_database()) AND classid = 0 AND objid = $1 AND granted) AS held`,
      [MIGRATION_LOCK],
    );
    return Boolean(lock?.held);
  }
}
