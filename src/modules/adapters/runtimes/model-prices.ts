import * as fs from 'node:fs';

/**
 * List prices of models, in USD per million tokens. Used when a CLI reports tokens but no cost
 * (Codex, Gemini, OpenCode on some providers, Claude on a subscription login): such a run is priced
 * from this table, or booked as explicitly *unpriced* when its model is unknown, never as free.
 *
 * Operators extend or override it with a JSON file named by `SERVICE_MODEL_PRICES_FILE`
 * (`{ "<model or prefix*>": { "input": 3, "cachedInput": 0.3, "cacheWrite": 3.75, "output": 15 } }`),
 * and per agent with `adapterConfig.modelPrices` (same shape). Keys ending in `*` match by prefix;
 * the longest match wins.
 */
export interface ModelPrice {
  input: number;
  cachedInput?: number;
  cacheWrite?: number;
  output: number;
}

export type PriceTable = Record<string, ModelPrice>;

const BUILT_IN: PriceTable = {
  'claude-opus-4*': { input: 15, cachedInput: 1.5, cacheWrite: 18.75, output: 75 },
  'claude-opus-4-5*': { input: 5, cachedInput: 0.5, cacheWrite: 6.25, output: 25 },
  'claude-sonnet-4*': { input: 3, cachedInput: 0.3, cacheWrite: 3.75, output: 15 },
  'claude-3-7-sonnet*': { input: 3, cachedInput: 0.3, cacheWrite: 3.75, output: 15 },
  'claude-haiku-4*': { input: 1, cachedInput: 0.1, cacheWrite: 1.25, output: 5 },
  'claude-3-5-haiku*': { input: 0.8, cachedInput: 0.08, cacheWrite: 1, output: 4 },
  'gpt-5*': { input: 1.25, cachedInput: 0.125, output: 10 },
  'gpt-5-mini*': { input: 0.25, cachedInput: 0.025, output: 2 },
  'gpt-5-nano*': { input: 0.05, cachedInput: 0.005, output: 0.4 },
  'gpt-5-codex*': { input: 1.25, cachedInput: 0.125, output: 10 },
  'gpt-4.1*': { input: 2, cachedInput: 0.5, output: 8 },
  'gpt-4.1-mini*': { input: 0.4, cachedInput: 0.1, output: 1.6 },
  'gpt-4o*': { input: 2.5, cachedInput: 1.25, output: 10 },
  'o3*': { input: 2, cachedInput: 0.5, output: 8 },
  'o4-mini*': { input: 1.1, cachedInput: 0.275, output: 4.4 },
  'gemini-2.5-pro*': { input: 1.25, cachedInput: 0.31, output: 10 },
  'gemini-2.5-flash*': { input: 0.3, cachedInput: 0.075, output: 2.5 },
  'gemini-2.5-flash-lite*': { input: 0.1, cachedInput: 0.025, output: 0.4 },
  'gemini-3-pro*': { input: 2, cachedInput: 0.2, output: 12 },
};

export const MODEL_PRICES_FILE_ENV = 'SERVICE_MODEL_PRICES_FILE';

const isPrice = (v: unknown): v is ModelPrice => {
  if (!v || typeof v !== 'object') return false;
  const p = v as Record<string, unknown>;
  const okNum = (x: unknown, optional: boolean) => (x === undefined ? optional : typeof x === 'number' && Number.isFinite(x) && x >= 0);
  return okNum(p.input, false) && okNum(p.output, false) && okNum(p.cachedInput, true) && okNum(p.cacheWrite, true);
};

/** The valid entries of a price table given as JSON (invalid entries are dropped). */
export function parsePriceTable(v: unknown): PriceTable {
  if (!v || typeof v !== 'object' || Array.isArray(v)) return {};
  return Object.fromEntries(Object.entries(v as Record<string, unknown>).filter(([, p]) => isPrice(p))) as PriceTable;
}

let fileCache: { path: string; mtimeMs: number; table: PriceTable } | null = null;

/** The operator's table from SERVICE_MODEL_PRICES_FILE (re-read when the file changes). */
function operatorTable(): PriceTable {
  const file = process.env[MODEL_PRICES_FILE_ENV]?.trim();
  if (!file) return {};
  try {
    const { mtimeMs } = fs.statSync(file);
    if (fileCache?.path === file && fileCache.mtimeMs === mtimeMs) return fileCache.table;
    const table = parsePriceTable(JSON.parse(fs.readFileSync(file, 'utf8')));
    fileCache = { path: file, mtimeMs, table };
    return table;
  } catch {
    return {};
  }
}

function lookup(table: PriceTable, model: string): { key: string; price: ModelPrice } | null {
  let best: { key: string; price: ModelPrice } | null = null;
  for (const [key, price] of Object.entries(table)) {
    const hit = key.endsWith('*') ? model.startsWith(key.slice(0, -1)) : model === key;
    if (hit && (!best || key.length > best.key.length || (key === model && best.key !== model))) best = { key, price };
  }
  return best;
}

/** The price of a model: the agent's table, then the operator's file, then the built-in list. */
export function priceOf(model: string | null | undefined, agentTable: PriceTable = {}): ModelPrice | null {
  if (!model) return null;
  const bare = model.includes('/') ? model.slice(model.lastIndexOf('/') + 1) : model;
  for (const table of [agentTable, operatorTable(), BUILT_IN]) {
    const hit = lookup(table, model) ?? lookup(table, bare);
    if (hit) return hit.price;
  }
  return null;
}

export interface TokenCounts {
  inputTokens: number;
  cachedInputTokens: number;
  cacheCreationInputTokens: number;
  outputTokens: number;
}

/** USD of the tokens at a price (cache writes at their price, else the input price). */
export function priceTokens(t: TokenCounts, p: ModelPrice): number {
  return (
    (t.inputTokens * p.input +
      t.cachedInputTokens * (p.cachedInput ?? p.input) +
      t.cacheCreationInputTokens * (p.cacheWrite ?? p.input) +
      t.outputTokens * p.output) /
    1_000_000
  );
}
