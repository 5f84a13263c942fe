import { AsyncLocalStorage } from 'node:async_hooks';
import { Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import type { Pool, PoolClient, PoolConfig, QueryResult } from 'pg';
import { DataSource, EntityManager, EntityTarget, ObjectLiteral, QueryFailedError, QueryRunner, Repository } from 'typeorm';

interface TxContext {
  qr: TxQueryRunner;
  manager: EntityManager;
  /** set once the transaction has its connection and BEGIN went out (see `open`) */
  client: PoolClient | null;
  opening: Promise<PoolClient> | null;
  begin: Promise<unknown> | null;
  afterCommit: Array<() => unknown>;
  /** how many hooks at the head of afterCommit were added with `first` (they keep their own order) */
  leading: number;
  /** run once fn is done, in the transaction: they send its last statements (see `beforeCommit`) */
  beforeCommit: Array<() => unknown>;
  /** per-transaction values (see `txLocal`) */
  locals: Map<object | symbol, unknown>;
  /** statements sent but not awaited: the COMMIT goes out right behind them */
  pending: Array<Promise<unknown>>;
  /** set by `commitNow`: the COMMIT sent before the function returned (resolves once committed) */
  committing: Promise<void> | null;
  /** set once `commitNow` has sent the transaction's last statements: nothing may be sent after */
  closed: boolean;
}

const als = new AsyncLocalStorage<TxContext>();

const DEADLOCK_ATTEMPTS = 3;
/** SQLSTATE 40P01 (deadlock_detected), as TypeORM or pg report it */
const isDeadlock = (err: unknown): boolean =>
  (err as { code?: unknown })?.code === '40P01' || (err as { driverError?: { code?: unknown } })?.driverError?.code === '40P01';

export interface QueryOptions {
  /**
   * `'custom'`: Postgres plans the statement for the values of each execution, never a generic
   * plan. For statements whose best plan depends on the values (full-text search: a generic plan,
   * which Postgres may adopt for a prepared statement after five runs, made a broad search 2.5x
   * slower). Outside a transaction the statement is still prepared (parsed once per connection) and
   * runs on a small pool of connections whose sessions force custom plans (CUSTOM_PLAN_POOL_SIZE);
   * inside one it is sent unnamed (parsed and planned each time).
   */
  plan?: 'custom';
}

/** A statement written to the connection now; its errors are TypeORM's QueryFailedError (the error filter maps their SQLSTATE). */
function send(to: Pool | PoolClient, sql: string, params: unknown[] = [], opts: QueryOptions = {}): Promise<QueryResult> {
  // a query config object (rather than text) is never named by the preparing client
  const sent = opts.plan === 'custom' ? to.query({ text: sql, values: params }) : to.query(sql, params);
  return (sent as Promise<QueryResult>).catch((err: unknown) => {
    throw new QueryFailedError(sql, params, err as Error);
  });
}

/**
 * Connections for statements planned for their values (QueryOptions' `plan: 'custom'`) outside a
 * transaction: their sessions run with `plan_cache_mode = force_custom_plan`, so such a statement is
 * prepared (parsed once per connection, by the preparing client once it is hot) and planned for its
 * values each time, in one statement and one round trip. Wrapping it in BEGIN, SET LOCAL and COMMIT on
 * a shared connection cost ~0.15 ms of Postgres CPU per search, more than half the search itself.
 */
const CUSTOM_PLAN_POOL_SIZE = 4;

const committedError = () => new Error('the transaction has already committed (Db.commitNow): nothing may be sent in it after that');

/** TypeORM's transaction bookkeeping, set when Db opens the transaction itself. */
type TxQueryRunner = Omit<QueryRunner, 'isTransactionActive'> & { isTransactionActive: boolean; transactionDepth: number };

/**
 * The one way domain code reaches the database. Inside `transaction()` (opened per mutating
 * request by the activity interceptor) every repository and query shares that transaction, so a
 * mutation and its activity record commit together or not at all.
 *
 * Round trips are the main cost of a request here, so the connections run in node-postgres'
 * pipeline mode and a transaction spends as few of them as it can: BEGIN travels with the first
 * statement, and statements handed to `sendWithCommit` travel with the COMMIT. Raw queries are
 * written to the connection synchronously, in call order, so that pipelining keeps their order.
 */
@Injectable()
export class Db implements OnApplicationShutdown {
  private readonly logger = new Logger('Db');
  /** made on first use (see CUSTOM_PLAN_POOL_SIZE) */
  private customPlanned: Pool | null = null;

  constructor(readonly dataSource: DataSource) {}

  get manager(): EntityManager {
    const tx = als.getStore();
    if (!tx) return this.dataSource.manager;
    if (tx.closed) throw committedError();
    // TypeORM connects the query runner on its first statement; BEGIN must precede it
    if (!tx.client) void this.open(tx).catch(() => undefined);
    return tx.manager;
  }

  get inTransaction(): boolean {
    return als.getStore() !== undefined;
  }

  repo<T extends ObjectLiteral>(entity: EntityTarget<T>): Repository<T> {
    return this.manager.getRepository(entity);
  }

  /**
   * Rows of a statement. As TypeORM's `query` answers: UPDATE and DELETE give `[rows, rowCount]`.
   * Errors are TypeORM's QueryFailedError (the error filter maps their SQLSTATE).
   */
  query<T = Record<string, unknown>>(sql: string, params: unknown[] = [], opts: QueryOptions = {}): Promise<T[]> {
    const tx = als.getStore();
    if (tx?.closed) return Promise.reject(committedError());
    const sent = !tx
      ? opts.plan === 'custom'
        ? send(this.customPlanPool, sql, params)
        : send(this.pool, sql, params, opts)
      : tx.client
        ? send(tx.client, sql, params, opts)
        : this.open(tx).then((c) => send(c, sql, params, opts));
    return sent.then((raw) => (raw.command === 'UPDATE' || raw.command === 'DELETE' ? [raw.rows, raw.rowCount] : raw.rows) as T[]);
  }

  /**
   * Sends a statement of the current transaction without waiting for it: its result is awaited
   * together with the COMMIT, which follows it on the same round trip. If it fails the transaction
   * rolls back and the request fails. Outside a transaction it is simply awaited.
   *
   * `then` receives the statement's result once the transaction has committed (an after-commit hook:
   * it runs before the transaction's caller continues, and its errors are logged, not thrown; outside
   * a transaction it simply follows the statement). Row
   * locks the statement takes are so held only while Postgres runs it and the COMMIT, never while
   * Node is busy with other requests.
   */
  async sendWithCommit<T>(statement: () => Promise<T>, then?: (result: T) => unknown): Promise<void> {
    const tx = als.getStore();
    if (!tx) {
      const result = await statement();
      if (then) await then(result);
      return;
    }
    const p = statement();
    p.catch(() => undefined);
    tx.pending.push(p);
    if (then) tx.afterCommit.push(async () => then(await p));
  }

  /**
   * Runs fn in a transaction; nested calls join the outer one. After-commit hooks run once it commits.
   *
   * The transaction takes its pooled connection and sends BEGIN only with its first statement, so
   * what a mutating request does before touching the database (validation, reading an upload,
   * hashing a password) holds no connection idle in a transaction; one that never touches the
   * database costs no round trip at all.
   */
  async transaction<T>(fn: () => Promise<T>): Promise<T> {
    const current = als.getStore();
    if (current) return fn();
    // Postgres breaks a deadlock by aborting one of its transactions: that one is run again (its
    // after-commit hooks only ever ran for the attempt that committed)
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.runTransaction(fn);
      } catch (err) {
        if (attempt >= DEADLOCK_ATTEMPTS || !isDeadlock(err)) throw err;
        this.logger.warn(`deadlock victim, running the transaction again (attempt ${attempt + 1} of ${DEADLOCK_ATTEMPTS})`);
        await new Promise((r) => setTimeout(r, 5 + Math.floor(Math.random() * 20 * attempt)));
      }
    }
  }

  private async runTransaction<T>(fn: () => Promise<T>): Promise<T> {
    const qr = this.dataSource.createQueryRunner() as unknown as TxQueryRunner;
    // TypeORM must see a transaction (so that save() does not open one of its own) before its first statement
    qr.isTransactionActive = true;
    qr.transactionDepth = 1;
    const ctx: TxContext = {
      qr,
      manager: qr.manager,
      client: null,
      opening: null,
      begin: null,
      afterCommit: [],
      leading: 0,
      beforeCommit: [],
      locals: new Map(),
      pending: [],
      committing: null,
      closed: false,
    };
    let result: T;
    try {
      try {
        result = await als.run(ctx, fn);
        if (ctx.committing) await ctx.committing;
        else await this.sendLast(ctx);
        if (ctx.opening) await ctx.opening;
        await ctx.begin;
      } catch (err) {
        if (ctx.opening) {
          await Promise.allSettled([ctx.opening, ctx.begin, ...ctx.pending, ctx.committing]);
          if (ctx.client) await send(ctx.client, 'ROLLBACK').catch(() => undefined);
        }
        throw err;
      }
      if (!ctx.committing) await this.commit(ctx);
    } finally {
      qr.isTransactionActive = false;
      qr.transactionDepth = 0;
      await qr.release();
    }
    for (const hook of ctx.afterCommit) {
      try {
        await hook();
      } catch (err) {
        this.logger.error(`after-commit hook failed: ${(err as Error).message}`);
      }
    }
    return result;
  }

  /**
   * Commits the current transaction now, before its function returns: its before-commit work (the
   * activity records) and the COMMIT are written right behind the statements already sent, without
   * waiting for their answers, so the row locks those statements take are held only while Postgres
   * runs them. Resolves once committed; rejects with the first failed statement (the transaction
   * then rolled back). The function must send no statement after it. After-commit hooks still run
   * when the function returns. Outside a transaction it does nothing.
   */
  commitNow(): Promise<void> {
    const ctx = als.getStore();
    if (!ctx) return Promise.resolve();
    if (!ctx.committing) {
      ctx.committing = this.sendLast(ctx).then(() => this.commit(ctx));
      ctx.committing.catch(() => undefined);
    }
    return ctx.committing;
  }

  /** The transaction's last statements (its before-commit work); nothing may be sent after them. */
  private async sendLast(ctx: TxContext): Promise<void> {
    for (let hook = ctx.beforeCommit.shift(); hook; hook = ctx.beforeCommit.shift()) await als.run(ctx, hook);
    ctx.closed = true;
  }

  /**
   * The COMMIT, chained on the connection like every statement before it, so it is written right
   * behind them. A statement that failed aborted the transaction, and Postgres answers the COMMIT
   * with a rollback: the first failure is thrown.
   */
  private async commit(ctx: TxContext): Promise<void> {
    if (!ctx.opening) return;
    const client = await ctx.opening;
    const commit = send(client, 'COMMIT');
    const settled = await Promise.allSettled([ctx.begin, ...ctx.pending, commit]);
    const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
    if (failed) throw failed.reason;
  }

  /**
   * Work that must only happen once the current transaction has committed (wake a dispatcher, kill
   * a process). `first`: before the hooks added without it (e.g. the live event of the change a
   * request made, ahead of the events of what that change caused).
   */
  afterCommit(fn: () => unknown, opts: { first?: boolean } = {}): void {
    const current = als.getStore();
    if (current && opts.first) current.afterCommit.splice(current.leading++, 0, fn);
    else if (current) current.afterCommit.push(fn);
    else
      void Promise.resolve()
        .then(fn)
        .catch((err) => this.logger.error(`after-commit hook failed: ${(err as Error).message}`));
  }

  /**
   * Work that runs once the transaction's function is done, still in the transaction: the statements
   * it sends (with `sendWithCommit`) are the transaction's last, after everything else it sent. The
   * activity records go so: the chain head row lock they take is then the last lock a transaction
   * takes, held only while Postgres runs them and the COMMIT, and never part of a lock cycle.
   * Outside a transaction it runs at once.
   */
  async beforeCommit(fn: () => unknown): Promise<void> {
    const current = als.getStore();
    if (current?.closed) throw committedError();
    if (current) current.beforeCommit.push(fn);
    else await fn();
  }

  /** A value that lives as long as the current transaction, made on first use; undefined outside one. */
  txLocal<T>(key: object | symbol, create: () => T): T | undefined {
    const current = als.getStore();
    if (!current) return undefined;
    if (current.closed) throw committedError();
    if (!current.locals.has(key)) current.locals.set(key, create());
    return current.locals.get(key) as T;
  }

  /**
   * Runs fn outside the current transaction (on pooled connections of its own), e.g. a read that
   * precedes slow CPU work (password hashing) which must not hold the transaction open.
   */
  detached<T>(fn: () => Promise<T>): Promise<T> {
    return als.exit(fn);
  }

  /**
   * The transaction's connection, taken from the pool on first use; BEGIN is written before any
   * statement. Statements issued while it connects are chained on the same promise, so they keep
   * their call order.
   */
  private open(tx: TxContext): Promise<PoolClient> {
    if (!tx.opening) {
      tx.opening = (tx.qr.connect() as Promise<PoolClient>).then((client) => {
        // not awaited: it goes out with the transaction's first statement
        tx.begin = send(client, 'BEGIN');
        tx.begin.catch(() => undefined);
        tx.client = client;
        return client;
      });
    }
    return tx.opening;
  }

  private get pool(): Pool {
    return (this.dataSource.driver as unknown as { master: Pool }).master;
  }

  /** The main pool's settings, at most CUSTOM_PLAN_POOL_SIZE connections, sessions forcing custom plans. */
  private get customPlanPool(): Pool {
    if (!this.customPlanned) {
      const main = this.pool as Pool & { options: PoolConfig };
      const { options } = main.options;
      const pool = new (main.constructor as typeof Pool)({
        ...main.options,
        max: CUSTOM_PLAN_POOL_SIZE,
        options: `${options ?? ''} -c plan_cache_mode=force_custom_plan`.trim(),
      });
      // an idle connection that breaks (a restarted server) is dropped; the next statement opens another
      pool.on('error', (err) => this.logger.warn(`custom-plan connection lost: ${err.message}`));
      this.customPlanned = pool;
    }
    return this.customPlanned;
  }

  async onApplicationShutdown(): Promise<void> {
    const pool = this.customPlanned;
    this.customPlanned = null;
    await pool?.end();
  }
}
