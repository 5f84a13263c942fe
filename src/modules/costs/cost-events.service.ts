import { Injectable } from '@nestjs/common';
import { ActivityRecorder } from '../../common/activity/activity-recorder.service';
import type { Actor } from '../../common/auth/actor';
import { conflict, forbidden, unprocessable } from '../../common/errors/domain-error';
import { Db } from '../../database/db.service';
import { BudgetEnforcementService } from '../budgets/budget-enforcement.service';
import { BudgetUsageService, UsageDelta } from '../budgets/budget-usage.service';
import { CostEventResponseDto, CreateCostEventDto } from './dto/cost-event.dto';

interface CostEventRow {
  id: string;
  company_id: string;
  agent_id: string;
  issue_id: string | null;
  project_id: string | null;
  goal_id: string | null;
  heartbeat_run_id: string | null;
  provider: string;
  model: string;
  biller: string;
  billing_type: string;
  billing_code: string | null;
  cost_status: string;
  cost_cents: number | null;
  input_tokens: string | null;
  cached_input_tokens: string | null;
  output_tokens: string | null;
  occurred_at: Date;
  idempotency_key: string | null;
  created_at: Date;
}

const num = (v: string | null): number | null => (v === null ? null : Number(v));

interface References {
  agent: boolean;
  project: boolean;
  goal: boolean;
  run: boolean;
}

/** The agent, and any project, goal or run named, must belong to the company (422 otherwise). */
function assertReferences(r: References): void {
  if (!r.agent) throw unprocessable('The agent does not belong to this company', 'agent_not_in_company', { field: 'agentId' });
  if (!r.project) throw unprocessable('The project does not belong to this company', 'invalid_reference', { field: 'projectId' });
  if (!r.goal) throw unprocessable('The goal does not belong to this company', 'invalid_reference', { field: 'goalId' });
  if (!r.run) throw unprocessable('The heartbeat run is not a run of this agent', 'invalid_reference', { field: 'heartbeatRunId' });
}

export function toCostEventResponse(r: CostEventRow): CostEventResponseDto {
  return {
    id: r.id,
    companyId: r.company_id,
    agentId: r.agent_id,
    issueId: r.issue_id,
    projectId: r.project_id,
    goalId: r.goal_id,
    heartbeatRunId: r.heartbeat_run_id,
    provider: r.provider,
    model: r.model,
    biller: r.biller,
    billingType: r.billing_type,
    billingCode: r.billing_code,
    costStatus: r.cost_status,
    costCents: r.cost_cents,
    inputTokens: num(r.input_tokens),
    cachedInputTokens: num(r.cached_input_tokens),
    outputTokens: num(r.output_tokens),
    occurredAt: r.occurred_at.toISOString(),
    idempotencyKey: r.idempotency_key,
    createdAt: r.created_at.toISOString(),
  };
}

/**
 * Reported usage. One transaction (the request's) stores the event, adds it to the running totals
 * (which recalculates spentMonthlyCents of agent and company), evaluates the budget policies of
 * company, agent and project, and writes the activity record. A repeat (same idempotencyKey, or same
 * run, provider, model and occurredAt) returns the stored event and counts nothing.
 */
@Injectable()
export class CostEventsService {
  constructor(
    private readonly db: Db,
    private readonly usage: BudgetUsageService,
    private readonly enforcement: BudgetEnforcementService,
    private readonly activity: ActivityRecorder,
  ) {}

  /** Joins the caller's transaction (the request's), or opens one: the statements below rely on it. */
  report(actor: Actor, companyId: string, dto: CreateCostEventDto): Promise<{ event: CostEventResponseDto; created: boolean }> {
    return this.db.transaction(() => this.reportInTransaction(actor, companyId, dto));
  }

