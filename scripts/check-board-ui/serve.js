'use strict';
// The published board UI on a loopback port: its files, index.html for any other GET (a single-page
// app), and /api/* (HTTP and WebSocket upgrades) passed through to the service.
const fs = require('node:fs');
const http = require('node:http');
const net = require('node:net');
const path = require('node:path');

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.webmanifest': 'application/manifest+json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.woff': 'font/woff',
  '.wasm': 'application/wasm',
};

/** Starts the UI server; resolves with its URL and a close function. */
function serveBoardUi(uiDist, target) {
  const root = path.resolve(uiDist);
  const api = new URL(target);
  const file = (pathname) => {
    let p;
    try {
      p = path.resolve(root, '.' + path.posix.normalize('/' + decodeURIComponent(pathname)));
    } catch {
      return null;
    }
    if (!p.startsWith(root + path.sep)) return null;
    return fs.statSync(p, { throwIfNoEntry: false })?.isFile() ? p : null;
  };
  const server = http.createServer((req, res) => {
    const pathname = (req.url ?? '/').split('?')[0];
    if (pathname === '/api' || pathname.startsWith('/api/')) {
      const up = http.request({ host: api.hostname, port: api.port, method: req.method, path: req.url, headers: req.headers }, (r) => {
        res.writeHead(r.statusCode ?? 502, r.headers);
        r.pipe(res);
      });
      up.on('error', () => {
        if (!res.headersSent) res.writeHead(502, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: 'the service is not reachable' }));
      });
      req.pipe(up);
      return;
    }
    const found = file(pathname) ?? (pathname.startsWith('/assets/') ? null : path.join(root, 'index.html'));
    if (!found) {
      res.writeHead(404).end('not found');
      return;
    }
    res.writeHead(200, { 'content-type': TYPES[path.extname(found)] ?? 'application/octet-stream' });
    fs.createReadStream(found).pipe(res);
  });
  // WebSocket upgrades of /api/*: the request head is replayed to the service and both sides piped
  server.on('upgrade', (req, socket, head) => {
    const up = net.connect(Number(api.port), api.hostname, () => {
      const lines = [`${req.method} ${req.url} HTTP/1.1`];
      for (let i = 0; i < req.rawHeaders.length; i += 2) lines.push(`${req.rawHeaders[i]}: ${req.rawHeaders[i + 1]}`);
      up.write(lines.join('\r\n') + '\r\n\r\n');
      if (head?.length) up.write(head);
      up.pipe(socket);
      socket.pipe(up);
    });
    up.on('error', () => socket.destroy());
    socket.on('error', () => up.destroy());
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({
        url: `http://127.0.0.1:${server.address().port}`,
        close: () => new Promise((r) => (server.closeAllConnections(), server.close(() => r()))),
      }),
    ),
  );
}

module.exports = { serveBoardUi };
