import type { IncomingMessage } from 'node:http';
import type { FastifyInstance } from 'fastify';

/** Past this many bytes (or DRAIN_TIMEOUT_MS) of an oversized body the 413 is sent anyway and the connection closed. */
const DRAIN_MAX_BYTES = 256 * 1024 * 1024;
const DRAIN_TIMEOUT_MS = 30_000;

/**
 * A body over the limit gets a 413 the client can read. Replying while the client is still sending
 * and then closing the connection resets it (unread request bytes make the kernel send RST), and
 * clients such as Node's fetch then report "fetch failed" without a status. So the rest of the
 * body is read and discarded first (bounded in bytes and time), then the 413 goes out and the
 * connection closes cleanly.
 */
export function registerOversizeBodyDrain(fastify: FastifyInstance): void {
  fastify.addHook('onSend', async (req, reply, payload) => {
    if (reply.statusCode === 413) await drain(req.raw);
    return payload;
  });
}

function drain(req: IncomingMessage): Promise<void> {
  if (req.complete || req.readableEnded || req.destroyed) return Promise.resolve();
  return new Promise<void>((resolve) => {
    let bytes = 0;
    const done = () => {
      clearTimeout(timer);
      req.removeListener('data', onData);
      req.removeListener('end', done);
      req.removeListener('error', done);
      req.removeListener('close', done);
      resolve();
    };
    const onData = (chunk: Buffer) => {
      bytes += chunk.length;
      if (bytes > DRAIN_MAX_BYTES) done();
    };
    const timer = setTimeout(done, DRAIN_TIMEOUT_MS);
    timer.unref();
    req.on('data', onData);
    req.once('end', done);
    req.once('error', done);
    req.once('close', done);
    req.resume();
  });
}
