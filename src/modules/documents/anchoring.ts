/**
 * Text anchoring for document annotation threads. Pure functions, no I/O.
 *
 * A thread points at a passage with two selectors (the W3C Web Annotation model):
 * - a quote selector: the `exact` text plus a little `prefix`/`suffix` context;
 * - a position selector: offsets into the markdown source and into the normalized text.
 *
 * Normalized text is what a reader sees of the markdown, approximately: heading and blockquote
 * markers at line starts and the emphasis/code characters `*`, `` ` ``, `~` are dropped, and every
 * run of whitespace becomes one space. A client selecting rendered text therefore sends a quote that
 * matches the normalized text even where the markdown has markup inside the passage.
 *
 * When a document gets a new revision, each anchor is recomputed (`reanchor`):
 * 1. exact occurrences of the quote are scored by how well their surroundings agree with the stored
 *    prefix/suffix and by their distance to the old position; the best one wins;
 * 2. failing that, an approximate match (edit distance, Sellers' algorithm, where characters
 *    inserted into the passage cost half) near the old position is accepted when its similarity to
 *    the quote reaches FUZZY_THRESHOLD; quotes over LONG_QUOTE characters match by head and tail;
 * 3. failing that, the same search runs on the normalized text (reflowed whitespace, added markup);
 * 4. failing that, the anchor is orphaned (it keeps its last known selector, so a later revision
 *    that brings the passage back re-attaches it).
 */

export interface QuoteSelector {
  exact: string;
  prefix?: string;
  suffix?: string;
}

export interface PositionSelector {
  normalizedStart: number;
  normalizedEnd: number;
  markdownStart: number;
  markdownEnd: number;
}

export interface AnchorSelector {
  quote: QuoteSelector;
  position: PositionSelector;
}

export type AnchorState = 'active' | 'shifted' | 'orphaned';

export interface Match {
  start: number;
  end: number;
  /** 1 for an exact match; edit-distance similarity (0..1) for a fuzzy one */
  similarity: number;
}

/** Minimum similarity (1 - weightedEditCost / (2 * quoteLength), costs in half units) of an approximate match. */
export const FUZZY_THRESHOLD = 0.7;
/** Quotes shorter than this are only matched exactly: a fuzzy match of 3 characters means nothing. */
export const FUZZY_MIN_LENGTH = 6;
/** How much text the fuzzy search scans, as a budget of DP cells (pattern length x window length). */
const FUZZY_CELL_BUDGET = 20_000_000;
/** Exact occurrences scored at most (a quote like "the" in a long document). */
const MAX_CANDIDATES = 2000;
/** Context characters stored with a quote. */
export const CONTEXT_LENGTH = 32;

// ---------------------------------------------------------------- normalization

export interface NormalizedText {
  text: string;
  /** markdown offset of each normalized offset (length text.length + 1) */
  toMarkdown: number[];
  /** normalized offset of each markdown offset (length markdown.length + 1) */
  toNormalized: number[];
}

