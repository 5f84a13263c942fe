import { backupsToKeep } from '../../src/modules/instance/backup-retention';

const at = (iso: string, id = iso) => ({ id, createdAt: new Date(iso) });

describe('backupsToKeep (daily, weekly, monthly)', () => {
  const newestFirst = [
    at('2026-03-10T12:00:00Z'),
    at('2026-03-10T06:00:00Z'),
    at('2026-03-09T12:00:00Z'),
    at('2026-03-08T12:00:00Z'),
    at('2026-03-02T12:00:00Z'),
    at('2026-02-20T12:00:00Z'),
    at('2026-01-15T12:00:00Z'),
    at('2025-12-01T12:00:00Z'),
  ];

  it('keeps the newest of each of the last N days, weeks and months', () => {
    const kept = backupsToKeep(newestFirst, { daily: 2, weekly: 0, monthly: 0 });
    expect([...kept].sort()).toEqual(['2026-03-09T12:00:00Z', '2026-03-10T12:00:00Z']);
    // ISO weeks: 03-09/03-10 are week 11, 03-08 and 03-02 week 10 (03-08 newest), 02-20 week 8
    expect([...backupsToKeep(newestFirst, { daily: 0, weekly: 3, monthly: 0 })].sort()).toEqual([
      '2026-02-20T12:00:00Z',
      '2026-03-08T12:00:00Z',
      '2026-03-10T12:00:00Z',
    ]);
    expect([...backupsToKeep(newestFirst, { daily: 0, weekly: 0, monthly: 3 })].sort()).toEqual([
      '2026-01-15T12:00:00Z',
      '2026-02-20T12:00:00Z',
      '2026-03-10T12:00:00Z',
    ]);
  });

  it('always keeps the newest backup, even with all counts 0', () => {
    expect([...backupsToKeep(newestFirst, { daily: 0, weekly: 0, monthly: 0 })]).toEqual(['2026-03-10T12:00:00Z']);
    expect(backupsToKeep([], { daily: 3, weekly: 3, monthly: 3 }).size).toBe(0);
  });
});
