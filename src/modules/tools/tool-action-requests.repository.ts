import { Injectable } from '@nestjs/common';
import { CompanyScopedRepository } from '../../database/company-scoped.repository';
import { Db } from '../../database/db.service';
import type { ActionRequest, ActionRequestStatus } from './tool.types';

/** `expired` is a pending request past its expiry, by the database's clock at the read. */
const STATUS = `CASE WHEN r.status = 'pending' AND r.expires_at <= now() THEN 'expired' ELSE r.status END`;
const REQUEST = `r.id, r.company_id AS "companyId", r.agent_id AS "agentId", r.run_id AS "runId", r.connection_id AS "connectionId",
  r.tool_name AS "toolName", r.arguments, r.arguments_digest AS "argumentsDigest", ${STATUS} AS status,
  r.decision_reason AS "decisionReason", r.decided_by_user_id AS "decidedByUserId", r.decided_at AS "decidedAt",
  r.expires_at AS "expiresAt", r.executed_at AS "executedAt", r.created_at AS "createdAt", r.updated_at AS "updatedAt"`;

export interface ListedActionRequest extends ActionRequest {
  connectionName: string;
  applicationId: string;
  applicationName: string;
  toolTitle: string | null;
}

/** Calls of "ask" tools waiting for the board (tool_action_requests). */
@Injectable()
export class ToolActionRequestsRepository extends CompanyScopedRepository {
  constructor(db: Db) {
    super(db);
  }

  list(companyId: string, status: ActionRequestStatus | 'all', limit: number): Promise<ListedActionRequest[]> {
    return this.rows(
      companyId,
      `SELECT ${REQUEST}, c.name AS "connectionName", c.application_id AS "applicationId", a.name AS "applicationName", e.title AS "toolTitle"
         FROM tool_action_requests r
         JOIN tool_connections c ON c.company_id = r.company_id AND c.id = r.connection_id
         JOIN tool_applications a ON a.company_id = c.company_id AND a.id = c.application_id
         LEFT JOIN tool_catalog_entries e ON e.company_id = r.company_id AND e.connection_id = r.connection_id AND e.tool_name = r.tool_name
        WHERE r.company_id = $1 AND ($2 = 'all' OR ${STATUS} = $2)
        ORDER BY r.created_at DESC, r.id LIMIT $3`,
      [status, limit],
    );
  }

  find(companyId: string, id: string): Promise<ActionRequest | null> {
    return this.row(companyId, `SELECT ${REQUEST} FROM tool_action_requests r WHERE r.company_id = $1 AND r.id = $2`, [id]);
  }

  /** These requests of the company (the ones a run's calls waited on). */
  findMany(companyId: string, ids: string[]): Promise<ActionRequest[]> {
    if (!ids.length) return Promise.resolve([]);
    return this.rows(companyId, `SELECT ${REQUEST} FROM tool_action_requests r WHERE r.company_id = $1 AND r.id = ANY($2::uuid[])`, [ids]);
  }

  /**
   * The open request of the same call (agent, connection, tool, arguments): pending and not expired,
   * or approved and not yet used. The newest one.
   */
  findOpen(companyId: string, agentId: string, connectionId: string, toolName: string, digest: string): Promise<ActionRequest | null> {
    return this.row(
      companyId,
      `SELECT ${REQUEST} FROM tool_action_requests r
        WHERE r.company_id = $1 AND r.agent_id = $2 AND r.connection_id = $3 AND r.tool_name = $4 AND r.arguments_digest = $5
          AND ((r.status = 'pending' AND r.expires_at > now()) OR r.status = 'approved')
        ORDER BY r.created_at DESC LIMIT 1`,
      [agentId, connectionId, toolName, digest],
    );
  }

  /** The latest request of this call whatever its state (to tell a caller it was declined or timed out). */
  findLatest(companyId: string, agentId: string, connectionId: string, toolName: string, digest: string): Promise<ActionRequest | null> {
    return this.row(
      companyId,
      `SELECT ${REQUEST} FROM tool_action_requests r
        WHERE r.company_id = $1 AND r.agent_id = $2 AND r.connection_id = $3 AND r.tool_name = $4 AND r.arguments_digest = $5
        ORDER BY r.created_at DESC LIMIT 1`,
      [agentId, connectionId, toolName, digest],
    );
  }

  /** A new pending request; it expires `timeoutSec` after now() (the database's clock). */
  async insert(
    companyId: string,
    r: {
      agentId: string;
      runId: string | null;
      connectionId: string;
      toolName: string;
      arguments: Record<string, unknown>;
      digest: string;
    },
    timeoutSec: number,
  ): Promise<ActionRequest> {
    const [row] = await this.rows<ActionRequest>(
      companyId,
      `INSERT INTO tool_action_requests AS r (company_id, agent_id, run_id, connection_id, tool_name, arguments, arguments_digest, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, now() + make_interval(secs => $8)) RETURNING ${REQUEST}`,
      [r.agentId, r.runId, r.connectionId, r.toolName, JSON.stringify(r.arguments), r.digest, timeoutSec],
    );
    return row;
  }

  /**
   * The board's decision: only a pending request that has not expired changes (the database decides
   * the race between a decision and the expiry, and between two deciders). Null when it did not.
   */
  async decide(
    companyId: string,
    id: string,
    status: 'approved' | 'rejected',
    userId: string,
    reason: string | null,
  ): Promise<ActionRequest | null> {
    const [row] = await this.returning<ActionRequest>(
      companyId,
      `UPDATE tool_action_requests r SET status = $3, decided_by_user_id = $4, decision_reason = $5, decided_at = now(), updated_at = now()
        WHERE r.company_id = $1 AND r.id = $2 AND r.status = 'pending' AND r.expires_at > now() RETURNING ${REQUEST}`,
      [id, status, userId, reason],
    );
    return row ?? null;
  }

  /** Uses an approval once: true for the one caller that takes it. */
  async consume(companyId: string, id: string): Promise<boolean> {
    const rows = await this.returning<{ id: string }>(
      companyId,
      `UPDATE tool_action_requests SET status = 'executed', executed_at = now(), updated_at = now()
        WHERE company_id = $1 AND id = $2 AND status = 'approved' RETURNING id`,
      [id],
    );
    return rows.length === 1;
  }

  async markFailed(companyId: string, id: string): Promise<void> {
    await this.rows(companyId, `UPDATE tool_action_requests SET status = 'failed', updated_at = now() WHERE company_id = $1 AND id = $2`, [
      id,
    ]);
  }

  /** Pending (unexpired) requests per connection of the company. */
  pendingByConnection(companyId: string): Promise<Array<{ connectionId: string; count: number }>> {
    return this.rows(
      companyId,
      `SELECT connection_id AS "connectionId", count(*)::int AS count FROM tool_action_requests
        WHERE company_id = $1 AND status = 'pending' AND expires_at > now() GROUP BY connection_id`,
    );
  }
}
