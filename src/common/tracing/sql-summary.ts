const KIND = /^\s*(?:--[^\n]*\n\s*|\/\*[\s\S]*?\*\/\s*)*([a-z]+)/i;
const TABLE = /\b(?:from|into|update|join)\s+("?[a-z_][a-z0-9_]*"?(?:\."?[a-z_][a-z0-9_]*"?)?)/i;

/**
 * A database span's name and statement attribute: the statement's kind and first table (`SELECT
 * issues`, `WITH activity_chain_heads`). Identifiers only, so no literal or parameter can leak.
 */
export function dbSpanName(sql: string): string {
  const kind = KIND.exec(sql)?.[1]?.toUpperCase() ?? 'SQL';
  const table = TABLE.exec(sql)?.[1]?.replace(/"/g, '');
  return table ? `${kind} ${table}` : kind;
}
