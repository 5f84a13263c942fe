import {
  exactMatch,
  fuzzyMatch,
  FUZZY_THRESHOLD,
  locate,
  normalizeMarkdown,
  reanchor,
  resolveSelector,
  selectorAt,
} from '../../src/modules/documents/anchoring';

const DOC = [
  '# Plan',
  '',
  'We will migrate the billing service to the new queue.',
  'The quick brown fox jumps over the lazy dog near the river bank.',
  'Then we deploy behind a feature flag and watch the error budget.',
  '',
  '## Risks',
  '',
  'The quick brown fox may also appear here, in a risk note.',
].join('\n');

const at = (text: string, passage: string, from = 0) => {
  const start = text.indexOf(passage, from);
  if (start < 0) throw new Error(`${passage} not in text`);
  return selectorAt(text, start, start + passage.length);
};

describe('normalizeMarkdown', () => {
  it('drops heading and blockquote markers, inline markup and collapses whitespace, with offset maps', () => {
    const md = '# Title\n\n> quoted **bold**  and `code`\n';
    const n = normalizeMarkdown(md);
    expect(n.text).toBe('Title quoted bold and code ');
    const i = n.text.indexOf('bold');
    expect(md.slice(n.toMarkdown[i], n.toMarkdown[i + 3] + 1)).toBe('bold');
    expect(n.toNormalized[md.indexOf('quoted')]).toBe(n.text.indexOf('quoted'));
    expect(n.toNormalized[md.length]).toBe(n.text.length);
    expect(n.toMarkdown).toHaveLength(n.text.length + 1);
  });

  it('maps every markdown offset (no holes)', () => {
    const n = normalizeMarkdown(DOC);
    for (let i = 0; i <= DOC.length; i++) expect(Number.isInteger(n.toNormalized[i])).toBe(true);
  });
});

describe('exactMatch', () => {
  it('prefers the occurrence whose prefix and suffix agree', () => {
    const second = DOC.lastIndexOf('The quick brown fox');
    const sel = at(DOC, 'The quick brown fox', second);
    const m = exactMatch(DOC, sel.quote, 0);
    expect(m?.start).toBe(second);
  });

  it('uses the hint when the context does not decide', () => {
    const text = 'abc xyz abc xyz abc';
    expect(exactMatch(text, { exact: 'abc' }, 15)?.start).toBe(16);
    expect(exactMatch(text, { exact: 'abc' }, 0)?.start).toBe(0);
  });

  it('returns null for an absent or empty quote', () => {
    expect(exactMatch(DOC, { exact: 'purple elephant' })).toBeNull();
    expect(exactMatch(DOC, { exact: '' })).toBeNull();
  });
});

describe('fuzzyMatch', () => {
  it('finds a passage with a word inserted inside it, covering the insertion', () => {
    const text = 'Intro. The quick and very brown fox jumps over the lazy dog. End.';
    const m = fuzzyMatch(text, 'The quick brown fox jumps over the lazy dog', 0);
    expect(m && text.slice(m.start, m.end)).toBe('The quick and very brown fox jumps over the lazy dog');
    expect(m!.similarity).toBeGreaterThanOrEqual(FUZZY_THRESHOLD);
  });

  it('finds a passage with a typo fixed and a word deleted', () => {
    const text = 'Preface. We will migrate billing service to the new queue. After.';
    const m = fuzzyMatch(text, 'We will migrate the biling service to the new queue', 0);
    expect(m && text.slice(m.start, m.end)).toBe('We will migrate billing service to the new queue');
  });

  it('gives up below the threshold', () => {
    expect(fuzzyMatch('completely different words here', 'The quick brown fox jumps', 0)).toBeNull();
  });

  it('does not fuzzy-match very short quotes', () => {
    expect(fuzzyMatch('cat', 'car', 0)).toBeNull();
  });

  it('prefers the candidate nearest the hint when equally good', () => {
    const text = 'alpha bravo charlie ---------------------------------------- alpha bravo charlie';
    const m = fuzzyMatch(text, 'alpha bravx charlie', text.length - 10);
    expect(m!.start).toBe(text.lastIndexOf('alpha'));
  });
});

describe('locate on long quotes', () => {
  it('matches a long passage edited in the middle by its head and tail', () => {
    const long = Array.from({ length: 60 }, (_, i) => `sentence number ${i} of the long passage.`).join(' ');
    const text = `Before.\n${long.replace('number 30 of', 'number thirty of')}\nAfter.`;
    const m = locate(text, { exact: long }, 0);
    expect(m).not.toBeNull();
    expect(text.slice(m!.start, m!.start + 20)).toBe(long.slice(0, 20));
    expect(text.slice(m!.end - 20, m!.end)).toBe(long.slice(-20));
  });
});

