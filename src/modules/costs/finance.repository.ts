import { Injectable } from '@nestjs/common';
import { CompanyScopedRepository } from '../../database/company-scoped.repository';
import { Db } from '../../database/db.service';
import { isoRequired, recordColumns } from '../../database/row-mapping';
import type { FinanceEventResponseDto, FinanceTotalsDto } from './dto/finance-event.dto';

/** SQL filter on `e.occurred_at` with the range as parameters $2 and $3. */
const RANGE_SQL = `($2::timestamptz IS NULL OR e.occurred_at >= $2) AND ($3::timestamptz IS NULL OR e.occurred_at < $3)`;

export interface FinanceEventRecord {
  id: string;
  companyId: string;
  kind: string;
  direction: string;
  /** bigint, as Postgres gives it: text */
  amountCents: string;
  currency: string;
  estimated: boolean;
  biller: string | null;
  provider: string | null;
  agentId: string | null;
  costEventId: string | null;
  description: string | null;
  externalRef: string | null;
  idempotencyKey: string | null;
  metadata: Record<string, unknown> | null;
  occurredAt: Date;
  createdAt: Date;
}

/** The stored event's record fields, in the order of its answer. */
const FINANCE_COLUMN_LIST = `id, company_id, kind, direction, amount_cents, currency, estimated, biller, provider, agent_id,
  cost_event_id, description, external_ref, idempotency_key, metadata, occurred_at, created_at`;
const FINANCE_EVENT_COLUMNS = recordColumns(FINANCE_COLUMN_LIST);

export function toFinanceEventResponse(r: FinanceEventRecord): FinanceEventResponseDto {
  return { ...r, amountCents: Number(r.amountCents), occurredAt: isoRequired(r.occurredAt), createdAt: isoRequired(r.createdAt) };
}

/** A new event: the record's fields less those the database sets, its amount as a number, and who created it. */
export type FinanceEventInsert = Omit<FinanceEventRecord, 'id' | 'companyId' | 'createdAt' | 'amountCents'> & {
  amountCents: number;
  createdByActorType: 'agent' | 'user';
  createdByActorId: string;
};

/** A currency's sums as Postgres gives them (sum() as numeric and count() as bigint: text). */
export interface FinanceSums {
  currency: string;
  debit: string;
  credit: string;
  estimated: string;
  n: string;
}

export function financeTotals(r: FinanceSums): FinanceTotalsDto {
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

const TOTALS_SQL = `e.currency,
  COALESCE(sum(e.amount_cents) FILTER (WHERE e.direction = 'debit'), 0) AS debit,
  COALESCE(sum(e.amount_cents) FILTER (WHERE e.direction = 'credit'), 0) AS credit,
  COALESCE(sum(e.amount_cents) FILTER (WHERE e.estimated), 0) AS estimated,
  count(*) AS n`;

/** finance_events: the company's debits and credits, and their totals. */
@Injectable()
export class FinanceRepository extends CompanyScopedRepository {
  constructor(db: Db) {
    super(db);
  }

  /** Whether a named agent and cost event belong to the company (reads agents, owned by agents). */
  async financeReferences(
    companyId: string,
    agentId: string | null,
    costEventId: string | null,
  ): Promise<{ agent: boolean; cost: boolean }> {
    const [refs] = await this.rows<{ agent: boolean; cost: boolean }>(
      companyId,
      `SELECT ($2::uuid IS NULL OR EXISTS (SELECT 1 FROM agents WHERE id = $2 AND company_id = $1)) AS agent,
              ($3::uuid IS NULL OR EXISTS (SELECT 1 FROM cost_events WHERE id = $3 AND company_id = $1)) AS cost`,
      [agentId, costEventId],
    );
    return refs;
  }

  /** Stores a finance event unless its idempotency key was used (null then). */
  insertFinanceEvent(companyId: string, f: FinanceEventInsert): Promise<FinanceEventRecord | null> {
    return this.row<FinanceEventRecord>(
      companyId,
      `INSERT INTO finance_events (company_id, kind, direction, amount_cents, currency, estimated, biller, provider, agent_id, cost_event_id,
                                   description, external_ref, idempotency_key, metadata, occurred_at, created_by_actor_type, created_by_actor_id)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)
       ON CONFLICT DO NOTHING RETURNING ${FINANCE_EVENT_COLUMNS}`,
      [
        f.kind,
        f.direction,
        f.amountCents,
        f.currency,
        f.estimated,
        f.biller,
        f.provider,
        f.agentId,
        f.costEventId,
        f.description,
        f.externalRef,
        f.idempotencyKey,
        f.metadata,
        f.occurredAt,
        f.createdByActorType,
        f.createdByActorId,
      ],
    );
  }

  financeEventByKey(companyId: string, idempotencyKey: string | undefined): Promise<FinanceEventRecord | null> {
    return this.row<FinanceEventRecord>(
      companyId,
      `SELECT ${FINANCE_EVENT_COLUMNS} FROM finance_events WHERE company_id = $1 AND idempotency_key = $2`,
      [idempotencyKey],
    );
  }

  /** Newest first, with optional range, kind and direction filters. */
  listFinanceEvents(
    companyId: string,
    q: { from: Date | null; to: Date | null; kind: string | null; direction: string | null; limit: number },
  ): Promise<FinanceEventRecord[]> {
    return this.rows<FinanceEventRecord>(
      companyId,
      `SELECT ${recordColumns(FINANCE_COLUMN_LIST, 'e')} FROM finance_events e WHERE e.company_id = $1 AND ${RANGE_SQL}
          AND ($4::text IS NULL OR e.kind = $4) AND ($5::text IS NULL OR e.direction = $5)
        ORDER BY e.occurred_at DESC, e.id DESC LIMIT $6`,
      [q.from, q.to, q.kind, q.direction, q.limit],
    );
  }

  /** Debit, credit and estimated sums per currency and the given grouping columns (whitelisted by callers). */
  financeTotals<K extends object>(companyId: string, from: Date | null, to: Date | null, keys: string[]): Promise<Array<K & FinanceSums>> {
    return this.rows<K & FinanceSums>(
      companyId,
      `SELECT ${TOTALS_SQL}${keys.map((k) => `, ${k}`).join('')} FROM finance_events e
        WHERE e.company_id = $1 AND ${RANGE_SQL}
        GROUP BY 1${keys.map((_, i) => `, ${i + 6}`).join('')}
        ORDER BY debit DESC, 1`,
      [from, to],
    );
  }
}
