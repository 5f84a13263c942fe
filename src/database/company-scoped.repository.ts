import type { Client } from 'pg';
import type { EntityTarget, FindManyOptions, FindOneOptions, FindOptionsWhere, ObjectLiteral, Repository } from 'typeorm';
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
   * The TypeORM writes of one of this module's entities: `create`, `save` and `insert` of whole
   * entities, which carry their own company id. No reads, no `where`: a read goes through the
   * company-scoped paths or `unscoped(reason, …)`, where the ownership test can see it.
   */
  protected orm<T extends ObjectLiteral>(entity: EntityTarget<T>): OrmWrites<T> {
    return this.#db.repo(entity);
  }

  /**
   * TypeORM reads that do not name one company (the list of companies, a lookup by a key already
   * proven, a sweep of this instance's runtimes). `reason` says why, as for `unscoped`; the ownership
   * test lists it.
   */
  protected unscopedOrm<T extends ObjectLiteral>(reason: string, entity: EntityTarget<T>): OrmReads<T> {
    if (reason.trim().length < 8) throw new Error(`${this.constructor.name}: unscoped ORM read without a reason`);
    return this.#db.repo(entity);
  }
}

/** What `orm()` offers: whole-entity writes only (see `RepositoryBase.orm`). */
export type OrmWrites<T extends ObjectLiteral> = Pick<Repository<T>, 'create' | 'save' | 'insert'>;

/** The TypeORM reads an `unscopedOrm(reason, …)` or `ormIn(companyId, …)` offers. */
export type OrmReads<T extends ObjectLiteral> = Pick<
  Repository<T>,
  'find' | 'findOne' | 'findBy' | 'findOneBy' | 'findOneByOrFail' | 'count'
>;

/** The entity column that names the company: `companyId`, or `id` for the companies table itself. */
type CompanyColumn<T> = { [K in keyof T]: T[K] extends string ? K : never }[keyof T] & string;

/** `where` with the company merged into each alternative: the caller cannot leave it out or widen it. */
function inCompany<T extends ObjectLiteral>(
  where: FindOptionsWhere<T> | FindOptionsWhere<T>[] | undefined,
  column: string,
  companyId: string,
): FindOptionsWhere<T> | FindOptionsWhere<T>[] {
  const scope = { [column]: companyId } as FindOptionsWhere<T>;
  if (Array.isArray(where)) return where.length ? where.map((w) => ({ ...w, ...scope })) : [scope];
  return { ...(where ?? {}), ...scope };
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

  /**
   * TypeORM reads of one of this module's entities within one company: the company (column
   * `companyId`, or `column`) is merged into every `where`, so no read here reaches another company.
   */
  protected ormIn<T extends ObjectLiteral>(
    companyId: string,
    entity: EntityTarget<T>,
    column: CompanyColumn<T> = 'companyId' as CompanyColumn<T>,
  ): OrmReads<T> {
    const scoped = this.scope(companyId);
    const repo = (handles.get(this) as Db).repo(entity);
    const opts = <O extends FindOneOptions<T> | FindManyOptions<T>>(o: O | undefined): O =>
      ({ ...(o ?? {}), where: inCompany(o?.where, column, scoped) }) as O;
    return {
      find: (o?: FindManyOptions<T>) => repo.find(opts(o)),
      findOne: (o: FindOneOptions<T>) => repo.findOne(opts(o)),
      findBy: (w: FindOptionsWhere<T> | FindOptionsWhere<T>[]) => repo.findBy(inCompany(w, column, scoped)),
      findOneBy: (w: FindOptionsWhere<T> | FindOptionsWhere<T>[]) => repo.findOneBy(inCompany(w, column, scoped)),
      findOneByOrFail: (w: FindOptionsWhere<T> | FindOptionsWhere<T>[]) => repo.findOneByOrFail(inCompany(w, column, scoped)),
      count: (o?: FindManyOptions<T>) => repo.count(opts(o)),
    };
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
