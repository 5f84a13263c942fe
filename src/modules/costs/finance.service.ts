import { Injectable } from '@nestjs/common';
import { ActivityRecorder } from '../../common/activity/activity-recorder.service';
import type { Actor } from '../../common/auth/actor';
import { Clock } from '../budgets/clock.service';
import { parseRange } from './cost-range';
import { costError } from './costs.errors';
import { FinanceRepository, financeTotals, toFinanceEventResponse } from './finance.repository';
import { CostRangeQueryDto } from './dto/cost-event.dto';
import {
  CreateFinanceEventDto,
  FinanceByBillerRowDto,
  FinanceByKindRowDto,
  FinanceEventResponseDto,
  FinanceSummaryResponseDto,
  ListFinanceEventsQueryDto,
} from './dto/finance-event.dto';

/** Finance events: non-token accounting records (fees, credit purchases and refunds, adjustments). Board-only. */
@Injectable()
export class FinanceService {
  constructor(
    private readonly repo: FinanceRepository,
    private readonly clock: Clock,
    private readonly activity: ActivityRecorder,
  ) {}

  async create(actor: Actor, companyId: string, dto: CreateFinanceEventDto): Promise<{ event: FinanceEventResponseDto; created: boolean }> {
    const refs = await this.repo.financeReferences(companyId, dto.agentId ?? null, dto.costEventId ?? null);
    if (!refs.agent) throw costError('invalid_reference', 'The agent does not belong to this company', { field: 'agentId' });
    if (!refs.cost) throw costError('invalid_reference', 'The cost event does not belong to this company', { field: 'costEventId' });
    const row = await this.repo.insertFinanceEvent(companyId, {
      kind: dto.kind,
      direction: dto.direction,
      amountCents: dto.amountCents,
      currency: dto.currency ?? 'USD',
      estimated: dto.estimated ?? false,
      biller: dto.biller ?? dto.provider ?? null,
      provider: dto.provider ?? null,
      agentId: dto.agentId ?? null,
      costEventId: dto.costEventId ?? null,
      description: dto.description ?? null,
      externalRef: dto.externalRef ?? null,
      idempotencyKey: dto.idempotencyKey ?? null,
      metadata: dto.metadata ?? null,
      occurredAt: dto.occurredAt ? new Date(dto.occurredAt) : this.clock.now(),
      createdByActorType: actor.kind === 'agent' ? 'agent' : 'user',
      createdByActorId: actor.kind === 'agent' ? actor.agentId : actor.userId,
    });
    if (!row) {
      const original = await this.repo.financeEventByKey(companyId, dto.idempotencyKey);
      if (!original) throw costError('finance_event_conflict', 'A conflicting finance event exists');
      return { event: toFinanceEventResponse(original), created: false };
    }
    const event = toFinanceEventResponse(row);
    await this.activity.record({
      companyId,
      action: 'finance_event.created',
      entityType: 'finance_event',
      entityId: row.id,
      actor,
      details: {
        kind: event.kind,
        direction: event.direction,
        amountCents: event.amountCents,
        currency: event.currency,
        estimated: event.estimated,
      },
    });
    return { event, created: true };
  }

  /** Newest first, `limit` 1..500 (default 100), optional from/to, kind and direction filters. */
  async list(companyId: string, q: ListFinanceEventsQueryDto): Promise<FinanceEventResponseDto[]> {
    const { from, to } = parseRange(q);
    const rows = await this.repo.listFinanceEvents(companyId, {
      from,
      to,
      kind: q.kind ?? null,
      direction: q.direction ?? null,
      limit: q.limit ?? 100,
    });
    return rows.map(toFinanceEventResponse);
  }

  async summary(companyId: string, q: CostRangeQueryDto): Promise<FinanceSummaryResponseDto> {
    const { from, to } = parseRange(q);
    const rows = await this.repo.financeTotals(companyId, from, to, []);
    return { companyId, from: from?.toISOString() ?? null, to: to?.toISOString() ?? null, totals: rows.map(financeTotals) };
  }

  async byBiller(companyId: string, q: CostRangeQueryDto): Promise<FinanceByBillerRowDto[]> {
    const { from, to } = parseRange(q);
    const rows = await this.repo.financeTotals<{ biller: string }>(companyId, from, to, [`COALESCE(e.biller, 'unknown') AS biller`]);
    return rows.map((r) => ({ biller: r.biller, ...financeTotals(r) }));
  }

  async byKind(companyId: string, q: CostRangeQueryDto): Promise<FinanceByKindRowDto[]> {
    const { from, to } = parseRange(q);
    const rows = await this.repo.financeTotals<{ kind: string }>(companyId, from, to, ['e.kind']);
    return rows.map((r) => ({ kind: r.kind, ...financeTotals(r) }));
  }
}
