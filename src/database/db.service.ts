import { AsyncLocalStorage } from 'node:async_hooks';
import { Injectable, Logger } from '@nestjs/common';
import type { Pool, PoolClient, QueryResult } from 'pg';
import { DataSource, EntityManager, EntityTarget, ObjectLiteral, QueryFailedError, QueryRunner, Repository } from 'typeorm';

interface TxContext {
  manager: EntityManager;
  client: PoolClient;
  afterCommit: Array<() => unknown>;
  /** statements sent but not awaited: the COMMIT goes out right behind them */
  pending: Array<Promise<unknown>>;
}

const als = new AsyncLocalStorage<TxContext>();

export interface QueryOptions {
  /**
   * `false`: never a prepared statement, so Postgres plans it for the values of each execution. For
   * statements whose best plan depends on the values (full-text search: a generic plan, which
   * Postgres adopts for a prepared statement after five runs, made a broad search 2.5x slower).
   */
  prepare?: boolean;
}

/** A statement written to the connection now; its errors are TypeORM's QueryFailedError (the error filter maps their SQLSTATE). */
function send(to: Pool | PoolClient, sql: string, params: unknown[] = [], opts: QueryOptions = {}): Promise<QueryResult> {
  // a query config object (rather than text) is never named by the preparing client
  const sent = opts.prepare === false ? to.query({ text: sql, values: params }) : to.query(sql, params);
  return (sent as Promise<QueryResult>).catch((err: unknown) => {
    throw new QueryFailedError(sql, params, err as Error);
  });
}

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
export class Db {
  private readonly logger = new Logger('Db');

  constructor(readonly dataSource: DataSource) {}

  get manager(): EntityManager {
    return als.getStore()?.manager ?? this.dataSource.manager;
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
    return send(tx ? tx.client : this.pool, sql, params, opts).then(
      (raw) => (raw.command === 'UPDATE' || raw.command === 'DELETE' ? [raw.rows, raw.rowCount] : raw.rows) as T[],
    );
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

  /** Runs fn in a transaction; nested calls join the outer one. After-commit hooks run once it commits. */
  async transaction<T>(fn: (manager: EntityManager) => Promise<T>): Promise<T> {
    const current = als.getStore();
    if (current) return fn(current.manager);
    const qr = this.dataSource.createQueryRunner() as unknown as TxQueryRunner;
    const client = (await qr.connect()) as PoolClient;
    // not awaited: it goes out with the transaction's first statement
    const begin = send(client, 'BEGIN');
    begin.catch(() => undefined);
    qr.isTransactionActive = true;
    qr.transactionDepth = 1;
    const ctx: TxContext = { manager: qr.manager, client, afterCommit: [], pending: [] };
    let result: T;
    try {
      try {
        result = await als.run(ctx, () => fn(qr.manager));
        await begin;
      } catch (err) {
        await Promise.allSettled([begin, ...ctx.pending]);
        await send(client, 'ROLLBACK').catch(() => undefined);
        throw err;
      }
      // a statement that failed aborted the transaction, and Postgres answers this COMMIT with a rollback
      const commit = send(client, 'COMMIT');
      const settled = await Promise.allSettled([...ctx.pending, commit]);
      const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
      if (failed) throw failed.reason;
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

  /** Work that must only happen once the current transaction has committed (wake a dispatcher, kill a process). */
  afterCommit(fn: () => unknown): void {
    const current = als.getStore();
    if (current) current.afterCommit.push(fn);
    else
      void Promise.resolve()
        .then(fn)
        .catch((err) => this.logger.error(`after-commit hook failed: ${(err as Error).message}`));
  }

  private get pool(): Pool {
    return (this.dataSource.driver as unknown as { master: Pool }).master;
  }
}
