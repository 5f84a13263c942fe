import * as net from 'node:net';
import { Client, PoolClient } from 'pg';
import { Db } from '../../src/database/db.service';
import { preparingClientClass } from '../../src/database/prepared-statements';
import { createCompany } from '../support/factories';
import { createTestApp, createTestDatabase, TestApp } from '../support/test-app';

/**
 * The database layer the rest stands on: one transaction per mutation with BEGIN and COMMIT
 * pipelined, the activity record travelling with the COMMIT, prepared hot statements, and the
 * guard's memory of existing companies.
 */
describe('database layer', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: { SERVICE_ENABLE_COMPANY_DELETION: 'true' } });
  });
  afterAll(() => t.close());

  /**
   * Socket writes of each transaction that carried `marker` (a parameter value: it travels as text
   * even when the statement is prepared) while `fn` runs: on each socket, the writes from the one
   * carrying a BEGIN to the one carrying its COMMIT.
   */
  const writesOfTransactions = async (marker: string, fn: () => Promise<void>): Promise<number[]> => {
    type WriteGeneric = (this: object, writev: boolean, data: unknown, ...rest: unknown[]) => unknown;
    const proto = net.Socket.prototype as unknown as { _writeGeneric: WriteGeneric };
    const original = proto._writeGeneric;
    const bySocket = new Map<object, string[]>();
    proto._writeGeneric = function (writev, data, ...rest) {
      const text = writev ? (data as Array<{ chunk: unknown }>).map((c) => String(c.chunk)).join('') : String(data);
      bySocket.set(this, [...(bySocket.get(this) ?? []), text]);
      return original.call(this, writev, data, ...rest);
    };
    try {
      await fn();
    } finally {
      proto._writeGeneric = original;
    }
    const counts: number[] = [];
    for (const writes of bySocket.values()) {
      let begin = -1;
      writes.forEach((w, i) => {
        if (begin < 0 && w.includes('BEGIN')) begin = i;
        if (begin >= 0 && w.includes('COMMIT')) {
          if (writes.slice(begin, i + 1).some((x) => x.includes(marker))) counts.push(i - begin + 1);
          begin = -1;
        }
      });
    }
    return counts;
  };

  describe('a mutation and its activity record', () => {
    beforeAll(async () => {
      // an activity insert that fails for one marked title (22001 maps to a 400)
      await t.dataSource.query(`
        CREATE FUNCTION test_fail_activity() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF NEW.details->>'title' = 'activity fails' THEN
            RAISE EXCEPTION 'activity refused' USING ERRCODE = '22001';
          END IF;
          RETURN NEW;
        END $$;
        CREATE TRIGGER test_fail_activity BEFORE INSERT ON activity_log FOR EACH ROW EXECUTE FUNCTION test_fail_activity();`);
    });

    it('commit together: when the record sent with the COMMIT fails, the mutation is rolled back and its number reused', async () => {
      const c = await createCompany(t);
      const first = await t.http.post(`/api/companies/${c.id}/issues`).send({ title: 'first' }).expect(201);
      const failed = await t.http.post(`/api/companies/${c.id}/issues`).send({ title: 'activity fails' });
      expect(failed.status).toBe(400);
      expect(failed.body.code).toBe('value_too_long');
      const titles = (await t.http.get(`/api/companies/${c.id}/issues`).expect(200)).body.map((i: { title: string }) => i.title);
      expect(titles).toEqual(['first']);
      const rows = await t.dataSource.query(`SELECT count(*)::int AS n FROM issues WHERE company_id = $1`, [c.id]);
      expect(rows[0].n).toBe(1);
      // the failed create took no number: the next one follows the first without a gap
      const next = await t.http.post(`/api/companies/${c.id}/issues`).send({ title: 'next' }).expect(201);
      expect(next.body.issueNumber).toBe(first.body.issueNumber + 1);
    });

    it('a successful mutation and its record are both there once the response is sent', async () => {
      const c = await createCompany(t);
      const res = await t.http.post(`/api/companies/${c.id}/issues`).send({ title: 'kept' }).expect(201);
      const acts = await t.dataSource.query(`SELECT action FROM activity_log WHERE entity_id = $1`, [res.body.id]);
      expect(acts.map((a: { action: string }) => a.action)).toEqual(['issue.created']);
    });

    it('a create needing nothing of its stored row sends its INSERT, its record and the COMMIT in one write (the counter row is locked only while Postgres runs them)', async () => {
      const c = await createCompany(t);
      const label = await t.http.post(`/api/companies/${c.id}/labels`).send({ name: 'db-writes', color: '#123456' }).expect(201);
      const writes = await writesOfTransactions('one round trip', async () => {
        await t.http.post(`/api/companies/${c.id}/issues`).send({ title: 'one round trip', priority: 'high' }).expect(201);
      });
      // the old order took two: BEGIN and the INSERT, then (once its answer was read) the record and the COMMIT
      expect(writes).toEqual([1]);
      // one with labels reads its stored row first (its record then goes with the COMMIT at the route's end)
      await t.http
        .post(`/api/companies/${c.id}/issues`)
        .send({ title: 'labelled', labelIds: [label.body.id] })
        .expect(201);
      const acts = await t.dataSource.query(
        `SELECT action, details FROM activity_log WHERE company_id = $1 AND action = 'issue.created' ORDER BY chain_seq`,
        [c.id],
      );
      expect(acts.map((a: { details: { title: string } }) => a.details.title)).toEqual(['one round trip', 'labelled']);
    });
  });

  describe('Db', () => {
    it('runs statements of a transaction in call order on one connection, BEGIN and COMMIT around them', async () => {
      const db = t.app.get(Db);
      const pids = await db.transaction(async () => {
        // sent together without awaiting: they share the connection and keep their order
        const [a, b, c] = await Promise.all([
          db.query<{ pid: number; x: string }>(`SELECT pg_backend_pid() AS pid, txid_current()::text AS x`),
          db.query<{ pid: number; x: string }>(`SELECT pg_backend_pid() AS pid, txid_current()::text AS x`),
          db.query<{ state: string }>(`SELECT current_setting('transaction_isolation') AS state`),
        ]);
        expect(c[0].state).toBe('read committed');
        expect(a[0].x).toBe(b[0].x);
        return [a[0].pid, b[0].pid];
      });
      expect(pids[0]).toBe(pids[1]);
    });

    it('rolls everything back when the function throws, including statements sent with the commit', async () => {
      const db = t.app.get(Db);
      await db.query(`CREATE TABLE test_tx (v int)`);
      await expect(
        db.transaction(async () => {
          await db.query(`INSERT INTO test_tx VALUES ($1)`, [1]);
          await db.sendWithCommit(() => db.query(`INSERT INTO test_tx VALUES ($1)`, [2]));
          throw new Error('nope');
        }),
      ).rejects.toThrow('nope');
      await expect(
        db.transaction(async () => {
          await db.query(`INSERT INTO test_tx VALUES ($1)`, [3]);
          await db.sendWithCommit(() => db.query(`INSERT INTO test_tx VALUES ($1::int)`, ['not a number']));
        }),
      ).rejects.toThrow(/invalid input syntax/);
      await db.transaction(async () => {
        await db.query(`INSERT INTO test_tx VALUES ($1)`, [4]);
        await db.sendWithCommit(() => db.query(`INSERT INTO test_tx VALUES ($1)`, [5]));
      });
      expect((await db.query<{ v: number }>(`SELECT v FROM test_tx ORDER BY v`)).map((r) => r.v)).toEqual([4, 5]);
    });

    it('commitNow: commits before the function returns, with the before-commit records; nothing may be sent after it', async () => {
      const db = t.app.get(Db);
      await db.query(`CREATE TABLE test_early (v int)`);
      const seenOutside: number[] = [];
      const after: string[] = [];
      await db.transaction(async () => {
        const inserted = db.query<{ v: number }>(`INSERT INTO test_early VALUES ($1) RETURNING v`, [1]);
        void db.beforeCommit(() => db.sendWithCommit(() => db.query(`INSERT INTO test_early VALUES ($1)`, [2])));
        db.afterCommit(() => after.push('hook'));
        await db.commitNow();
        expect((await inserted)[0].v).toBe(1);
        // committed: another connection sees both rows before the function returns
        const rows = await db.detached(() => db.query<{ v: number }>(`SELECT v FROM test_early ORDER BY v`));
        seenOutside.push(...rows.map((r) => r.v));
        await expect(db.query(`INSERT INTO test_early VALUES (3)`)).rejects.toThrow(/already committed/);
        expect(() => db.txLocal(Symbol('x'), () => 1)).toThrow(/already committed/);
        expect(after).toEqual([]);
      });
      expect(seenOutside).toEqual([1, 2]);
      expect(after).toEqual(['hook']);
      expect((await db.query<{ v: number }>(`SELECT v FROM test_early ORDER BY v`)).map((r) => r.v)).toEqual([1, 2]);
    });

    it('commitNow: a failing statement rolls the whole transaction back and fails it', async () => {
      const db = t.app.get(Db);
      await db.query(`CREATE TABLE test_early_fail (v int)`);
      await expect(
        db.transaction(async () => {
          void db.query(`INSERT INTO test_early_fail VALUES ($1)`, [1]).catch(() => undefined);
          await db.sendWithCommit(() => db.query(`INSERT INTO test_early_fail VALUES ($1::int)`, ['not a number']));
          await db.commitNow();
        }),
      ).rejects.toThrow(/invalid input syntax/);
      expect(await db.query(`SELECT v FROM test_early_fail`)).toEqual([]);
      // the connection went back to the pool usable
      await db.transaction(async () => {
        await db.query(`INSERT INTO test_early_fail VALUES ($1)`, [2]);
        await db.commitNow();
      });
      expect((await db.query<{ v: number }>(`SELECT v FROM test_early_fail`)).map((r) => r.v)).toEqual([2]);
    });

    it('hands the result of a statement sent with the commit to `then` once committed, and never after a rollback', async () => {
      const db = t.app.get(Db);
      await db.query(`CREATE TABLE test_then (v int)`);
      const seen: Array<{ returned: number; committed: number }> = [];
      const then = async (rows: Array<{ v: number }>) => {
        // outside the transaction: another connection sees the row only if it has committed
        const [{ n }] = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM test_then WHERE v = $1`, [rows[0].v]);
        seen.push({ returned: rows[0].v, committed: n });
      };
      await db.transaction(async () => {
        await db.sendWithCommit(() => db.query<{ v: number }>(`INSERT INTO test_then VALUES ($1) RETURNING v`, [7]), then);
        expect(seen).toEqual([]);
      });
      expect(seen).toEqual([{ returned: 7, committed: 1 }]);
      await expect(
        db.transaction(async () => {
          await db.sendWithCommit(() => db.query<{ v: number }>(`INSERT INTO test_then VALUES ($1) RETURNING v`, [8]), then);
          throw new Error('nope');
        }),
      ).rejects.toThrow('nope');
      expect(seen).toHaveLength(1);
    });

    it('statements sent in one turn leave in one socket write', async () => {
      const pool = (t.dataSource.driver as unknown as { master: { connect(): Promise<PoolClient> } }).master;
      const client = await pool.connect();
      try {
        type Writer = (...a: unknown[]) => unknown;
        const stream = (client as unknown as { connection: { stream: { _write: Writer; _writev: Writer } } }).connection.stream;
        const original = { _write: stream._write, _writev: stream._writev };
        let writes = 0;
        for (const key of ['_write', '_writev'] as const) {
          stream[key] = function (this: unknown, ...args: unknown[]) {
            writes++;
            return original[key].apply(this, args);
          };
        }
        try {
          const rows = await Promise.all([
            client.query('SELECT 1 AS a'),
            client.query('SELECT $1::int AS b', [2]),
            client.query('SELECT $1::int AS c', [3]),
          ]);
          expect(rows.map((r) => r.rows[0])).toEqual([{ a: 1 }, { b: 2 }, { c: 3 }]);
          expect(writes).toBe(1);
          await client.query('SELECT 4');
          expect(writes).toBe(2);
        } finally {
          Object.assign(stream, original);
        }
      } finally {
        client.release();
      }
    });

    it('an error raised at COMMIT (a deferred constraint) is a QueryFailedError too, so it maps to its 4xx', async () => {
      const db = t.app.get(Db);
      await db.query(`CREATE TABLE test_deferred (v int UNIQUE DEFERRABLE INITIALLY DEFERRED)`);
      const err = await db
        .transaction(async () => {
          await db.query(`INSERT INTO test_deferred VALUES ($1), ($1)`, [1]);
        })
        .catch((e: unknown) => e);
      expect((err as { name: string }).name).toBe('QueryFailedError');
      expect((err as { driverError: { code: string } }).driverError.code).toBe('23505');
      expect(await db.query(`SELECT v FROM test_deferred`)).toEqual([]);
    });

    it('answers UPDATE and DELETE as [rows, rowCount] and other statements as rows', async () => {
      const db = t.app.get(Db);
      await db.query(`CREATE TABLE test_shape (v int)`);
      expect(await db.query(`INSERT INTO test_shape VALUES (1), (2) RETURNING v`)).toEqual([{ v: 1 }, { v: 2 }]);
      expect(await db.query(`UPDATE test_shape SET v = v + 10 WHERE v = $1 RETURNING v`, [1])).toEqual([[{ v: 11 }], 1]);
      expect(await db.query(`DELETE FROM test_shape WHERE v > $1`, [0])).toEqual([[], 2]);
    });

    it('prepares hot statements; inside a transaction one sent with plan: custom stays unnamed (planned for its values every time)', async () => {
      const db = t.app.get(Db);
      const statements = await db.transaction(async () => {
        for (let i = 0; i < 5; i++) await db.query(`SELECT $1::int AS hot`, [i]);
        for (let i = 0; i < 5; i++) expect(await db.query(`SELECT $1::int AS valued`, [i], { plan: 'custom' })).toEqual([{ valued: i }]);
        return db.query<{ statement: string }>(`SELECT statement FROM pg_prepared_statements`);
      });
      expect(statements.map((r) => r.statement)).toContain('SELECT $1::int AS hot');
      expect(statements.map((r) => r.statement)).not.toContain('SELECT $1::int AS valued');
    });

    it('outside a transaction, a plan: custom statement is prepared once hot but never gets a generic plan', async () => {
      const db = t.app.get(Db);
      // the statement looks itself up among its session's prepared statements
      const probe = `SELECT current_setting('plan_cache_mode') AS mode, $1::int AS v,
        (SELECT json_build_object('generic', generic_plans, 'custom', custom_plans) FROM pg_prepared_statements
          WHERE statement LIKE '%custom_plan_probe%' LIMIT 1) AS prepared -- custom_plan_probe`;
      const runs: Array<{ mode: string; v: number; prepared: { generic: number; custom: number } | null }> = [];
      for (let i = 0; i < 12; i++) runs.push(...(await db.query<(typeof runs)[number]>(probe, [i], { plan: 'custom' })));
      expect(runs.map((r) => r.v)).toEqual([...Array(12).keys()]);
      expect(new Set(runs.map((r) => r.mode))).toEqual(new Set(['force_custom_plan']));
      // named from its third run on (PREPARE_AFTER), on whichever pooled connection runs it; never a generic plan
      const prepared = runs.slice(2).map((r) => r.prepared);
      expect(prepared.every((p) => p !== null && p.generic === 0)).toBe(true);
      expect(Math.max(...prepared.map((p) => p?.custom ?? 0))).toBeGreaterThan(1);
      // the setting belongs to the custom-plan connections' sessions only
      expect(await db.query(`SELECT current_setting('plan_cache_mode') AS mode`)).toEqual([{ mode: 'auto' }]);
    });

    it("plan: custom statements run on at most four connections of their own, with the main sessions' settings", async () => {
      const db = t.app.get(Db);
      const sql = `SELECT pg_backend_pid() AS pid, current_setting('plan_cache_mode') AS mode, current_setting('TimeZone') AS tz,
        current_setting('application_name') AS app, pg_sleep(0.02) AS slept, $1::int AS v`;
      const rows = (
        await Promise.all(
          Array.from({ length: 20 }, (_, i) =>
            db.query<{ pid: number; mode: string; tz: string; app: string; v: number }>(sql, [i], { plan: 'custom' }),
          ),
        )
      ).flat();
      expect(rows.map((r) => r.v)).toEqual([...Array(20).keys()]);
      expect(new Set(rows.map((r) => `${r.mode} ${r.tz} ${r.app}`))).toEqual(
        new Set(['force_custom_plan UTC agent-orchestration-service']),
      );
      const pids = new Set(rows.map((r) => r.pid));
      expect(pids.size).toBeGreaterThan(1);
      expect(pids.size).toBeLessThanOrEqual(4);
      const [main] = await db.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
      expect(pids.has(main.pid)).toBe(false);
    });

    it('a failing plan: custom statement is a QueryFailedError and leaves its connection usable', async () => {
      const db = t.app.get(Db);
      for (let i = 0; i < 4; i++) {
        const err = await db.query(`SELECT $1::int AS broken`, ['x'], { plan: 'custom' }).catch((e: unknown) => e);
        expect((err as { name: string }).name).toBe('QueryFailedError');
        expect((err as { driverError: { code: string } }).driverError.code).toBe('22P02');
      }
      expect(await db.query(`SELECT $1::int AS fine, current_setting('plan_cache_mode') AS mode`, [7])).toEqual([
        { fine: 7, mode: 'auto' },
      ]);
      expect(await db.query(`SELECT $1::int AS fine`, [8], { plan: 'custom' })).toEqual([{ fine: 8 }]);
    });

    it('runs sessions in UTC and reads timestamps to the millisecond, whatever the server default', async () => {
      const db = t.app.get(Db);
      const [row] = await db.query<{ tz: string; at: Date; plain: Date; offset: Date }>(
        `SELECT current_setting('TimeZone') AS tz, '2026-03-01 00:00:00.1239+00'::timestamptz AS at,
                '2026-03-01 00:00:00+00'::timestamptz AS plain, '2026-02-28 19:00:00.5-05'::timestamptz AS offset`,
      );
      expect(row.tz).toBe('UTC');
      expect(row.at.toISOString()).toBe('2026-03-01T00:00:00.123Z');
      expect(row.plain.toISOString()).toBe('2026-03-01T00:00:00.000Z');
      expect(row.offset.toISOString()).toBe('2026-03-01T00:00:00.500Z');
    });

    it('reports SQL errors as QueryFailedError with the driver error (so the filter maps SQLSTATEs)', async () => {
      const db = t.app.get(Db);
      const err = await db.query(`SELECT $1::int`, ['x']).catch((e: unknown) => e);
      expect((err as { name: string }).name).toBe('QueryFailedError');
      expect((err as { driverError: { code: string } }).driverError.code).toBe('22P02');
    });
  });

  describe('indexes', () => {
    it('full-text indexes write entries directly, so no pending list slows searches between vacuums', async () => {
      const rows = await t.dataSource.query(
        `SELECT relname, reloptions FROM pg_class WHERE relname IN ('issues_search_idx', 'issues_title_search_idx', 'issue_comments_search_idx')
          ORDER BY relname`,
      );
      expect(rows).toEqual([
        { relname: 'issue_comments_search_idx', reloptions: ['fastupdate=off'] },
        { relname: 'issues_search_idx', reloptions: ['fastupdate=off'] },
        { relname: 'issues_title_search_idx', reloptions: ['fastupdate=off'] },
      ]);
    });
  });

  describe('prepared statements', () => {
    let client: Client;
    beforeAll(async () => {
      const Preparing = preparingClientClass(3, 2);
      client = new Preparing({ connectionString: await createTestDatabase(), pipeline: true } as never);
      await client.connect();
    });
    afterAll(() => client.end());

    const prepared = async () =>
      (await client.query(`SELECT statement FROM pg_prepared_statements ORDER BY statement`)).rows.map(
        (r: { statement: string }) => r.statement,
      );

    it('names a parameterised statement once it has run often enough, and only up to the cap', async () => {
      for (let i = 0; i < 2; i++) await client.query('SELECT $1::int AS a', [i]);
      expect(await prepared()).toEqual([]);
      const third = await client.query('SELECT $1::int AS a', [7]);
      expect(third.rows).toEqual([{ a: 7 }]);
      expect(await prepared()).toEqual(['SELECT $1::int AS a']);
      for (let i = 0; i < 3; i++) await client.query('SELECT $1::int AS b', [i]);
      for (let i = 0; i < 3; i++) await client.query('SELECT $1::int AS c', [i]);
      // the cap (2) keeps the third statement unnamed
      expect(await prepared()).toEqual(['SELECT $1::int AS a', 'SELECT $1::int AS b']);
      expect((await client.query('SELECT $1::int AS c', [9])).rows).toEqual([{ c: 9 }]);
    });

    it('leaves parameterless text (scripts of several statements) on the simple protocol', async () => {
      for (let i = 0; i < 4; i++) await client.query('SELECT 1 AS one; SELECT 2 AS two');
      expect(await prepared()).not.toContain('SELECT 1 AS one; SELECT 2 AS two');
    });
  });

  describe('company existence remembered by the guard', () => {
    it('a company deleted through this instance is gone at once', async () => {
      const c = await createCompany(t);
      await t.http.get(`/api/companies/${c.id}/issues`).expect(200);
      await t.http.delete(`/api/companies/${c.id}`).expect(200);
      await t.http.get(`/api/companies/${c.id}/issues`).expect(404);
      await t.http.post(`/api/companies/${c.id}/issues`).send({ title: 'x' }).expect(404);
    });

    it('an unknown company is never remembered as existing', async () => {
      const id = '00000000-0000-4000-8000-000000000001';
      await t.http.get(`/api/companies/${id}/issues`).expect(404);
      await t.http.get(`/api/companies/${id}/issues`).expect(404);
    });
  });
});
