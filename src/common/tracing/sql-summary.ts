const KIND = /^\s*(?:--[^\n]*\n\s*|\/\*[\s\S]*?\*\/\s*)*([a-z]+)/i;
const TABLE = /\b(?:from|into|update|join)\s+("?[a-z_][a-z0-9_]*"?(?:\."?[a-z_][a-z0-9_]*"?)?)/i;

/**
 * A database span's name and statement attribute: the statement's kind and first table (`SELECT
 * issues`, `WITH activity_chain_heads`). Identifiers only, so no literal or parameter can leak.
 */
export function dbSpanName(sql: string): string {
  if (sql.length > MAX_MEMO_LENGTH) return summarize(sql);
  let name = names.get(sql);
  if (name === undefined) {
    name = summarize(sql);
    // the service's statements are a few hundred texts: a bounded memo saves the regexes per statement
    if (names.size >= MAX_NAMES) names.clear();
    names.set(sql, name);
  }
  return name;
}

const names = new Map<string, string>();
const MAX_NAMES = 2_000;
/** longer texts (bulk inserts) are summarized each time rather than kept */
const MAX_MEMO_LENGTH = 4_096;

function summarize(sql: string): string {
  const kind = KIND.exec(sql)?.[1]?.toUpperCase() ?? 'SQL';
  const table = TABLE.exec(sql)?.[1]?.replace(/"/g, '');
  return table ? `${kind} ${table}` : kind;
}
