import { Injectable } from '@nestjs/common';
import { ActivityRecorder } from '../../common/activity/activity-recorder.service';
import type { Actor } from '../../common/auth/actor';
import { conflict, unprocessable } from '../../common/errors/domain-error';
import { Db } from '../../database/db.service';
import { Clock } from '../budgets/clock.service';
import { parseRange, RANGE_SQL } from './cost-range';
import { CostRangeQueryDto } from './dto/cost-event.dto';
import {
  CreateFinanceEventDto,
  FinanceByBillerRowDto,
  FinanceByKindRowDto,
  FinanceEventResponseDto,
  FinanceSummaryResponseDto,
  FinanceTotalsDto,
  ListFinanceEventsQueryDto,
} from './dto/finance-event.dto';

interface FinanceEventRow {
  id: string;
  company_id: string;
  kind: string;
  direction: string;
  amount_cents: string;
  currency: string;
  estimated: boolean;
  biller: string | null;
  provider: string | null;
  agent_id: string | null;
  cost_event_id: string | null;
  description: string | null;
  external_ref: string | null;
  idempotency_key: string | null;
  metadata: Record<string, unknown> | null;
  occurred_at: Date;
  created_at: Date;
}

interface FinanceTotalsRow {
  currency: string;
  debit: string;
  credit: string;
  estimated: string;
  n: string;
}

export function toFinanceEventResponse(r: FinanceEventRow): FinanceEventResponseDto {
  return {
    id: r.id,
    companyId: r.company_id,
    kind: r.kind,
    direction: r.direction,
    amountCents: Number(r.amount_cents),
    currency: r.currency,
    estimated: r.estimated,
    biller: r.biller,
    provider: r.provider,
    agentId: r.agent_id,
    costEventId: r.cost_event_id,
    description: r.description,
    externalRef: r.external_ref,
    idempotencyKey: r.idempotency_key,
    metadata: r.metadata,
    occurredAt: r.occurred_at.toISOString(),
    createdAt: r.created_at.toISOString(),
  };
}

const TOTALS_SQL = `e.currency,
  COALESCE(sum(e.amount_cents) FILTER (WHERE e.direction = 'debit'), 0) AS debit,
  COALESCE(sum(e.amount_cents) FILTER (WHERE e.direction = 'credit'), 0) AS credit,
  COALESCE(sum(e.amount_cents) FILTER (WHERE e.estimated), 0) AS estimated,
  count(*) AS n`;

function financeTotals(r: FinanceTotalsRow): FinanceTotalsDto {
  const debit = Number(r.debit);
  const credit = Number(r.credit);
  return {
    currency: r.currency,
    debitCents: debit,
    creditCents: credit,
    netCents: debit - credit,
    estimatedCents: Number(r.estimated),
    eventCount: Number(r.n),
  };
}

/** Finance events: non-token accounting records (fees, credit purchases and refunds, adjustments). Board-only. */
@Injectable()
export class FinanceService {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly activity: ActivityRecorder,
  ) {}

  async create(actor: Actor, companyId: string, dto: CreateFinanceEventDto): Promise<{ event: FinanceEventResponseDto; created: boolean }> {
    const [refs] = await this.db.query<{ agent: boolean; cost: boolean }>(
      `SELECT ($2::uuid IS NULL OR EXISTS (SELECT 1 FROM agents WHERE id = $2 AND company_id = $1)) AS agent,
              ($3::uuid IS NULL OR EXISTS (SELECT 1 FROM cost_events WHERE id = $3 AND company_id = $1)) AS cost`,
      [companyId, dto.agentId ?? null, dto.costEventId ?? null],
    );
    if (!refs.agent) throw unprocessable('The agent does not belong to this company', 'invalid_reference', { field: 'agentId' });
    if (!refs.cost) throw unprocessable('The cost event does not belong to this company', 'invalid_reference', { field: 'costEventId' });
    const [row] = await this.db.query<FinanceEventRow>(
      `INSERT INTO finance_events (company_id, kind, direction, amount_cents, currency, estimated, biller, provider, agent_id, cost_event_id,
                                   description, external_ref, idempotency_key, metadata, occurred_at, created_by_actor_type, created_by_actor_id)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)
       ON CONFLICT DO NOTHING RETURNING *`,
      [
        companyId,
        dto.kind,
        dto.direction,
        dto.amountCents,
        dto.currency ?? 'USD',
        dto.estimated ?? false,
        dto.biller ?? dto.provider ?? null,
        dto.provider ?? null,
        dto.agentId ?? null,
        dto.costEventId ?? null,
        dto.description ?? null,
        dto.externalRef ?? null,
        dto.idempotencyKey ?? null,
        dto.metadata ?? null,
        dto.occurredAt ? new Date(dto.occurredAt) : this.clock.now(),
        actor.kind === 'agent' ? 'agent' : 'user',
        actor.kind === 'agent' ? actor.agentId : actor.userId,
      ],
    );
    if (!row) {
      const [original] = await this.db.query<FinanceEventRow>(
        `SELECT * FROM finance_events WHERE company_id = $1 AND idempotency_key = $2`,
        [companyId, dto.idempotencyKey],
      );
      if (!original) throw conflict('A conflicting finance event exists', 'finance_event_conflict');
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
    const rows = await this.db.query<FinanceEventRow>(
      `SELECT * FROM finance_events e WHERE e.company_id = $1 AND ${RANGE_SQL}
          AND ($4::text IS NULL OR e.kind = $4) AND ($5::text IS NULL OR e.direction = $5)
        ORDER BY e.occurred_at DESC, e.id DESC LIMIT $6`,
      [companyId, from, to, q.kind ?? null, q.direction ?? null, q.limit ?? 100],
    );
    return rows.map(toFinanceEventResponse);
  }

  async summary(companyId: string, q: CostRangeQueryDto): Promise<FinanceSummaryResponseDto> {
    const { from, to } = parseRange(q);
    const rows = await this.totals(companyId, from, to, []);
    return { companyId, from: from?.toISOString() ?? null, to: to?.toISOString() ?? null, totals: rows.map(financeTotals) };
  }

  async byBiller(companyId: string, q: CostRangeQueryDto): Promise<FinanceByBillerRowDto[]> {
    const { from, to } = parseRange(q);
    const rows = await this.totals<{ biller: string }>(companyId, from, to, [`COALESCE(e.biller, 'unknown') AS biller`]);
    return rows.map((r) => ({ biller: r.biller, ...financeTotals(r) }));
  }

  async byKind(companyId: string, q: CostRangeQueryDto): Promise<FinanceByKindRowDto[]> {
    const { from, to } = parseRange(q);
    const rows = await this.totals<{ kind: string }>(companyId, from, to, ['e.kind']);
    return rows.map((r) => ({ kind: r.kind, ...financeTotals(r) }));
  }

  /** Debit, credit and estimated sums per currency and the given grouping columns (whitelisted by callers). */
  private async totals<K extends object>(
    companyId: string,
    from: Date | null,
    to: Date | null,
    keys: string[],
  ): Promise<Array<K & FinanceTotalsRow>> {
    return this.db.query<K & FinanceTotalsRow>(
      `SELECT ${TOTALS_SQL}${keys.map((k) => `, ${k}`).join('')} FROM finance_events e
        WHERE e.company_id = $1 AND ${RANGE_SQL}
        GROUP BY 1${keys.map((_, i) => `, ${i + 6}`).join('')}
        ORDER BY debit DESC, 1`,
      [companyId, from, to],
    );
  }
}
