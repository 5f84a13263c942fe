/**
 * Redaction of known secret values from a stream of output chunks (a child process's stdout or
 * stderr), whatever the write pattern: a value split over two writes is still redacted, because
 * the tail of each chunk that could be the start of a value is held back until the next chunk (or
 * the end of the stream) decides it.
 *
 * Besides the raw value, its URL-encoded form and its base64 / base64url forms are redacted; the
 * base64 forms at every byte alignment (a value inside a larger encoded blob, e.g. `user:password`
 * in a Basic auth header), as the characters that depend on the value alone.
 */

export const REDACTED = '[redacted]';
/** Values shorter than this are not redacted at all (replacing "1" everywhere protects nothing). */
export const MIN_REDACTED_LENGTH = 4;
/** Encoded forms (base64, URL-encoded) are redacted for values of at least this length. */
export const MIN_ENCODED_REDACTED_LENGTH = 8;
/** A base64 fragment shorter than this is not redacted (too likely to appear by chance). */
const MIN_BASE64_FRAGMENT = 8;

/** Every form of each value that must not reach a log, longest first. */
export function redactionForms(values: readonly string[]): string[] {
  const forms = new Set<string>();
  for (const v of values) {
    if (typeof v !== 'string' || v.length < MIN_REDACTED_LENGTH) continue;
    forms.add(v);
    if (v.length < MIN_ENCODED_REDACTED_LENGTH) continue;
    const uri = encodeURIComponent(v);
    for (const enc of [uri, uri.replace(/%20/g, '+'), encodeURI(v)]) if (enc !== v) forms.add(enc);
    const bytes = Buffer.from(v, 'utf8');
    forms.add(bytes.toString('base64'));
    for (const core of base64Cores(bytes)) {
      forms.add(core);
      forms.add(core.replace(/\+/g, '-').replace(/\//g, '_'));
    }
  }
  return [...forms].sort((a, b) => b.length - a.length);
}

/**
 * The base64 characters that depend only on `bytes`, for the value starting at byte offset 0, 1
 * and 2 of an encoded stream (the three alignments).
 */
function base64Cores(bytes: Buffer): string[] {
  const out: string[] = [];
  for (let o = 0; o < 3; o++) {
    const enc = Buffer.concat([Buffer.alloc(o), bytes]).toString('base64');
    const startBit = 8 * o;
    const endBit = 8 * (o + bytes.length);
    const first = Math.ceil(startBit / 6);
    const last = Math.floor(endBit / 6); // exclusive: char i covers bits [6i, 6i+6)
    const core = enc.slice(first, last);
    if (core.length >= MIN_BASE64_FRAGMENT) out.push(core);
  }
  return out;
}

/** One stream's redactor: `push` returns what may be written now, `flush` the held-back rest at the end. */
export class StreamRedactor {
  private held = '';

  constructor(private readonly forms: readonly string[]) {}

  push(chunk: string): string {
    if (this.forms.length === 0) return chunk;
    const text = redactForms(this.held + chunk, this.forms);
    const keep = this.pendingPrefixLength(text);
    this.held = text.slice(text.length - keep);
    return text.slice(0, text.length - keep);
  }

  flush(): string {
    const rest = this.held;
    this.held = '';
    return rest;
  }

  /** Length of the longest suffix of `text` that is a proper prefix of some form (it may still become one). */
  private pendingPrefixLength(text: string): number {
    let best = 0;
    // only a suffix that starts with a form's first character can be its prefix: each candidate
    // start is checked once (no slice per length; a chunk's cost stays linear in the forms' length)
    for (const f of this.forms) {
      const first = f.charCodeAt(0);
      for (let i = Math.max(0, text.length - f.length + 1); i < text.length; i++) {
        const k = text.length - i;
        if (k <= best) break;
        if (text.charCodeAt(i) === first && f.startsWith(text.slice(i))) {
          best = k;
          break;
        }
      }
    }
    return best;
  }
}

/** Replaces every occurrence of each form (longest first, so overlapping forms redact fully). */
export function redactForms(text: string, forms: readonly string[]): string {
  let out = text;
  for (const f of forms) if (out.includes(f)) out = out.split(f).join(REDACTED);
  return out;
}
