/** The one timestamp mapper: a database timestamp (Date or text) as ISO 8601, null stays null. */
export function iso(value: Date | string | null | undefined): string | null {
  return value === null || value === undefined ? null : new Date(value).toISOString();
}

/** `iso` for columns that are NOT NULL. */
export function isoRequired(value: Date | string): string {
  return new Date(value).toISOString();
}
