/** One task of a plan: its title (the list item's first line) and any further lines as description. */
export interface PlanItem {
  title: string;
  description: string | null;
}

const ITEM = /^( ?)(?:[-*+]|\d{1,9}[.)])\s+(?:\[[ xX]\]\s+)?(.*)$/;
const FENCE = /^\s{0,3}(```|~~~)/;
export const MAX_TITLE = 500;

/**
 * The top-level list items (indented at most one space) of a markdown plan (bullets `-`, `*`, `+`, numbered `1.` / `1)`, task
 * boxes `[ ]` / `[x]` dropped), in order. Lines indented under an item (nested lists, wrapped
 * text) become its description; fenced code blocks are never items. Markdown emphasis is kept.
 */
export function planItems(markdown: string): PlanItem[] {
  const items: Array<{ title: string; lines: string[] }> = [];
  let fenced = false;
  let current: { title: string; lines: string[] } | null = null;
  for (const raw of markdown.replace(/\r\n?/g, '\n').split('\n')) {
    if (FENCE.test(raw)) {
      fenced = !fenced;
      if (current) current.lines.push(raw);
      continue;
    }
    const m = fenced ? null : ITEM.exec(raw);
    if (m && m[2].trim()) {
      current = { title: m[2].trim(), lines: [] };
      items.push(current);
      continue;
    }
    if (current && (raw.startsWith(' ') || raw.startsWith('\t') || fenced)) {
      current.lines.push(raw.replace(/^( {2,4}|\t)/, ''));
    } else if (raw.trim() !== '') {
      // a paragraph or heading at the top level ends the current item
      current = null;
    }
  }
  return items.map((i) => {
    const title = i.title.length > MAX_TITLE ? `${i.title.slice(0, MAX_TITLE - 1)}…` : i.title;
    const description = i.lines.join('\n').trim();
    return { title, description: description || null };
  });
}
