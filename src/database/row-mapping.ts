/** The one timestamp mapper: a database timestamp (Date or text) as ISO 8601, null stays null. */
export function iso(value: Date | string | null | undefined): string | null {
  return value === null || value === undefined ? null : (value instanceof Date ? value : new Date(value)).toISOString();
}

/** `iso` for columns that are NOT NULL. */
export function isoRequired(value: Date | string): string {
  // a Date (what the type parser gives) is formatted as it is, without a copy: a list of 50 issues formats hundreds
  return (value instanceof Date ? value : new Date(value)).toISOString();
}
