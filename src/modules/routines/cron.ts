import { CronExpressionParser } from 'cron-parser';
import { routineError } from './routines.errors';

/** A time zone name the runtime knows (IANA, e.g. `Europe/Berlin`, or `UTC`). */
export function assertTimeZone(tz: string, field = 'timezone'): void {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
  } catch {
    throw routineError('invalid_timezone', `${field}: unknown time zone "${tz}"`, { field });
  }
}

/**
 * Five-field cron (minute hour day-of-month month day-of-week) or an alias such as `@daily`,
 * evaluated in the trigger's time zone (daylight-saving moves follow the zone: a local time
 * that does not exist fires at the next valid instant, a repeated one fires once).
 */
export function assertCron(expression: string, tz: string, field = 'cronExpression'): void {
  const fields = expression.trim().split(/\s+/);
  if (!(expression.trim().startsWith('@') || fields.length === 5)) {
    throw routineError(
      'invalid_cron_expression',
      `${field}: expected five fields (minute hour day-of-month month day-of-week) or an @alias`,
      { field },
    );
  }
  // a work item every second is never a schedule anyone means
  if (expression.trim() === '@secondly') throw routineError('invalid_cron_expression', `${field}: @secondly is not allowed`, { field });
  try {
    nextFiring(expression, tz, new Date());
  } catch (err) {
    throw routineError('invalid_cron_expression', `${field}: ${(err as Error).message}`, { field });
  }
}

/** The first firing strictly after `after`. */
export function nextFiring(expression: string, tz: string, after: Date): Date {
  return CronExpressionParser.parse(expression.trim(), { currentDate: after, tz }).next().toDate();
}

/**
 * Firings in (from, until]: counted up to `cap` (catch-up after downtime is coalesced into one
 * execution, so only how many were missed matters, not each of them).
 */
export function countFirings(expression: string, tz: string, from: Date, until: Date, cap = 1000): number {
  const it = CronExpressionParser.parse(expression.trim(), { currentDate: from, tz, endDate: until });
  let n = 0;
  while (n < cap && it.hasNext()) {
    it.next();
    n++;
  }
  return n;
}
