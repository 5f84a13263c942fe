import { Db } from '../../database/db.service';

/**
 * Rows of an `UPDATE … RETURNING` / `DELETE … RETURNING`: TypeORM's postgres driver answers those
 * commands with `[rows, rowCount]` instead of the rows.
 */
export async function returning<T>(db: Db, sql: string, params: unknown[]): Promise<T[]> {
  const result = (await db.query(sql, params)) as unknown;
  if (Array.isArray(result) && result.length === 2 && Array.isArray(result[0]) && typeof result[1] === 'number') return result[0] as T[];
  return result as T[];
}
