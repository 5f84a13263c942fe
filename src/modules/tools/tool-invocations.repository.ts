import { Injectable } from '@nestjs/common';
import { CompanyScopedRepository } from '../../database/company-scoped.repository';
import { Db } from '../../database/db.service';
import type { InvocationDecision, InvocationStatus, ToolInvocation } from './tool.types';

const INVOCATION = `i.id, i.company_id AS "companyId", i.agent_id AS "agentId", i.run_id AS "runId", i.connection_id AS "connectionId",
  c.name AS "connectionName", c.tool_prefix AS "toolPrefix", i.tool_name AS "toolName", i.tool_use_id AS "toolUseId",
  i.decision, i.status, i.action_request_id AS "actionRequestId", i.reason_code AS "reasonCode", i.duration_ms AS "durationMs",
  i.result_bytes AS "resultBytes", i.created_at AS "createdAt", i.started_at AS "startedAt", i.finished_at AS "finishedAt"`;

/** The statuses after which a call is over (its row is finished when written). */
const FINAL: ReadonlySet<InvocationStatus> = new Set(['succeeded', 'failed', 'denied', 'timed_out']);

export interface NewInvocation {
  agentId: string;
  runId: string | null;
  connectionId: string;
  toolName: string;
  toolUseId: string | null;
  decision: InvocationDecision;
  status: InvocationStatus;
  actionRequestId?: string | null;
  reasonCode?: string | null;
}

export interface InvocationEnd {
  status: InvocationStatus;
  reasonCode: string | null;
  durationMs?: number;
  resultBytes?: number;
}

/** Each gateway call, from its start to its end (tool_invocations). */
@Injectable()
export class ToolInvocationsRepository extends CompanyScopedRepository {
  constructor(db: Db) {
    super(db);
  }

  /** A call as it starts: executing (started now), waiting for the board, or already over (denied, refused). */
  async insert(companyId: string, n: NewInvocation): Promise<string> {
    const [row] = await this.rows<{ id: string }>(
      companyId,
      `INSERT INTO tool_invocations (company_id, agent_id, run_id, connection_id, tool_name, tool_use_id, decision, status,
                                     action_request_id, reason_code, started_at, finished_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, CASE WHEN $8 = 'executing' THEN now() END, CASE WHEN $11 THEN now() END)
       RETURNING id`,
      [
        n.agentId,
        n.runId,
        n.connectionId,
        n.toolName,
        n.toolUseId,
        n.decision,
        n.status,
        n.actionRequestId ?? null,
        n.reasonCode ?? null,
        FINAL.has(n.status),
      ],
    );
    return row.id;
  }

  /** An approved call goes on to the remote server. */
  async executing(companyId: string, id: string): Promise<void> {
    await this.rows(
      companyId,
      `UPDATE tool_invocations SET status = 'executing', started_at = now() WHERE company_id = $1 AND id = $2 AND finished_at IS NULL`,
      [id],
    );
  }

  /** The call's end: how it ended, why, and (when it ran) its duration and result size. */
  async finish(companyId: string, id: string, end: InvocationEnd): Promise<void> {
    await this.rows(
      companyId,
      `UPDATE tool_invocations SET status = $3, reason_code = $4, duration_ms = $5, result_bytes = $6, finished_at = now()
        WHERE company_id = $1 AND id = $2 AND finished_at IS NULL`,
      [id, end.status, end.reasonCode, end.durationMs ?? null, end.resultBytes ?? null],
    );
  }

  /** The run's calls in the order they were made (its last `limit`). */
  forRun(companyId: string, runId: string, limit: number): Promise<ToolInvocation[]> {
    return this.rows(
      companyId,
      `SELECT * FROM (
         SELECT ${INVOCATION} FROM tool_invocations i
           JOIN tool_connections c ON c.company_id = i.company_id AND c.id = i.connection_id
          WHERE i.company_id = $1 AND i.run_id = $2
          ORDER BY i.created_at DESC, i.id DESC LIMIT $3) last
        ORDER BY "createdAt", id`,
      [runId, limit],
    );
  }
}
