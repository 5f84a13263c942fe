import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { freePort } from '../../src/database/embedded-postgres';
import { sleep } from './heartbeat';

const ROOT = path.join(__dirname, '..', '..');
const DIST = path.join(ROOT, 'dist');
/** where the tests build the service when dist/ is older than the sources (git-ignored) */
export const TEST_BUILD = path.join(ROOT, '.test-build');

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(p) : fs.statSync(p).mtimeMs);
  }
  return newest;
}

const mainOf = (outDir: string) => path.join(outDir, 'src', 'main.js');

const fresh = (outDir: string) =>
  (fs.statSync(mainOf(outDir), { throwIfNoEntry: false })?.mtimeMs ?? 0) >=
  Math.max(newestMtime(path.join(ROOT, 'src')), newestMtime(path.join(ROOT, 'migrations')));

/**
 * The built service: `dist/` when it is at least as new as the sources, else a build of the sources
 * into `.test-build/` (the same build as `npm run build`, with the swagger plugin; same depth, so the paths the
 * service finds relative to itself are the same). The tests never write, delete or rebuild `dist/`:
 * an `npm start` of the same checkout may be serving from it. Test files run in parallel workers:
 * one builds (under a lock directory), the others wait for it. Resolves to the output directory.
 */
export async function ensureBuiltDir(): Promise<string> {
  if (fresh(DIST)) return DIST;
  if (fresh(TEST_BUILD)) return TEST_BUILD;
  const lock = path.join(ROOT, '.build-lock');
  for (const deadline = Date.now() + 300_000; ;) {
    try {
      fs.mkdirSync(lock);
      break;
    } catch {
      // a lock older than the build timeout is left by a killed run
      if (Date.now() - (fs.statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? Date.now()) > 300_000)
        fs.rmSync(lock, { recursive: true, force: true });
      if (Date.now() > deadline) throw new Error('timed out waiting for another test to build the service');
      await sleep(500);
    }
  }
  try {
    if (!fresh(TEST_BUILD)) buildInto(TEST_BUILD);
  } finally {
    fs.rmSync(lock, { recursive: true, force: true });
  }
  return TEST_BUILD;
}

/** `node scripts/build.js --out <outDir>`: the build of `npm run build` (swagger plugin and all) into `outDir`. */
export function buildInto(outDir: string): void {
  execFileSync(process.execPath, [path.join(ROOT, 'scripts', 'build.js'), '--out', outDir], { cwd: ROOT, stdio: 'pipe', timeout: 300_000 });
}

/** The built service's main.js (see ensureBuiltDir). */
export async function ensureBuilt(): Promise<string> {
  return mainOf(await ensureBuiltDir());
}

export interface ServiceProcess {
  child: ChildProcess;
  baseUrl: string;
  output(): string;
  api(method: string, url: string, body?: unknown): Promise<{ status: number; body: any }>;
  /** SIGKILL, and wait for the exit */
  crash(): Promise<void>;
  stop(): Promise<void>;
}

/** What a start-up that lost its port to another process prints (the port is picked free, then bound later). */
const PORT_TAKEN = /EADDRINUSE|is already in use/;

/**
 * Starts `node dist/src/main.js` (or `command`, e.g. `npm start`, from the repository root) as a
 * child with `env`; resolves once /api/health answers. The port is picked free and bound by the
 * child later: when another process took it in between, the start is tried again on a new port.
 */
export async function startService(env: Record<string, string>, opts: { command?: [string, ...string[]] } = {}): Promise<ServiceProcess> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(env, opts);
    } catch (err) {
      if (!(err instanceof PortTaken) || attempt >= 5) throw err;
    }
  }
}

class PortTaken extends Error {}

/** Processes whose parent is `pid`, and theirs (Linux /proc). */
function treeOf(pid: number): number[] {
  const parents = new Map<number, number[]>();
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat = '';
    try {
      stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue; // gone meanwhile
    }
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    parents.set(ppid, [...(parents.get(ppid) ?? []), Number(entry)]);
  }
  const out = [pid];
  for (let i = 0; i < out.length; i++) out.push(...(parents.get(out[i]) ?? []));
  return out;
}

/**
 * Whether the socket listening on 127.0.0.1:`port` is one of `pid`'s process tree: a health answer
 * on a port another test's service took in the meantime is not ours. Where /proc cannot tell, yes.
 */
export function listensOn(pid: number, port: number): boolean {
  try {
    const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
    const inodes = new Set(
      ['/proc/net/tcp', '/proc/net/tcp6']
        .flatMap((f) => (fs.existsSync(f) ? fs.readFileSync(f, 'utf8').split('\n').slice(1) : []))
        .map((l) => l.trim().split(/\s+/))
        .filter((f) => f[1]?.endsWith(`:${hexPort}`) && f[3] === '0A')
        .map((f) => `socket:[${f[9]}]`),
    );
    for (const p of treeOf(pid)) {
      let fds: string[] = [];
      try {
        fds = fs.readdirSync(`/proc/${p}/fd`);
      } catch {
        continue; // gone meanwhile
      }
      for (const fd of fds) {
        try {
          if (inodes.has(fs.readlinkSync(`/proc/${p}/fd/${fd}`))) return true;
        } catch {
          /* closed meanwhile */
        }
      }
    }
    return false;
  } catch {
    return true;
  }
}

async function startOnce(env: Record<string, string>, opts: { command?: [string, ...string[]] }): Promise<ServiceProcess> {
  const port = await freePort();
  const main = await ensureBuilt();
  const [cmd, ...args] = opts.command ?? [process.execPath, main];
  const child = spawn(cmd, args, {
    cwd: ROOT,
    // no drain on SIGTERM unless a test asks for one (stop() hands live runs back at once, as before)
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      ...(process.env.SERVICE_AGENT_ROOT ? { SERVICE_AGENT_ROOT: process.env.SERVICE_AGENT_ROOT } : {}),
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      SERVICE_SHUTDOWN_GRACE_SEC: '0',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.on('data', (d) => (out = (out + d).slice(-20_000)));
  child.stderr?.on('data', (d) => (out = (out + d).slice(-20_000)));
  const baseUrl = `http://127.0.0.1:${port}`;
  const exited = () => child.exitCode !== null || child.signalCode !== null;
  const waitExit = () => (exited() ? Promise.resolve() : new Promise<void>((r) => child.once('exit', () => r())));
  const api = async (method: string, url: string, body?: unknown) => {
    const res = await fetch(baseUrl + url, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  };
  // start-up runs initdb and the migrations: on two cores shared with other work that can take minutes
  const deadline = Date.now() + 150_000;
  for (;;) {
    if (exited()) {
      if (PORT_TAKEN.test(out)) throw new PortTaken(out);
      throw new Error(`service exited during start-up:\n${out}`);
    }
    const health = await api('GET', '/api/health').catch(() => null); // null: not listening yet
    if (health?.status === 200) {
      if (listensOn(child.pid!, port)) break;
      // another process answers on the port we were given: ours cannot have bound it
      child.kill('SIGKILL');
      await waitExit();
      throw new PortTaken(out);
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`service did not become healthy:\n${out}`);
    }
    await sleep(100);
  }
  return {
    child,
    baseUrl,
    output: () => out,
    api,
    crash: async () => {
      child.kill('SIGKILL');
      await waitExit();
    },
    stop: async () => {
      if (exited()) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await waitExit();
      clearTimeout(timer);
    },
  };
}
