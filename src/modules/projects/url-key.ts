/** Shortname of a name: lower-case ASCII letters and digits joined by single dashes (`My App!` -> `my-app`). */
export function toUrlKey(name: string): string {
  const key = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 64)
    .replace(/-+$/, '');
  return key || 'project';
}

/** Palette a project colour is taken from when none is given (rotating per company). */
export const PROJECT_PALETTE = ['#6366f1', '#0ea5e9', '#10b981', '#f59e0b', '#ef4444', '#8b5cf6', '#ec4899', '#14b8a6', '#f97316', '#84cc16'];
