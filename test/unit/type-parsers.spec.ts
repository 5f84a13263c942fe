import { types } from 'pg';
import { DbTimestamp, parseTimestamptz } from '../../src/database/type-parsers';

const pgParser = types.getTypeParser(1184, 'text') as (text: string) => Date;

describe('timestamptz parser', () => {
  it.each([
    '2026-11-21 09:45:20+00',
    '2026-11-21 09:45:20.4+00',
    '2026-11-21 09:45:20.45+00',
    '2026-11-21 09:45:20.453+00',
    '2026-11-21 09:45:20.453999+00',
    '2024-02-29 23:59:59.999999+00',
    '1970-01-01 00:00:00+00',
    '0099-12-31 23:59:59+00',
    '0001-01-01 00:00:00+00',
    '2026-11-21 09:45:20.453+02',
    '2026-11-21 09:45:20.453-05:30',
    '0044-03-15 12:00:00+00 BC',
    '12026-01-01 00:00:00+00',
  ])('reads %s as pg does', (text) => {
    const parsed = parseTimestamptz(text);
    expect(parsed.getTime()).toBe(pgParser(text).getTime());
    // the kept ISO form (fast path) is what Date itself would print, in JSON too
    expect(parsed.toISOString()).toBe(pgParser(text).toISOString());
    expect(JSON.stringify({ at: parsed })).toBe(JSON.stringify({ at: pgParser(text) }));
    expect(parsed).toBeInstanceOf(Date);
  });

  it('formats a timestamp changed after reading by its new time', () => {
    const parsed = parseTimestamptz('2026-11-21 09:45:20.453999+00');
    expect(parsed).toBeInstanceOf(DbTimestamp);
    parsed.setUTCFullYear(2030);
    expect(parsed.toISOString()).toBe('2030-11-21T09:45:20.453Z');
    expect(JSON.stringify(parsed)).toBe('"2030-11-21T09:45:20.453Z"');
  });

  it('leaves infinity to pg', () => {
    expect(parseTimestamptz('infinity')).toEqual(pgParser('infinity'));
  });
});
