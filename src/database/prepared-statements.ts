import { createHash } from 'node:crypto';
import { Client } from 'pg';

/** A statement becomes a named (prepared) statement once it has run this many times in the process. */
export const PREPARE_AFTER = 3;
/** At most this many distinct statements are prepared per process (and so per connection). */
export const MAX_PREPARED = 500;

// Relies on pg Client internals (query(config, values, callback) dispatch and named-statement
// handling), so package.json pins pg to a minor range (~8.23.x): check this file before widening it.
type QueryFn = (config: unknown, values?: unknown, callback?: unknown) => unknown;

/**
 * A pg Client (given to the pool through its documented `Client` option) that runs hot
 * parameterised statements as named prepared statements. Postgres then parses and plans a statement
 * once per connection instead of on every request (for the busiest queries planning cost as much as
 * executing them). Only statements with parameters are considered: those already use the extended
 * protocol, so nothing changes but the name; parameterless text (migrations, multi-statement
 * scripts) keeps the simple protocol, and a query config object (Db's `plan: 'custom'` inside a
 * transaction) stays unnamed. Statements seen fewer than PREPARE_AFTER times, and any beyond
 * MAX_PREPARED distinct texts, stay unnamed, which bounds what each connection keeps on the server.
 */
export function preparingClientClass(
  prepareAfter = PREPARE_AFTER,
  maxPrepared = MAX_PREPARED,
  baseClient: typeof Client = Client,
): typeof Client {
  const seen = new Map<string, number>();
  const names = new Map<string, string>();

  const nameOf = (text: string): string | undefined => {
    const known = names.get(text);
    if (known) return known;
    if (names.size >= maxPrepared) return undefined;
    const count = (seen.get(text) ?? 0) + 1;
    if (count < prepareAfter) {
      if (seen.size < maxPrepared * 4) seen.set(text, count);
      return undefined;
    }
    seen.delete(text);
    const name = `s_${createHash('sha1').update(text).digest('base64url')}`;
    names.set(text, name);
    return name;
  };

  const base = baseClient.prototype.query as unknown as QueryFn;
  class PreparingClient extends baseClient {}
  (PreparingClient.prototype as unknown as { query: QueryFn }).query = function (this: Client, config, values, callback) {
    if (typeof config === 'string' && Array.isArray(values) && values.length > 0) {
      const name = nameOf(config);
      if (name) return base.call(this, { name, text: config, values }, callback);
    }
    return base.call(this, config, values, callback);
  };
  return PreparingClient;
}