describe('resolveSelector', () => {
  it('accepts matching markdown offsets', () => {
    const sel = at(DOC, 'lazy dog');
    expect(resolveSelector(DOC, sel)).toEqual({ start: sel.position.markdownStart, end: sel.position.markdownEnd });
  });

  it('accepts a rendered-text quote through the normalized offsets', () => {
    const md = 'Intro with **bold words** inside.';
    const n = normalizeMarkdown(md);
    const s = n.text.indexOf('bold words');
    const r = resolveSelector(md, {
      quote: { exact: 'bold words' },
      position: { normalizedStart: s, normalizedEnd: s + 10, markdownStart: 0, markdownEnd: 3 },
    });
    expect(r && md.slice(r.start, r.end)).toBe('bold words');
  });

  it('finds the quote when the offsets are stale', () => {
    const r = resolveSelector(DOC, {
      quote: { exact: 'error budget' },
      position: { normalizedStart: 0, normalizedEnd: 5, markdownStart: 0, markdownEnd: 5 },
    });
    expect(r && DOC.slice(r.start, r.end)).toBe('error budget');
  });

  it('finds a quote spanning markup through the normalized text', () => {
    const md = 'Use the **new** queue now.';
    const r = resolveSelector(md, { quote: { exact: 'the new queue' } });
    expect(r && md.slice(r.start, r.end)).toBe('the **new** queue');
  });

  it('rejects a quote that is not in the text', () => {
    expect(resolveSelector(DOC, { quote: { exact: 'slow green turtle' } })).toBeNull();
    expect(resolveSelector(DOC, { quote: { exact: '' } })).toBeNull();
  });
});

