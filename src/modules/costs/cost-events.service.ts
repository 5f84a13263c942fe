import { Injectable } from '@nestjs/common';
import { ActivityRecorder } from '../../common/activity/activity-recorder.service';
import type { Actor } from '../../common/auth/actor';
import { forbidden } from '../../common/errors/domain-error';
import { Db } from '../../database/db.service';
import { BudgetEnforcementService } from '../budgets/budget-enforcement.service';
import { BudgetUsageService, UsageDelta } from '../budgets/budget-usage.service';
import { costError } from './costs.errors';
import { CostsRepository, num, toCostEventResponse, type CostEventInsert, type CostEventRecord } from './costs.repository';
import { CostEventResponseDto, CreateCostEventDto } from './dto/cost-event.dto';
import { costBooked } from '../../common/tracing/run-tracing';

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
    private readonly repo: CostsRepository,
    private readonly usage: BudgetUsageService,
    private readonly enforcement: BudgetEnforcementService,
    private readonly activity: ActivityRecorder,
  ) {}

  /**
   * Joins the caller's transaction (the request's), or opens one: the statements below rely on it.
   * `pricedCents`: a run booking's priced cost with sub-cent precision (RunCostBooking).
   */
  report(
    actor: Actor,
    companyId: string,
    dto: CreateCostEventDto,
    pricedCents: number | null = null,
  ): Promise<{ event: CostEventResponseDto; created: boolean }> {
    return this.db.transaction(() => this.reportInTransaction(actor, companyId, dto, pricedCents));
  }

  private async reportInTransaction(
    actor: Actor,
    companyId: string,
    dto: CreateCostEventDto,
    pricedCents: number | null,
  ): Promise<{ event: CostEventResponseDto; created: boolean }> {
    if (actor.kind === 'agent' && actor.agentId !== dto.agentId) throw forbidden('Agents may only report their own costs');
    const runId = dto.heartbeatRunId ?? (actor.kind === 'agent' ? (actor.runId ?? null) : null);
    const unpriced = dto.costStatus === 'unpriced';
    if (unpriced && dto.costCents)
      throw costError('unpriced_with_cost', 'An unpriced event carries no cost; omit costCents', { field: 'costCents' });
    // The route's reference check (@RefersTo) has proven that the agent, issue, project, goal and run
    // the body names are the company's, and the run verifier that a caller's own run (X-Service-Run-Id)
    // is its live run; the engine books a run's usage for the run's own agent. What is left: a run named
    // in the body must be a run of the reporting agent, checked on the insert's round trip (a bad one
    // fails the request, and the request's transaction drops the insert with it).
    const runOfAgent = dto.heartbeatRunId ? this.repo.isRunOfAgent(companyId, dto.agentId, dto.heartbeatRunId) : true;
    const insert = this.repo.insertCostEvent(companyId, insertOf(actor, dto, runId, unpriced, pricedCents));
    const [checked, inserted] = await Promise.allSettled([runOfAgent, insert]);
    if (checked.status === 'rejected') throw checked.reason;
    if (!checked.value) throw costError('invalid_reference', 'The heartbeat run is not a run of this agent', { field: 'heartbeatRunId' });
    if (inserted.status === 'rejected') throw inserted.reason;
    const [row] = inserted.value;
    if (!row) return { event: await this.original(companyId, dto, runId), created: false };
    await this.recorded(actor, companyId, row);
    return { event: toCostEventResponse(row), created: true };
  }

  /** The stored event's activity record, and its spend added to the running totals (both sent with the COMMIT). */
  private async recorded(actor: Actor, companyId: string, row: CostEventRecord): Promise<void> {
    await this.db.sendWithCommit(() =>
      this.activity.record({
        companyId,
        action: 'cost.reported',
        entityType: 'cost_event',
        entityId: row.id,
        actor,
        agentId: row.agentId,
        details: {
          agentId: row.agentId,
          provider: row.provider,
          model: row.model,
          costCents: row.costCents,
          costStatus: row.costStatus,
          heartbeatRunId: row.heartbeatRunId,
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
      agentId: row.agentId,
      projectId: row.projectId,
      occurredAt: row.occurredAt,
      costCents: row.costCents,
      inputTokens: num(row.inputTokens),
      cachedInputTokens: num(row.cachedInputTokens),
      outputTokens: num(row.outputTokens),
    };
    await this.db.sendWithCommit(
      () => this.usage.accumulate(added),
      (observations) => this.enforcement.enforceCommitted(observations, added, actor),
    );
    costBooked({ ...added, runId: row.heartbeatRunId, provider: row.provider, model: row.model });
  }

  /** The stored event a duplicate repeats; a key reused for another agent's event is a conflict. */
  private async original(companyId: string, dto: CreateCostEventDto, runId: string | null): Promise<CostEventResponseDto> {
    const row = await this.repo.repeatedCostEvent(companyId, {
      idempotencyKey: dto.idempotencyKey ?? null,
      runId,
      provider: dto.provider,
      model: dto.model,
      occurredAt: new Date(dto.occurredAt),
    });
    if (!row) throw costError('cost_event_conflict', 'A conflicting cost event exists');
    if (row.agentId !== dto.agentId) throw costError('idempotency_key_reused', 'This idempotency key was used for another agent');
    return toCostEventResponse(row);
  }
}

/** The row of a reported event. */
function insertOf(
  actor: Actor,
  dto: CreateCostEventDto,
  runId: string | null,
  unpriced: boolean,
  pricedCents: number | null,
): CostEventInsert {
  return {
    agentId: dto.agentId,
    issueId: dto.issueId ?? null,
    projectId: dto.projectId ?? null,
    goalId: dto.goalId ?? null,
    heartbeatRunId: runId,
    provider: dto.provider,
    model: dto.model,
    biller: dto.biller ?? dto.provider,
    billingType: dto.billingType ?? 'unknown',
    billingCode: dto.billingCode ?? null,
    costStatus: unpriced ? 'unpriced' : 'reported',
    costCents: unpriced ? null : (dto.costCents ?? null),
    pricedCents: unpriced ? null : pricedCents,
    inputTokens: dto.inputTokens ?? null,
    cachedInputTokens: dto.cachedInputTokens ?? null,
    outputTokens: dto.outputTokens ?? null,
    occurredAt: new Date(dto.occurredAt),
    idempotencyKey: dto.idempotencyKey ?? null,
    reportedByActorType: actor.kind === 'agent' ? 'agent' : 'user',
    reportedByActorId: actor.kind === 'agent' ? actor.agentId : actor.userId,
  };
}
