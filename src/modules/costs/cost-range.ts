import { badRequest } from '../../common/errors/domain-error';
import type { CostRangeQueryDto } from './dto/cost-event.dto';

export interface Range {
  from: Date | null;
  to: Date | null;
}

/** from (inclusive) and to (exclusive); both omitted means all time. */
export function parseRange(q: CostRangeQueryDto): Range {
  const r = { from: q.from ? new Date(q.from) : null, to: q.to ? new Date(q.to) : null };
  if (r.from && r.to && r.from > r.to) throw badRequest('from must not be after to', { field: 'from' }, 'invalid_range');
  return r;
}

/** SQL filter on `e.occurred_at` with the range as parameters $2 and $3. */
export const RANGE_SQL = `($2::timestamptz IS NULL OR e.occurred_at >= $2) AND ($3::timestamptz IS NULL OR e.occurred_at < $3)`;
