// Bench helpers: start the built service on a fresh embedded database, drive it with autocannon.
'use strict';
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const net = require('node:net');
const autocannon = require('autocannon');

/** utime + stime of a process in ms (Linux /proc; USER_HZ 100), or null */
function cpuMs(pid) {
  try {
    const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const r = f.slice(f.lastIndexOf(')') + 2).split(' ');
    return (Number(r[11]) + Number(r[12])) * 10;
  } catch {
    return null;
  }
}

/** the service `load` measures the CPU of: the first one started (run.js's) */
let measuredPid = null;

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

/** Starts `node dist/src/main.js` with its own data directory; returns { baseUrl, dataDir, stop }. */
async function startService(env = {}) {
  const main = path.join(__dirname, '..', 'dist', 'src', 'main.js');
  if (!fs.existsSync(main)) throw new Error('build first: npm run build');
  const port = await freePort();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-'));
  const child = spawn(process.execPath, [...(process.env.BENCH_SERVICE_NODE_ARGS ?? '').split(' ').filter(Boolean), main], {
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', SERVICE_DATA_DIR: dataDir, LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const baseUrl = `http://127.0.0.1:${port}`;
  measuredPid ??= child.pid;
  const started = Date.now();
  for (;;) {
    try {
      const r = await fetch(`${baseUrl}/api/health`);
      if (r.ok) break;
    } catch {
      /* not yet */
    }
    if (child.exitCode !== null) throw new Error('service exited during start-up');
    // a loaded machine (other work on its cores) can take a minute or more to start the service
    if (Date.now() - started > Number(process.env.BENCH_STARTUP_MS ?? 300_000)) {
      child.kill('SIGKILL');
      throw new Error('service did not become healthy');
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    baseUrl,
    dataDir,
    pid: child.pid,
    startupMs: Date.now() - started,
    /** SIGKILL, as a crash would; resolves once the process is gone */
    async kill() {
      if (child.exitCode === null && child.signalCode === null) {
        const gone = new Promise((r) => child.once('exit', r));
        child.kill('SIGKILL');
        await gone;
      }
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        const gone = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        await gone;
      }
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

async function api(baseUrl, method, p, body, headers = {}) {
  const res = await fetch(baseUrl + p, {
    method,
    headers: { 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${p}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : undefined;
}

function run(opts, duration) {
  return new Promise((resolve, reject) => {
    autocannon({ connections: 10, ...opts, duration }, (err, r) => (err ? reject(err) : resolve(r)));
  });
}

/**
 * Runs autocannon and returns a one-line summary { name, reqPerSec, p50, p99, errors, non2xx }.
 * A warm-up of BENCH_WARMUP seconds (default 2) runs first and is not counted: the first seconds of
 * a route measure V8 compiling it and connections preparing their statements, not its steady state.
 */
async function load(name, opts) {
  const warmup = Number(process.env.BENCH_WARMUP ?? 2);
  if (warmup > 0) {
    await run(opts, warmup);
    // requests the warm-up cut off are still being answered: let them finish, so that they do not
    // race the measured run's first requests (a checkout against its own cut-off release)
    await new Promise((r) => setTimeout(r, 500));
  }
  const cpu0 = measuredPid && cpuMs(measuredPid);
  const r = await run(opts, Number(process.env.BENCH_SECONDS ?? 5));
  const cpu1 = measuredPid && cpuMs(measuredPid);
  return {
    name,
    reqPerSec: Math.round(r.requests.average),
    p50Ms: r.latency.p50,
    p99Ms: r.latency.p99,
    errors: r.errors,
    non2xx: r.non2xx,
    // the service's own CPU (Node; not Postgres, not the load generator) per answered request
    cpuMsPerReq: cpu0 !== null && cpu1 !== null && r.requests.total ? (cpu1 - cpu0) / r.requests.total : null,
  };
}

/** The service's database: DATABASE_URL, or the embedded cluster of the bench's data directory. */
function databaseUrl(svc) {
  if (process.env.DATABASE_URL) return process.env.DATABASE_URL;
  const pid = fs.readFileSync(path.join(svc.dataDir, 'db', 'postmaster.pid'), 'utf8').split('\n');
  // the embedded cluster's random superuser password (older clusters: "service")
  const pwFile = path.join(svc.dataDir, 'db-password');
  const password = fs.existsSync(pwFile) ? fs.readFileSync(pwFile, 'utf8').trim() : 'service';
  return `postgres://service:${encodeURIComponent(password)}@127.0.0.1:${pid[3].trim()}/service`;
}

module.exports = { startService, api, load, databaseUrl, cpuMs };
