import type { Client } from 'pg';
import type { EntityTarget, ObjectLiteral, Repository } from 'typeorm';
import { Db, QueryOptions } from './db.service';

/** Options of one statement. */
export interface StatementOptions extends QueryOptions {
  /**
   * Run outside the current transaction, on a pooled connection of its own: a touch (last used at)
   * or a read that must neither wait for nor roll back with the request's transaction.
   */
  detached?: boolean;
}

/** The transaction controls a repository may use. None of them runs a statement. */
export type TxControls = Pick<
  Db,
  'inTransaction' | 'afterCommit' | 'beforeCommit' | 'sendWithCommit' | 'txLocal' | 'transaction' | 'detached'
>;

/** `$1` referenced (and not `$10`…): the company id the scoped paths put first is in the statement. */
const NAMES_COMPANY = /\$1(?!\d)/;

/**
 * What every repository has: the transaction controls and the one escape hatch, `unscoped`. The
 * database handle itself is private to this file, so a repository has no other way to run SQL:
 * the company-scoped paths (`CompanyScopedRepository`), the instance-table paths
 * (`InstanceRepository`), or `unscoped(reason, …)`, whose reason a reviewer reads and the ownership
 * test (test/unit/sql-ownership.spec.ts) lists.
 */
abstract class RepositoryBase {
  readonly #db: Db;

  constructor(db: Db) {
    this.#db = db;
    handles.set(this, db);
  }

  /** The transaction controls (no statement path). */
  protected get tx(): TxControls {
    return this.#db;
  }

  /**
   * The escape hatch: a statement that does not name one company (a dispatcher claim across
   * companies, an instance-wide sweep, a lookup by a token or a key already proven to be in the
   * company). `reason` says why, for the reviewer; it is not sent anywhere.
   */
  protected unscoped<T>(reason: string, sql: string, params: unknown[] = [], opts: StatementOptions = {}): Promise<T[]> {
    if (reason.trim().length < 8) throw new Error(`${this.constructor.name}: unscoped statement without a reason`);
    return run<T>(this, sql, params, opts);
  }

  /** First row (or null) of an unscoped statement (see `unscoped`). */
  protected async unscopedRow<T>(reason: string, sql: string, params: unknown[] = [], opts: StatementOptions = {}): Promise<T | null> {
    const rows = await this.unscoped<T>(reason, sql, params, opts);
    return rows[0] ?? null;
  }

  /** Rows of an unscoped UPDATE/DELETE … RETURNING (see `unscoped`). */
  protected async unscopedReturning<T>(reason: string, sql: string, params: unknown[] = [], opts: StatementOptions = {}): Promise<T[]> {
    return unwrapReturning<T>(await this.unscoped<unknown>(reason, sql, params, opts));
  }

  /**
   * The TypeORM repository of one of this module's entities. Its `where` clauses must name the
   * company for a company-scoped entity: the ownership test cannot read them, so keep these to
   * inserts and saves of whole entities.
   */
  protected orm<T extends ObjectLiteral>(entity: EntityTarget<T>): Repository<T> {
    return this.#db.repo(entity);
  }
}

/** Each repository's database handle, reachable only from this file. */
const handles = new WeakMap<RepositoryBase, Db>();

/** Runs a statement on a repository's handle; private to the bases in this file. */
function run<T>(repo: RepositoryBase, sql: string, params: unknown[], opts: StatementOptions): Promise<T[]> {
  const db = handles.get(repo) as Db;
  const { detached, ...queryOpts } = opts;
  return detached ? db.detached(() => db.query<T>(sql, params, queryOpts)) : db.query<T>(sql, params, queryOpts);
}

/**
 * Base of every repository of a company-owned table. It is the only place such a table's SQL lives;
 * every statement names the company: the company id goes first (`$1`), merged into the statement by
 * these paths, and a statement that does not reference `$1` is refused before it reaches SQL, as is
 * an empty company id. What cannot name one company goes through `unscoped(reason, …)`. Statements
 * run inside the current transaction when there is one (Db joins it through AsyncLocalStorage).
 */
