import { Injectable } from '@nestjs/common';
import { Db } from '../../database/db.service';

/** The advisory lock key runMigrations holds (src/database/data-source.ts): held means a migration is running somewhere. */
const MIGRATION_LOCK = 7_214_001;

/**
 * Read-only counts for the operators' metrics. They read tables of the heartbeat and budgets
 * modules (runs, wakeups, budget incidents): a cross-domain read kept in the owner of the page
 * it serves (GET /api/metrics), never a write.
 */
@Injectable()
export class MetricsRepository {
  constructor(private readonly db: Db) {}

  async runsByStatus(): Promise<Array<{ status: string; n: number }>> {
    const rows = await this.db.query<{ status: string; n: string }>(`SELECT status, count(*) AS n FROM heartbeat_runs GROUP BY status`);
    return rows.map((r) => ({ status: r.status, n: Number(r.n) }));
  }

  async wakeupsByStatus(): Promise<Array<{ status: string; n: number }>> {
    const rows = await this.db.query<{ status: string; n: string }>(
      `SELECT status, count(*) AS n FROM agent_wakeup_requests WHERE status IN ('queued','deferred','claimed') GROUP BY status`,
    );
    return rows.map((r) => ({ status: r.status, n: Number(r.n) }));
  }

  async budgetIncidents(): Promise<Array<{ kind: string; status: string; n: number }>> {
    const rows = await this.db.query<{ kind: string; status: string; n: string }>(
      `SELECT kind, status, count(*) AS n FROM budget_incidents GROUP BY kind, status`,
    );
    return rows.map((r) => ({ kind: r.kind, status: r.status, n: Number(r.n) }));
  }

  /** Readiness of the database: reachable, no migration running, none pending for this build. */
  async readiness(): Promise<{ reachable: boolean; migrating: boolean; pendingMigrations: boolean }> {
    try {
      const [lock] = await this.db.query<{ held: boolean }>(
        `SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND database = (SELECT oid FROM pg_database WHERE datname = current_database()) AND classid = 0 AND objid = $1 AND granted) AS held`,
        [MIGRATION_LOCK],
      );
      const pending = await this.db.dataSource.showMigrations();
      return { reachable: true, migrating: lock.held, pendingMigrations: pending };
    } catch {
      return { reachable: false, migrating: false, pendingMigrations: false };
    }
  }
}
