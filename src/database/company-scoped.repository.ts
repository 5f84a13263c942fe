import { Db, QueryOptions } from './db.service';

/**
 * Base of every repository of a company-scoped table. It is the only place such a table's SQL
 * lives; every read and write names the company, and an empty company id is a bug caught here
 * rather than a query across tenants. Statements run inside the current transaction when there is
 * one (Db joins it through AsyncLocalStorage).
 */
export abstract class CompanyScopedRepository {
  constructor(protected readonly db: Db) {}

  /** Throws unless `companyId` is a non-empty string: a missing tenant filter never reaches SQL. */
  protected scope(companyId: string | null | undefined): string {
    if (typeof companyId !== 'string' || companyId.length === 0) {
      throw new Error(`${this.constructor.name}: company-scoped statement without a companyId`);
    }
    return companyId;
  }

  /** Rows of a statement whose first parameter is the company id. */
  protected rows<T>(companyId: string, sql: string, params: unknown[] = [], opts?: QueryOptions): Promise<T[]> {
    return this.db.query<T>(sql, [this.scope(companyId), ...params], opts);
  }

  /** First row (or null) of a statement whose first parameter is the company id. */
  protected async row<T>(companyId: string, sql: string, params: unknown[] = [], opts?: QueryOptions): Promise<T | null> {
    const rows = await this.rows<T>(companyId, sql, params, opts);
    return rows[0] ?? null;
  }

  /** Rows of an UPDATE/DELETE … RETURNING whose first parameter is the company id. */
  protected returning<T>(companyId: string, sql: string, params: unknown[] = []): Promise<T[]> {
    return returningRows<T>(this.db, sql, [this.scope(companyId), ...params]);
  }
}

/**
 * The one `RETURNING` helper: TypeORM's postgres driver answers UPDATE and DELETE with
 * `[rows, rowCount]` instead of the rows.
 */
export async function returningRows<T>(db: Db, sql: string, params: unknown[]): Promise<T[]> {
  const result = (await db.query(sql, params)) as unknown;
  if (Array.isArray(result) && result.length === 2 && Array.isArray(result[0]) && typeof result[1] === 'number') return result[0] as T[];
  return result as T[];
}
