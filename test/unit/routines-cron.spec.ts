import { assertCron, countFirings, nextFiring } from '../../src/modules/routines/cron';

describe('routine cron schedules in a time zone', () => {
  it('follows the zone across daylight-saving moves (09:00 Berlin is 08:00Z in winter, 07:00Z in summer)', () => {
    const before = nextFiring('0 9 * * *', 'Europe/Berlin', new Date('2026-03-28T12:00:00Z'));
    const after = nextFiring('0 9 * * *', 'Europe/Berlin', before);
    expect(before.toISOString()).toBe('2026-03-29T07:00:00.000Z');
    expect(nextFiring('0 9 * * *', 'Europe/Berlin', new Date('2026-03-27T12:00:00Z')).toISOString()).toBe('2026-03-28T08:00:00.000Z');
    expect(after.toISOString()).toBe('2026-03-30T07:00:00.000Z');
    expect(nextFiring('0 9 * * *', 'Europe/Berlin', new Date('2026-10-25T00:00:00Z')).toISOString()).toBe('2026-10-25T08:00:00.000Z');
  });

  it('a local time skipped by the spring-forward gap fires at the next valid instant, once', () => {
    const first = nextFiring('30 2 * * *', 'Europe/Berlin', new Date('2026-03-28T12:00:00Z'));
    expect(first.toISOString()).toBe('2026-03-29T01:30:00.000Z'); // 03:30 CEST: 02:30 does not exist that day
    expect(nextFiring('30 2 * * *', 'Europe/Berlin', first).toISOString()).toBe('2026-03-30T00:30:00.000Z');
  });

  it('a local time repeated by the fall-back fires once', () => {
    const from = new Date('2026-10-24T12:00:00Z');
    const until = new Date('2026-10-25T12:00:00Z');
    expect(countFirings('30 2 * * *', 'Europe/Berlin', from, until)).toBe(1);
  });

  it('counts firings in a window (catch-up) with a cap', () => {
    const from = new Date('2026-01-01T00:00:00Z');
    expect(countFirings('*/5 * * * *', 'UTC', from, new Date('2026-01-01T01:00:00Z'))).toBe(12);
    expect(countFirings('* * * * *', 'UTC', from, new Date('2026-02-01T00:00:00Z'), 50)).toBe(50);
  });

  it('accepts five fields or an alias; rejects the rest', () => {
    expect(() => assertCron('0 9 * * 1-5', 'UTC')).not.toThrow();
    expect(() => assertCron('@daily', 'UTC')).not.toThrow();
    for (const bad of ['* * * *', '0 0 9 * * *', '61 * * * *', '@secondly', 'every day']) expect(() => assertCron(bad, 'UTC')).toThrow();
  });
});
