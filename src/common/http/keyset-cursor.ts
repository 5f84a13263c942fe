import { badRequest } from '../errors/domain-error';
import { isUuid } from './uuid';

/**
 * A keyset page position of a list ordered by (created_at DESC, id DESC): the last row's exact
 * creation time as Postgres writes it (`created_at::text`, microseconds kept, so no row is skipped
 * or repeated) and its id. Handed to clients as an opaque base64url string.
 */
export interface KeysetCursor {
  createdAt: string;
  id: string;
}

/** Postgres' text form of a timestamptz, e.g. `2026-11-24 15:10:13.123456+00` */
const PG_TIMESTAMPTZ = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(\.\d{1,6})?[+-]\d{2}(:\d{2})?$/;

export function encodeCursor(c: KeysetCursor): string {
  return Buffer.from(`${c.createdAt}|${c.id}`, 'utf8').toString('base64url');
}

/** 400 for anything that is not a cursor this service handed out. */
export function decodeCursor(s: string): KeysetCursor {
  const [createdAt, id, ...rest] = Buffer.from(s, 'base64url').toString('utf8').split('|');
  if (rest.length || !id || !isUuid(id) || !PG_TIMESTAMPTZ.test(createdAt ?? '')) {
    throw badRequest('Invalid cursor', { fields: [{ field: 'cursor', messages: ['not a cursor of this list'] }] }, 'validation_failed');
  }
  return { createdAt, id };
}

/** Splits `limit + 1` records into a page and the next page's cursor (null on the last page). */
export function keysetPage<R extends { id: string; cursorTs: string }>(rows: R[], limit: number): { rows: R[]; nextCursor: string | null } {
  if (rows.length <= limit) return { rows, nextCursor: null };
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return { rows: page, nextCursor: encodeCursor({ createdAt: last.cursorTs, id: last.id }) };
}
