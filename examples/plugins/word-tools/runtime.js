'use strict';
/**
 * Minimal plugin worker runtime (protocol version 1): JSON-RPC 2.0 over stdio, one JSON message
 * per line. No dependencies, so a plugin folder works wherever it is installed.
 *
 *   const { serve } = require('./runtime');
 *   serve({ 'tools.execute': async (params, host) => ..., ... });
 *
 * `host.call(method, params)` calls the host API (log, config.get, http.fetch, stream.publish,
 * folders.list, folders.read);
 * methods the manifest's capabilities do not grant are refused (error -32001). A call the host
 * makes for one company carries a `scope`; the `host` a handler gets passes it on with every host
 * call, so folder reads are made for that company (the host refuses any other).
 * Never write to stdout yourself: it carries the protocol. console.error goes to the plugin's logs.
 */
const readline = require('node:readline');

function serve(handlers) {
  let nextId = 1;
  const pending = new Map();
  const send = (msg) => process.stdout.write(JSON.stringify(msg) + '\n');
  const host = {
    call(method, params) {
      const id = nextId++;
      send({ jsonrpc: '2.0', id, method, params: params || {} });
      return new Promise((resolve, reject) => pending.set(id, { resolve, reject }));
    },
    log(message, level) {
      send({ jsonrpc: '2.0', method: 'log', params: { message: String(message), level: level || 'info' } });
    },
  };
  const all = {
    initialize: async () => ({ ok: true }),
    health: async () => ({ ok: true, uptimeSec: Math.round(process.uptime()) }),
    shutdown: async () => setImmediate(() => process.exit(0)),
    ...handlers,
  };
  readline.createInterface({ input: process.stdin }).on('line', async (line) => {
    if (!line.trim()) return;
    let msg;
    try {
      msg = JSON.parse(line);
    } catch {
      return;
    }
    if (msg.method === undefined) {
      const p = pending.get(msg.id);
      if (!p) return;
      pending.delete(msg.id);
      if (msg.error) p.reject(Object.assign(new Error(msg.error.message), { code: msg.error.code }));
      else p.resolve(msg.result);
      return;
    }
    const fn = all[msg.method];
    if (!fn) {
      if (msg.id !== undefined) send({ jsonrpc: '2.0', id: msg.id, error: { code: -32601, message: `Method not found: ${msg.method}` } });
      return;
    }
    const scope = msg.params && typeof msg.params.scope === 'string' ? msg.params.scope : null;
    const scoped = scope ? { ...host, call: (method, params) => host.call(method, { ...(params || {}), scope }) } : host;
    try {
      const result = await fn(msg.params || {}, scoped);
      if (msg.id !== undefined) send({ jsonrpc: '2.0', id: msg.id, result: result === undefined ? null : result });
    } catch (err) {
      if (msg.id !== undefined) send({ jsonrpc: '2.0', id: msg.id, error: { code: -32000, message: String((err && err.message) || err) } });
    }
  });
  process.stdin.on('end', () => process.exit(0));
  process.on('SIGTERM', () => process.exit(0));
  return host;
}

module.exports = { serve };
