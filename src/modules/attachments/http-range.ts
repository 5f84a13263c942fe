export type RangeResult = { kind: 'full' } | { kind: 'partial'; start: number; end: number } | { kind: 'unsatisfiable' };

/**
 * One byte range of a `Range` header (RFC 9110 §14): `bytes=a-b`, `bytes=a-`, `bytes=-n`. A malformed
 * header, another unit or several ranges are ignored (the whole body is served, which the RFC allows);
 * a well-formed range outside the body is unsatisfiable (416).
 */
export function parseRange(header: string | undefined, size: number): RangeResult {
  if (!header) return { kind: 'full' };
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m || (m[1] === '' && m[2] === '')) return { kind: 'full' };
  let start: number;
  let end: number;
  if (m[1] === '') {
    const suffix = Number(m[2]);
    if (suffix === 0 || size === 0) return { kind: 'unsatisfiable' };
    start = Math.max(0, size - suffix);
    end = size - 1;
  } else {
    start = Number(m[1]);
    end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
    if (m[2] !== '' && Number(m[2]) < start) return { kind: 'full' };
    if (start >= size) return { kind: 'unsatisfiable' };
  }
  return { kind: 'partial', start, end };
}

/** `inline`/`attachment` with an ASCII fallback name and the RFC 5987 UTF-8 name. */
export function contentDisposition(type: 'inline' | 'attachment', filename: string | null): string {
  if (!filename) return type;
  const ascii = filename.replace(/[^\x20-\x7e]/g, '_').replace(/["\\]/g, '_');
  return `${type}; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(filename)}`;
}