describe('reanchor', () => {
  const passage = 'The quick brown fox jumps over the lazy dog';
  const sel = at(DOC, passage);

  it('is active when the revision leaves the passage in place (edit after it)', () => {
    const next = `${DOC}\n\nAppendix added at the end.`;
    const r = reanchor(sel, next);
    expect(r.state).toBe('active');
    expect(r.selector.position.markdownStart).toBe(sel.position.markdownStart);
  });

  it('is active for an unchanged text', () => {
    expect(reanchor(sel, DOC).state).toBe('active');
  });

  it('shifts with updated offsets after an insertion before the passage', () => {
    const insert = 'A brand new opening paragraph.\n\n';
    const next = insert + DOC;
    const r = reanchor(sel, next);
    expect(r.state).toBe('shifted');
    expect(r.selector.position.markdownStart).toBe(sel.position.markdownStart + insert.length);
    expect(next.slice(r.selector.position.markdownStart, r.selector.position.markdownEnd)).toBe(passage);
    const n = normalizeMarkdown(next);
    expect(n.text.slice(r.selector.position.normalizedStart, r.selector.position.normalizedEnd)).toBe(passage);
  });

  it('shifts and widens after an insertion inside the passage', () => {
    const next = DOC.replace('brown fox jumps', 'brown fox quickly jumps');
    const r = reanchor(sel, next);
    expect(r.state).toBe('shifted');
    expect(r.selector.quote.exact).toBe('The quick brown fox quickly jumps over the lazy dog');
    expect(next.slice(r.selector.position.markdownStart, r.selector.position.markdownEnd)).toBe(r.selector.quote.exact);
  });

  it('shifts after a deletion inside the passage', () => {
    const next = DOC.replace('quick brown', 'brown');
    const r = reanchor(sel, next);
    expect(r.state).toBe('shifted');
    expect(r.selector.quote.exact).toBe('The brown fox jumps over the lazy dog');
  });

  it('shifts when the passage moves to another place', () => {
    const lines = DOC.split('\n');
    const moved = [lines[3], ...lines.slice(0, 3), ...lines.slice(4)].join('\n');
    const r = reanchor(sel, moved);
    expect(r.state).toBe('shifted');
    expect(r.selector.position.markdownStart).toBe(0);
  });

  it('follows the right occurrence of a repeated quote by its context', () => {
    const risk = at(DOC, 'The quick brown fox', DOC.lastIndexOf('The quick brown fox'));
    const next = DOC.replace('## Risks', '## Risks and mitigations');
    const r = reanchor(risk, next);
    expect(r.state).toBe('shifted');
    expect(r.selector.position.markdownStart).toBe(next.lastIndexOf('The quick brown fox'));
  });

  it('orphans when the passage is deleted and keeps the old selector', () => {
    const next = DOC.replace(/The quick brown fox jumps over the lazy dog near the river bank\.\n/, '');
    const r = reanchor(sel, next);
    expect(r.state).toBe('orphaned');
    expect(r.selector).toEqual(sel);
  });

  it('orphans when the passage is rewritten beyond the threshold', () => {
    const next = DOC.replace(passage, 'A sleepy cat ignores every single animal');
    expect(reanchor(sel, next).state).toBe('orphaned');
  });

  it('re-attaches an orphan when a later revision brings the passage back', () => {
    const gone = DOC.replace(passage, 'nothing here at all, sorry');
    const orphan = reanchor(sel, gone);
    expect(orphan.state).toBe('orphaned');
    const back = `Intro line.\n${DOC}`;
    const r = reanchor(orphan.selector, back);
    expect(r.state).toBe('shifted');
    expect(back.slice(r.selector.position.markdownStart, r.selector.position.markdownEnd)).toBe(passage);
  });

  it('survives markup added around the passage', () => {
    const next = DOC.replace(passage, `**${passage}**`);
    const r = reanchor(sel, next);
    expect(r.state).toBe('shifted');
    expect(next.slice(r.selector.position.markdownStart, r.selector.position.markdownEnd)).toBe(passage);
  });

  it('survives whitespace reflow inside the passage via the normalized text', () => {
    const next = DOC.replace(passage, 'The quick brown fox\njumps over   the lazy dog');
    const r = reanchor(sel, next);
    expect(r.state).toBe('shifted');
    expect(next.slice(r.selector.position.markdownStart, r.selector.position.markdownEnd)).toBe(
      'The quick brown fox\njumps over   the lazy dog',
    );
  });

  it('tracks a passage through a sequence of twenty random edits elsewhere', () => {
    let text = DOC;
    let current = sel;
    const words = ['alpha', 'beta', 'gamma', 'delta', 'epsilon'];
    let seed = 7;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    for (let k = 0; k < 20; k++) {
      const anchorStart = current.position.markdownStart;
      const anchorEnd = current.position.markdownEnd;
      // insert a word somewhere outside the anchored passage
      const candidates = [rand(anchorStart + 1), anchorEnd + rand(text.length - anchorEnd + 1)];
      const pos = candidates[rand(2)];
      text = `${text.slice(0, pos)} ${words[rand(words.length)]} ${text.slice(pos)}`;
      const r = reanchor(current, text);
      expect(r.state).not.toBe('orphaned');
      expect(text.slice(r.selector.position.markdownStart, r.selector.position.markdownEnd)).toBe(passage);
      current = r.selector;
    }
  });

  describe('a table of edits', () => {
    const P = 'The quick brown fox jumps over the lazy dog';
    const cases: Array<[string, (d: string) => string, 'active' | 'shifted' | 'orphaned', string | null]> = [
      ['word deleted before', (d) => d.replace('We will migrate', 'We migrate'), 'shifted', P],
      ['line deleted before', (d) => d.replace('# Plan\n\n', ''), 'shifted', P],
      ['text appended to the passage line', (d) => d.replace('river bank.', 'river bank, as planned.'), 'active', P],
      ['word replaced inside', (d) => d.replace('lazy dog', 'sleepy dog'), 'shifted', 'The quick brown fox jumps over the sleepy dog'],
      ['typo fixed inside', (d) => d.replace('jumps', 'jumpz'), 'shifted', 'The quick brown fox jumpz over the lazy dog'],
      ['word inserted at the start', (d) => d.replace(P, `Then ${P}`), 'shifted', P],
      ['passage duplicated after', (d) => `${d}\n${P}`, 'active', P],
      ['passage duplicated before', (d) => `${P}\n${d}`, 'shifted', P],
      ['document emptied', () => '', 'orphaned', null],
      ['half of the passage removed', (d) => d.replace(' jumps over the lazy dog', ''), 'orphaned', null],
      ['case changed', (d) => d.replace(P, P.toUpperCase()), 'orphaned', null],
      ['emphasis added inside', (d) => d.replace('brown fox', '**brown fox**'), 'shifted', null],
    ];
    it.each(cases)('%s', (_name, change, state, expected) => {
      const sel = at(DOC, P);
      const next = change(DOC);
      const r = reanchor(sel, next);
      expect(r.state).toBe(state);
      if (expected) expect(next.slice(r.selector.position.markdownStart, r.selector.position.markdownEnd)).toBe(expected);
      if (state !== 'orphaned') {
        const n = normalizeMarkdown(next);
        const { normalizedStart, normalizedEnd } = r.selector.position;
        expect(normalizedEnd).toBeGreaterThan(normalizedStart);
        expect(n.text.slice(normalizedStart, normalizedEnd).length).toBeGreaterThan(0);
      }
    });
  });
});