const LINE_MARKER = /^[ \t]{0,3}(#{1,6}[ \t]+|>[ \t]?)/;
const INLINE_MARKUP = new Set(['*', '`', '~']);

/** The reader's text of a markdown body with offset maps in both directions. */
export function normalizeMarkdown(markdown: string): NormalizedText {
  const out: string[] = [];
  const toMarkdown: number[] = [];
  const toNormalized: number[] = new Array(markdown.length + 1);
  let lastWasSpace = true; // drops leading whitespace
  let i = 0;
  let lineStart = true;
  while (i < markdown.length) {
    if (lineStart) {
      lineStart = false;
      const m = LINE_MARKER.exec(markdown.slice(i, i + 16));
      if (m) {
        for (let k = 0; k < m[0].length; k++) toNormalized[i + k] = out.length;
        i += m[0].length;
        continue;
      }
    }
    const ch = markdown[i];
    toNormalized[i] = out.length;
    if (ch === '\n') lineStart = true;
    if (/\s/.test(ch)) {
      if (!lastWasSpace) {
        out.push(' ');
        toMarkdown.push(i);
        lastWasSpace = true;
      }
    } else if (!INLINE_MARKUP.has(ch)) {
      out.push(ch);
      toMarkdown.push(i);
      lastWasSpace = false;
    }
    i++;
  }
  toNormalized[markdown.length] = out.length;
  toMarkdown.push(markdown.length);
  return { text: out.join(''), toMarkdown, toNormalized };
}

/** Collapses whitespace and drops inline markup of a quote, as normalizeMarkdown does for a body. */
export function normalizeQuote(s: string): string {
  return normalizeMarkdown(s).text.trim();
}

// ---------------------------------------------------------------- matching

/** Length of the common suffix of a and b (how well text before a match agrees with the prefix). */
function commonSuffix(a: string, b: string): number {
  let n = 0;
  while (n < a.length && n < b.length && a[a.length - 1 - n] === b[b.length - 1 - n]) n++;
  return n;
}

function commonPrefix(a: string, b: string): number {
  let n = 0;
  while (n < a.length && n < b.length && a[n] === b[n]) n++;
  return n;
}

/** Score of a candidate: context agreement (0..2) plus a small bonus for closeness to the hint (0..0.5). */
function contextScore(text: string, start: number, end: number, quote: QuoteSelector, hint: number | undefined): number {
  let score = 0;
  if (quote.prefix) score += commonSuffix(text.slice(Math.max(0, start - quote.prefix.length), start), quote.prefix) / quote.prefix.length;
  if (quote.suffix) score += commonPrefix(text.slice(end, end + quote.suffix.length), quote.suffix) / quote.suffix.length;
  if (hint !== undefined) score += 0.5 * (1 - Math.min(1, Math.abs(start - hint) / Math.max(1, text.length)));
  return score;
}

/** Every exact occurrence of the quote, best context first. */
export function exactMatch(text: string, quote: QuoteSelector, hint?: number): Match | null {
  const { exact } = quote;
  if (!exact) return null;
  let best: Match | null = null;
  let bestScore = -1;
  let seen = 0;
  for (let i = text.indexOf(exact); i >= 0 && seen < MAX_CANDIDATES; i = text.indexOf(exact, i + 1), seen++) {
    const score = contextScore(text, i, i + exact.length, quote, hint);
    if (score > bestScore) {
      bestScore = score;
      best = { start: i, end: i + exact.length, similarity: 1 };
    }
  }
  return best;
}

/**
 * The substring of `text` with the smallest edit distance to `pattern` (Sellers: the match may start
 * anywhere). Searches a window around `hint` bounded by a DP budget. Ties go to the match nearest the
 * hint. Returns null below the threshold.
 */
export function fuzzyMatch(text: string, pattern: string, hint = 0, threshold = FUZZY_THRESHOLD): Match | null {
  const m = pattern.length;
  if (m < FUZZY_MIN_LENGTH || text.length === 0) return null;
  // costs in half units: a character inserted into the passage costs 1, a substitution or a lost
  // character 2, so text added inside a passage keeps the whole passage rather than a shorter tail
  const maxCost = Math.floor(2 * m * (1 - threshold));
  const windowLength = Math.max(m * 3, Math.floor(FUZZY_CELL_BUDGET / m));
  const from = Math.max(0, Math.min(hint - Math.floor(windowLength / 2), text.length - windowLength));
  const to = Math.min(text.length, from + windowLength);

  // cost[i] = edit distance of pattern[0..i) against the best substring ending at the current column;
  // start[i] = where that substring starts
  let cost = new Int32Array(m + 1);
  let start = new Int32Array(m + 1);
  let nextCost = new Int32Array(m + 1);
  let nextStart = new Int32Array(m + 1);
  for (let i = 0; i <= m; i++) {
    cost[i] = 2 * i;
    start[i] = from;
  }
  let best: Match | null = null;
  let bestDistance = maxCost + 1;
  let bestHintDistance = Infinity;
  for (let j = from; j < to; j++) {
    const ch = text[j];
    nextCost[0] = 0;
    nextStart[0] = j + 1;
    for (let i = 1; i <= m; i++) {
      const sub = cost[i - 1] + (pattern[i - 1] === ch ? 0 : 2);
      const del = cost[i] + 1; // text char not in the pattern (inserted into the passage)
      const ins = nextCost[i - 1] + 2; // pattern char missing from the text
      if (sub <= del && sub <= ins) {
        nextCost[i] = sub;
        nextStart[i] = start[i - 1];
      } else if (del <= ins) {
        nextCost[i] = del;
        nextStart[i] = start[i];
      } else {
        nextCost[i] = ins;
        nextStart[i] = nextStart[i - 1];
      }
    }
    const d = nextCost[m];
    if (d <= maxCost) {
      const s = nextStart[m];
      const hd = Math.abs(s - hint);
      // same distance: a later end from the same start extends that match; otherwise the nearer one wins
      const better = d < bestDistance || (d === bestDistance && (s === best!.start || hd < bestHintDistance));
      if (better) {
        bestDistance = d;
        bestHintDistance = hd;
        best = { start: s, end: j + 1, similarity: 1 - d / (2 * m) };
      }
    }
    [cost, nextCost] = [nextCost, cost];
    [start, nextStart] = [nextStart, start];
  }
  return best ? trimMatch(text, best) : null;
}

/** Drops whitespace a fuzzy match picked up at its edges. */
function trimMatch(text: string, m: Match): Match {
  let { start, end } = m;
  while (start < end && /\s/.test(text[start])) start++;
  while (end > start && /\s/.test(text[end - 1])) end--;
  return { ...m, start, end };
}

/** Quotes longer than this are matched approximately by their head and tail instead of a full DP. */
const LONG_QUOTE = 1000;
const EDGE = 64;

/**
 * A long quote edited in the middle: its first and last EDGE characters still occur exactly, the
 * tail after the head, and the span between them is within the threshold of the quote's length.
 */
function headTailMatch(text: string, pattern: string, hint: number): Match | null {
  const head = exactMatch(text, { exact: pattern.slice(0, EDGE) }, hint);
  if (!head) return null;
  const tailStart = text.indexOf(pattern.slice(-EDGE), head.end);
  if (tailStart < 0) return null;
  const end = tailStart + EDGE;
  const similarity = 1 - Math.abs(end - head.start - pattern.length) / pattern.length;
  return similarity >= FUZZY_THRESHOLD ? { start: head.start, end, similarity: Math.min(similarity, 0.99) } : null;
}

/** Exact match with context scoring, then an approximate one. */
export function locate(text: string, quote: QuoteSelector, hint?: number, opts: { fuzzy?: boolean } = {}): Match | null {
  const exact = exactMatch(text, quote, hint);
  if (exact || opts.fuzzy === false) return exact;
  return quote.exact.length > LONG_QUOTE ? headTailMatch(text, quote.exact, hint ?? 0) : fuzzyMatch(text, quote.exact, hint ?? 0);
}

// ---------------------------------------------------------------- selectors

/** Full selector for the markdown range [start, end). */
export function selectorAt(markdown: string, start: number, end: number, norm = normalizeMarkdown(markdown)): AnchorSelector {
  return {
    quote: {
      exact: markdown.slice(start, end),
      prefix: markdown.slice(Math.max(0, start - CONTEXT_LENGTH), start),
      suffix: markdown.slice(end, end + CONTEXT_LENGTH),
    },
    position: {
      markdownStart: start,
      markdownEnd: end,
      normalizedStart: norm.toNormalized[start],
      normalizedEnd: norm.toNormalized[end],
    },
  };
}

/**
 * Resolves a client's selector against a revision's markdown: the markdown offsets when they hold the
 * quote, else the normalized offsets, else the quote searched exactly (markdown, then normalized text).
 * Returns the markdown range, or null when the selector does not match the text.
 */
export function resolveSelector(
  markdown: string,
  selector: { quote: QuoteSelector; position?: Partial<PositionSelector> },
): { start: number; end: number } | null {
  const { quote } = selector;
  const pos = selector.position ?? {};
  if (!quote.exact) return null;
  const inRange = (s?: number, e?: number): s is number =>
    Number.isInteger(s) && Number.isInteger(e) && s! >= 0 && s! < e! && e! <= markdown.length;
  if (inRange(pos.markdownStart, pos.markdownEnd) && markdown.slice(pos.markdownStart, pos.markdownEnd) === quote.exact) {
    return { start: pos.markdownStart, end: pos.markdownEnd! };
  }
  const norm = normalizeMarkdown(markdown);
  const nq = normalizeQuote(quote.exact);
  if (
    inRange(pos.normalizedStart, pos.normalizedEnd) &&
    pos.normalizedEnd! <= norm.text.length &&
    norm.text.slice(pos.normalizedStart, pos.normalizedEnd).trim() === nq
  ) {
    return normalizedToMarkdown(norm, pos.normalizedStart, pos.normalizedEnd!);
  }
  const direct = exactMatch(markdown, quote, pos.markdownStart);
  if (direct) return direct;
  const viaNorm = exactMatch(
    norm.text,
    { exact: nq, prefix: quote.prefix && normalizeQuote(quote.prefix), suffix: quote.suffix && normalizeQuote(quote.suffix) },
    pos.normalizedStart,
  );
  return viaNorm ? normalizedToMarkdown(norm, viaNorm.start, viaNorm.end) : null;
}

function normalizedToMarkdown(norm: NormalizedText, start: number, end: number): { start: number; end: number } {
  // the end maps to just after the last kept character
  return { start: norm.toMarkdown[start], end: norm.toMarkdown[end - 1] + 1 };
}

export interface ReanchorResult {
  state: AnchorState;
  selector: AnchorSelector;
}

/**
 * Recomputes an anchor against a new revision's markdown. `active`: the quote sits at the same
 * offsets; `shifted`: found elsewhere or changed slightly (offsets, quote and context updated);
 * `orphaned`: not found (the selector is kept as it was).
 */
export function reanchor(selector: AnchorSelector, markdown: string): ReanchorResult {
  const hint = selector.position.markdownStart;
  let found = locate(markdown, selector.quote, hint);
  if (!found) {
    const norm = normalizeMarkdown(markdown);
    const nq = normalizeQuote(selector.quote.exact);
    const n = locate(norm.text, { exact: nq }, norm.toNormalized[Math.min(hint, markdown.length)]);
    if (n) found = { ...normalizedToMarkdown(norm, n.start, n.end), similarity: n.similarity };
  }
  if (!found) return { state: 'orphaned', selector };
  const same = found.similarity === 1 && found.start === selector.position.markdownStart && found.end === selector.position.markdownEnd;
  return { state: same ? 'active' : 'shifted', selector: selectorAt(markdown, found.start, found.end) };
}
