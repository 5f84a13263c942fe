/** The one timestamp mapper: a database timestamp (Date or text) as ISO 8601, null stays null. */
export function iso(value: Date | string | null | undefined): string | null {
  return value === null || value === undefined ? null : (value instanceof Date ? value : new Date(value)).toISOString();
}

/** `iso` for columns that are NOT NULL. */
export function isoRequired(value: Date | string): string {
  // a Date (what the type parser gives) is formatted as it is, without a copy: a list of 50 issues formats hundreds
  return (value instanceof Date ? value : new Date(value)).toISOString();
}

/** snake_case column name as its camelCase record field: `latest_revision_id` -> `latestRevisionId`. */
export function camelName(column: string): string {
  return column.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

/** camelCase record field as its snake_case column name: `latestRevisionId` -> `latest_revision_id`. */
export function snakeName(field: string): string {
  return field.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

/** recordColumns' answers by alias and column list (a repository asks with the same few lists on every statement). */
const selectLists = new Map<string, string>();

/**
 * A column list (`id, company_id, …`) selected as camelCase record fields (`id AS "id", company_id AS "companyId", …`),
 * each column prefixed with `alias.` when given: repositories return typed camelCase records (issue 45.4).
 */
export function recordColumns(columns: string, alias?: string): string {
  const key = `${alias ?? ''}|${columns}`;
  let list = selectLists.get(key);
  if (list === undefined) {
    list = columns
      .split(',')
      .map((c) => c.trim())
      .filter(Boolean)
      .map((c) => `${alias ? `${alias}.` : ''}${c} AS "${camelName(c)}"`)
      .join(', ');
    selectLists.set(key, list);
  }
  return list;
}