export abstract class CompanyScopedRepository extends RepositoryBase {
  /** Throws unless `companyId` is a non-empty string: a missing tenant filter never reaches SQL. */
  protected scope(companyId: string | null | undefined): string {
    if (typeof companyId !== 'string' || companyId.length === 0) {
      throw new Error(`${this.constructor.name}: company-scoped statement without a companyId`);
    }
    return companyId;
  }

  /** Rows of a statement whose `$1` is the company id. */
  protected rows<T>(companyId: string, sql: string, params: unknown[] = [], opts: StatementOptions = {}): Promise<T[]> {
    const scoped = this.scope(companyId);
    if (!NAMES_COMPANY.test(sql))
      throw new Error(`${this.constructor.name}: company-scoped statement that does not use its company id ($1)`);
    return run<T>(this, sql, [scoped, ...params], opts);
  }

  /** First row (or null) of a statement whose `$1` is the company id. */
  protected async row<T>(companyId: string, sql: string, params: unknown[] = [], opts: StatementOptions = {}): Promise<T | null> {
    const rows = await this.rows<T>(companyId, sql, params, opts);
    return rows[0] ?? null;
  }

  /** Rows of an UPDATE/DELETE … RETURNING whose `$1` is the company id. */
  protected async returning<T>(companyId: string, sql: string, params: unknown[] = [], opts: StatementOptions = {}): Promise<T[]> {
    return unwrapReturning<T>(await this.rows<unknown>(companyId, sql, params, opts));
  }
}

/**
 * Base of a repository of instance-wide tables (no `company_id`: users, sessions, instance
 * settings, plugins, backups). `rows` here must not touch a company-owned table; the ownership test
 * fails on one that does (use `unscoped` with its reason, or the owner's lookup).
 */
export abstract class InstanceRepository extends RepositoryBase {
  /** Rows of a statement on instance-wide tables. */
  protected rows<T>(sql: string, params: unknown[] = [], opts: StatementOptions = {}): Promise<T[]> {
    return run<T>(this, sql, params, opts);
  }

  /** First row (or null) of a statement on instance-wide tables. */
  protected async row<T>(sql: string, params: unknown[] = [], opts: StatementOptions = {}): Promise<T | null> {
    const rows = await this.rows<T>(sql, params, opts);
    return rows[0] ?? null;
  }

  /** Rows of an UPDATE/DELETE … RETURNING on instance-wide tables. */
  protected async returning<T>(sql: string, params: unknown[] = [], opts: StatementOptions = {}): Promise<T[]> {
    return unwrapReturning<T>(await this.rows<unknown>(sql, params, opts));
  }
}

/**
 * Base of the operator CLI's repository (`aos doctor`, `aos claim-token`, restore checks): it runs
 * in its own process on a plain pg `Client`, without the service, and what it reads and writes is
 * instance-wide by nature, so its only path is `unscoped(reason, …)`.
 */
export abstract class OperatorRepository {
  readonly #client: Client;

  constructor(client: Client) {
    this.#client = client;
  }

  protected async unscoped<T>(reason: string, sql: string, params: unknown[] = []): Promise<T[]> {
    if (reason.trim().length < 8) throw new Error(`${this.constructor.name}: unscoped statement without a reason`);
    return (await this.#client.query(sql, params)).rows as T[];
  }
}

/** TypeORM's postgres driver answers UPDATE and DELETE with `[rows, rowCount]` instead of the rows. */
function unwrapReturning<T>(result: unknown): T[] {
  if (Array.isArray(result) && result.length === 2 && Array.isArray(result[0]) && typeof result[1] === 'number') return result[0] as T[];
  return result as T[];
}

/**
 * The `RETURNING` helper for code in src/database (module repositories use `returning` or
 * `unscopedReturning`).
 */
export async function returningRows<T>(db: Db, sql: string, params: unknown[]): Promise<T[]> {
  return unwrapReturning<T>(await db.query(sql, params));
}
