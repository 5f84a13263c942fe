/**
 * Company-unique shortname (URL key) of a name: lower-case ASCII letters and digits joined by
 * single dashes (`My App!` -> `my-app`), at most 64 characters; `fallback` when nothing is left.
 */
export function urlKeyOf(name: string, fallback: string): string {
  const key = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 64)
    .replace(/-+$/g, '');
  return key || fallback;
}
