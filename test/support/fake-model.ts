import type * as http from 'node:http';

/**
 * What the loopback model fakes share: a record of every model call they served (tokens counted as
 * a cost event books them: input uncached plus cache writes, cached input, output), the run each
 * call belongs to (the prompt names the run), and markers an agent's tool can hit to say "the tool
 * is running now" (`curl $FAKE/marker/<name>`).
 */
export interface ServedCall {
  /** the request's index in the fake's `requests` */
  index: number;
  /** the run whose prompt the request carries (the newest run id in it), or null */
  runId: string | null;
  /** what the call bills, as a cost event books it */
  booked: { input: number; cached: number; output: number };
  /** the fake sent the whole answer (usage included); false while held, or cut off by the client */
  complete: boolean;
  /** the input was billed at the start of the answer (Anthropic's message_start), complete or not */
  inputAtStart: boolean;
}

/** Calls of one run, summed: `complete` calls, and the largest single call (the tolerance of a call in flight). */
export interface ServedSum {
  calls: number;
  input: number;
  cached: number;
  output: number;
  /** the input of started calls that did not complete (Anthropic bills them at message_start) */
  startedInput: number;
  largest: { input: number; cached: number; output: number };
}

const RUN_ID = /X-Service-Run-Id: ([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})/g;

/** The run a model request belongs to: the newest run id its transcript names (a resumed session names older runs first). */
export function runIdOf(body: unknown): string | null {
  const text = JSON.stringify(body ?? '');
  let last: string | null = null;
  for (const m of text.matchAll(RUN_ID)) last = m[1];
  return last;
}

export function sumServed(calls: ServedCall[], runId: string): ServedSum {
  const mine = calls.filter((c) => c.runId === runId);
  const done = mine.filter((c) => c.complete);
  const largest = { input: 0, cached: 0, output: 0 };
  for (const c of mine) {
    largest.input = Math.max(largest.input, c.booked.input);
    largest.cached = Math.max(largest.cached, c.booked.cached);
    largest.output = Math.max(largest.output, c.booked.output);
  }
  return {
    calls: done.length,
    input: done.reduce((n, c) => n + c.booked.input, 0),
    cached: done.reduce((n, c) => n + c.booked.cached, 0),
    output: done.reduce((n, c) => n + c.booked.output, 0),
    startedInput: mine.filter((c) => !c.complete && c.inputAtStart).reduce((n, c) => n + c.booked.input, 0),
    largest,
  };
}

/** Markers hit by agents' tools (`GET|POST /marker/<name>`): the fakes answer them before their API routes. */
export class Markers {
  private readonly seen = new Set<string>();
  private readonly waiting = new Map<string, Array<() => void>>();

  /** Handles a marker request; false for any other request. */
  handle(req: http.IncomingMessage, res: http.ServerResponse): boolean {
    const m = /^\/marker\/([\w.-]+)/.exec(req.url ?? '');
    if (!m) return false;
    this.seen.add(m[1]);
    for (const w of this.waiting.get(m[1]) ?? []) w();
    this.waiting.delete(m[1]);
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end('ok\n');
    return true;
  }

  has(name: string): boolean {
    return this.seen.has(name);
  }

  /** Resolves once the marker is hit (at once when it was). */
  wait(name: string): Promise<void> {
    if (this.seen.has(name)) return Promise.resolve();
    return new Promise((r) => this.waiting.set(name, [...(this.waiting.get(name) ?? []), r]));
  }
}

/** A gate a test opens: answers of a fake wait on it (`hold`). */
export function gate(): { promise: Promise<void>; open(): void } {
  let open: () => void = () => undefined;
  const promise = new Promise<void>((r) => (open = r));
  return { promise, open };
}

/**
 * Scripts of the calls of several runs served by one fake at once: each script is keyed by a token
 * the run's requests carry (e.g. in the agent's name) and gets the number of that key's calls so far.
 */
export class KeyedScripts<T> {
  private readonly scripts = new Map<string, (n: number) => T>();
  private readonly counts = new Map<string, number>();

  constructor(private readonly fallback: () => T) {}

  set(key: string, script: (n: number) => T): void {
    this.scripts.set(key, script);
  }

  /** How many calls of the key have been scripted (answered or held). */
  count(key: string): number {
    return this.counts.get(key) ?? 0;
  }

  /** The turn for a request body: its key's script with the key's call count, else the fallback. */
  turn(body: unknown): T {
    const text = JSON.stringify(body ?? '');
    for (const [key, script] of this.scripts) {
      if (!text.includes(key)) continue;
      const n = this.counts.get(key) ?? 0;
      this.counts.set(key, n + 1);
      return script(n);
    }
    return this.fallback();
  }
}