  private async reportInTransaction(
    actor: Actor,
    companyId: string,
    dto: CreateCostEventDto,
  ): Promise<{ event: CostEventResponseDto; created: boolean }> {
    if (actor.kind === 'agent' && actor.agentId !== dto.agentId) throw forbidden('Agents may only report their own costs');
    const runId = dto.heartbeatRunId ?? (actor.kind === 'agent' ? (actor.runId ?? null) : null);
    const unpriced = dto.costStatus === 'unpriced';
    if (unpriced && dto.costCents)
      throw unprocessable('An unpriced event carries no cost; omit costCents', 'unpriced_with_cost', { field: 'costCents' });
    // the reference check and the insert go out on one round trip; a bad reference fails the request and
    // the request's transaction drops the insert with it
    const references = this.references(companyId, dto, runId);
    const insert = this.db.query<CostEventRow>(
      `INSERT INTO cost_events (company_id, agent_id, issue_id, project_id, goal_id, heartbeat_run_id, provider, model, biller,
                                billing_type, billing_code, cost_status, cost_cents, input_tokens, cached_input_tokens, output_tokens,
                                occurred_at, idempotency_key, reported_by_actor_type, reported_by_actor_id)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20)
       ON CONFLICT DO NOTHING RETURNING *`,
      [
        companyId,
        dto.agentId,
        dto.issueId ?? null,
        dto.projectId ?? null,
        dto.goalId ?? null,
        runId,
        dto.provider,
        dto.model,
        dto.biller ?? dto.provider,
        dto.billingType ?? 'unknown',
        dto.billingCode ?? null,
        unpriced ? 'unpriced' : 'reported',
        unpriced ? null : dto.costCents,
        dto.inputTokens ?? null,
        dto.cachedInputTokens ?? null,
        dto.outputTokens ?? null,
        new Date(dto.occurredAt),
        dto.idempotencyKey ?? null,
        actor.kind === 'agent' ? 'agent' : 'user',
        actor.kind === 'agent' ? actor.agentId : actor.userId,
      ],
    );
    const [checked, inserted] = await Promise.allSettled([references, insert]);
    if (checked.status === 'rejected') throw checked.reason;
    assertReferences(checked.value);
    if (inserted.status === 'rejected') throw inserted.reason;
    const [row] = inserted.value;
    if (!row) return { event: await this.original(companyId, dto, runId), created: false };

    const event = toCostEventResponse(row);
    await this.db.sendWithCommit(() =>
      this.activity.record({
        companyId,
        action: 'cost.reported',
        entityType: 'cost_event',
        entityId: row.id,
        actor,
        agentId: row.agent_id,
        details: {
          agentId: row.agent_id,
          provider: row.provider,
          model: row.model,
          costCents: row.cost_cents,
          costStatus: row.cost_status,
          heartbeatRunId: row.heartbeat_run_id,
        },
      }),
    );
    // The accumulation takes the row locks every event of the company queues on (its running totals,
    // the company and agent spend). It goes out with the activity record and the COMMIT, so those locks
    // are held only while Postgres runs them, not while this process serves other requests. Its totals
    // are exact (each event adds to the last committed one), so the thresholds this event crossed are
    // enforced once it has committed; incidents are unique per window and amount, and the budget
    // tick sweeps for any an interrupted process left unenforced.
    const added: UsageDelta = {
      companyId,
      agentId: row.agent_id,
      projectId: row.project_id,
      occurredAt: row.occurred_at,
      costCents: row.cost_cents,
      inputTokens: num(row.input_tokens),
      cachedInputTokens: num(row.cached_input_tokens),
      outputTokens: num(row.output_tokens),
    };
    await this.db.sendWithCommit(
      () => this.usage.accumulate(added),
      (observations) => this.enforcement.enforceCommitted(observations, added, actor),
    );
    return { event, created: true };
  }

  /** Whether the agent, and any project, goal or run named, belong to the company. */
  private async references(companyId: string, dto: CreateCostEventDto, runId: string | null): Promise<References> {
    // only the references the event names are looked up, without NULL parameters: a statement like
    // `$3 IS NULL OR EXISTS (...)` was planned anew for every event (a plan for a NULL drops the lookup,
    // so Postgres never settled on one generic plan)
    const params: unknown[] = [companyId, dto.agentId];
    const lookup = (value: string | null | undefined, name: keyof References, sql: (p: string) => string) =>
      value ? `${sql(`$${params.push(value)}`)} AS ${name}` : `true AS ${name}`;
    const [r] = await this.db.query<References>(
      `SELECT EXISTS (SELECT 1 FROM agents WHERE id = $2 AND company_id = $1) AS agent,
              ${lookup(dto.projectId, 'project', (p) => `EXISTS (SELECT 1 FROM projects WHERE id = ${p} AND company_id = $1)`)},
              ${lookup(dto.goalId, 'goal', (p) => `EXISTS (SELECT 1 FROM goals WHERE id = ${p} AND company_id = $1)`)},
              ${lookup(runId, 'run', (p) => `EXISTS (SELECT 1 FROM heartbeat_runs WHERE id = ${p} AND company_id = $1 AND agent_id = $2)`)}`,
      params,
    );
    return r;
  }

  /** The stored event a duplicate repeats; a key reused for another agent's event is a conflict. */
  private async original(companyId: string, dto: CreateCostEventDto, runId: string | null): Promise<CostEventResponseDto> {
    const [row] = await this.db.query<CostEventRow>(
      `SELECT * FROM cost_events
        WHERE company_id = $1
          AND (($2::text IS NOT NULL AND idempotency_key = $2)
            OR ($3::uuid IS NOT NULL AND heartbeat_run_id = $3 AND provider = $4 AND model = $5 AND occurred_at = $6))
        LIMIT 1`,
      [companyId, dto.idempotencyKey ?? null, runId, dto.provider, dto.model, new Date(dto.occurredAt)],
    );
    if (!row) throw conflict('A conflicting cost event exists', 'cost_event_conflict');
    if (row.agent_id !== dto.agentId) throw conflict('This idempotency key was used for another agent', 'idempotency_key_reused');
    return toCostEventResponse(row);
  }
}
