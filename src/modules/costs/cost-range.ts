import { costError } from './costs.errors';
import type { CostRangeQueryDto } from './dto/cost-event.dto';

export interface Range {
  from: Date | null;
  to: Date | null;
}

/** from (inclusive) and to (exclusive); both omitted means all time. */
export function parseRange(q: CostRangeQueryDto): Range {
  const r = { from: q.from ? new Date(q.from) : null, to: q.to ? new Date(q.to) : null };
  if (r.from && r.to && r.from > r.to) throw costError('invalid_range', 'from must not be after to', { field: 'from' });
  return r;
}
