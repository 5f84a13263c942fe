import { Injectable } from '@nestjs/common';
import { Db } from '../../database/db.service';
import type { RunVerifier } from './auth-registry';

/** A run is live while it is queued or running; it must belong to the calling agent. */
@Injectable()
export class DbRunVerifier implements RunVerifier {
  constructor(private readonly db: Db) {}

  async isLiveRun(runId: string, agentId: string): Promise<boolean> {
    const rows = await this.db.dataSource.query(
      `SELECT 1 FROM heartbeat_runs WHERE id = $1 AND agent_id = $2 AND status IN ('queued','running')`,
      [runId, agentId],
    );
    return rows.length > 0;
  }
}
