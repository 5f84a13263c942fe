import { Db } from '../../src/database/db.service';
import { createTestApp, TestApp } from '../support/test-app';

/**
 * Two transactions that lock the same two rows in opposite orders: Postgres aborts one of them
 * (40P01). Db.transaction runs the victim again, so both mutations commit and neither caller sees
 * an error (a request would otherwise answer 409 serialization_conflict).
 */
describe('Db.transaction: a deadlock victim is run again', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
    await t.dataSource.query('CREATE TABLE deadlock_probe (id int PRIMARY KEY, n int NOT NULL DEFAULT 0)');
    await t.dataSource.query('INSERT INTO deadlock_probe (id) VALUES (1), (2)');
  });
  afterAll(() => t.close());

  it('commits both transactions of a lock cycle, the victim on its second attempt', async () => {
    const db = t.app.get(Db);
    let attempts = 0;
    // both hold their first row lock before either asks for its second: a cycle on the first attempt
    let arrived = 0;
    let release!: () => void;
    const bothLocked = new Promise<void>((r) => (release = r));
    const cross = (first: number, second: number) =>
      db.transaction(async () => {
        attempts++;
        await db.query('UPDATE deadlock_probe SET n = n + 1 WHERE id = $1', [first]);
        if (++arrived === 2) release();
        await bothLocked;
        await db.query('UPDATE deadlock_probe SET n = n + 1 WHERE id = $1', [second]);
      });
    await Promise.all([cross(1, 2), cross(2, 1)]);
    expect(attempts).toBe(3);
    const rows = await t.dataSource.query('SELECT id, n FROM deadlock_probe ORDER BY id');
    expect(rows).toEqual([
      { id: 1, n: 2 },
      { id: 2, n: 2 },
    ]);
  });
});
