import { Client } from 'pg';

// Relies on pg Client internals (its `connection.stream` socket and per-statement writes), so
// package.json pins pg to a minor range (~8.23.x): check this file before widening it.
type QueryFn = (config: unknown, values?: unknown, callback?: unknown) => unknown;
interface Corkable {
  cork(): void;
  uncork(): void;
}

const corked = new WeakSet<Corkable>();

/**
 * A pg Client whose statements sent in one turn of the event loop leave in one socket write. In
 * pipeline mode a transaction sends BEGIN with its first statement and its last statements with the
 * COMMIT; node-postgres writes each statement on its own (one writev each), and on loopback a write
 * costs the sender the receiver's network stack too: about a fifth of the service's CPU under write
 * load went to writev. The socket is corked at the first statement of a turn and uncorked once the
 * promise continuations queued in that turn have run (a nextTick queued from a promise continuation
 * runs when the microtask queue is empty), so those statements share one write and Postgres reads
 * them together. They are never held past that point: a transaction holding row locks sends its
 * COMMIT before this process takes up another request's I/O.
 */
export function coalescingClientClass(base: typeof Client = Client): typeof Client {
  const query = base.prototype.query as unknown as QueryFn;
  class CoalescingClient extends base {}
  (CoalescingClient.prototype as unknown as { query: QueryFn }).query = function (this: Client, config, values, callback) {
    const stream = (this as unknown as { connection?: { stream?: Partial<Corkable> } }).connection?.stream;
    if (stream?.cork && stream.uncork && !corked.has(stream as Corkable)) {
      const s = stream as Corkable;
      corked.add(s);
      s.cork();
      process.nextTick(() => {
        corked.delete(s);
        s.uncork();
      });
    }
    return query.call(this, config, values, callback);
  };
  return CoalescingClient;
}
