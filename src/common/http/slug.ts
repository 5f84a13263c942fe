/** A URL-safe lowercase slug of a display name (accents folded, runs of other characters become '-'). */
export const slugify = (name: string, maxLength: number, fallback: string): string =>
  name
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, maxLength)
    .replace(/-+$/, '') || fallback;
