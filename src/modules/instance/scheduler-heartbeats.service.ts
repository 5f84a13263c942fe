import { Injectable } from '@nestjs/common';
import { Db } from '../../database/db.service';
import { SchedulerHeartbeatDto } from './dto/admin-users.dto';

const DEFAULT_INTERVAL_SEC = 3600;

/**
 * Agents the timer scheduler wakes: `runtimeConfig.heartbeat.enabled` is true. The next due time is
 * the last run's start (or the agent's creation) plus the interval, until the heartbeat engine
 * stores its own.
 */
@Injectable()
export class SchedulerHeartbeatsService {
  constructor(private readonly db: Db) {}

  async list(): Promise<SchedulerHeartbeatDto[]> {
    const rows = await this.db.query<{
      agent_id: string;
      agent_name: string;
      agent_status: string;
      company_id: string;
      company_name: string;
      interval_sec: number;
      last_run_id: string | null;
      last_run_status: string | null;
      last_run_at: Date | null;
      next_due_at: Date;
    }>(
      `SELECT a.id AS agent_id, a.name AS agent_name, a.status AS agent_status, c.id AS company_id, c.name AS company_name,
              s.interval_sec, r.id AS last_run_id, r.status AS last_run_status, r.at AS last_run_at,
              coalesce(r.at, a.created_at) + make_interval(secs => s.interval_sec) AS next_due_at
         FROM agents a
         JOIN companies c ON c.id = a.company_id
         CROSS JOIN LATERAL (
           SELECT CASE WHEN jsonb_typeof(a.runtime_config #> '{heartbeat,intervalSec}') = 'number'
                        AND (a.runtime_config #>> '{heartbeat,intervalSec}')::numeric >= 1
                       THEN floor((a.runtime_config #>> '{heartbeat,intervalSec}')::numeric)::int
                       ELSE $1 END AS interval_sec) s
         LEFT JOIN LATERAL (
           SELECT id, status, coalesce(started_at, created_at) AS at FROM heartbeat_runs
            WHERE agent_id = a.id ORDER BY created_at DESC LIMIT 1) r ON true
        WHERE a.runtime_config #> '{heartbeat,enabled}' = 'true'::jsonb AND a.status <> 'terminated'
        ORDER BY next_due_at, a.id`,
      [DEFAULT_INTERVAL_SEC],
    );
    return rows.map((r) => ({
      agentId: r.agent_id,
      agentName: r.agent_name,
      companyId: r.company_id,
      companyName: r.company_name,
      agentStatus: r.agent_status,
      intervalSec: Number(r.interval_sec),
      lastRunId: r.last_run_id,
      lastRunStatus: r.last_run_status,
      lastRunAt: r.last_run_at ? new Date(r.last_run_at).toISOString() : null,
      nextDueAt: new Date(r.next_due_at).toISOString(),
    }));
  }
}
