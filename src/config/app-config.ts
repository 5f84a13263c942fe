import { createHash, createPublicKey, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { IdentitySettings, identitySettingsFromEnv } from './agent-identity-settings';
import { loadOutboundSettings, OutboundSettings } from './outbound-config';
import { loadPathRootSettings, PathRootSettings } from './path-roots-config';
import { loadPluginSettings, PluginSettings } from './plugins-config';
import { loadRuntimeSettings, RuntimeSettings } from './runtime-settings';
import { loadSkillSourceSettings, SkillSourceSettings } from './skills-config';

export type DeploymentMode = 'local_trusted' | 'authenticated';

/** Heartbeat engine tuning; tests shorten the ticks and leases. */
export interface HeartbeatSettings {
  /** this instance's id in run leases (`claimed_by`); unique per process unless SERVICE_INSTANCE_ID is set */
  instanceId: string;
  /** scheduler tick: timer heartbeats and the dispatch poll */
  tickMs: number;
  /** reaper tick: expired leases, deferred wakes */
  reaperMs: number;
  /** lease length of a claimed run; the owner renews it every keepaliveMs */
  leaseSec: number;
  keepaliveMs: number;
  /** runs executing at once on this instance */
  maxLocalRuns: number;
  /** loop breaker: more than wakeLoopLimit wakes of one agent for one issue within the window are skipped */
  wakeLoopLimit: number;
  wakeLoopWindowSec: number;
  /** size cap of one run log */
  runLogMaxBytes: number;
}

/** Typed, validated configuration of one service instance. Built once at boot from the environment. */
export class AppConfig {
  port!: number;
  host!: string;
  databaseUrl?: string;
  dataDir!: string;
  deploymentMode!: DeploymentMode;
  publicUrl!: string;
  enableCompanyDeletion!: boolean;
  allowedAttachmentTypes!: string[];
  maxUploadBytes!: number;
  jwtSecret!: Uint8Array;
  secretsMasterKey!: Buffer;
  secretsMasterKeyFingerprint!: string;
  defaultSecretProvider?: string;
  /** reject inline values for sensitive-looking env keys (SERVICE_SECRETS_STRICT; default on in authenticated mode) */
  secretsStrictMode!: boolean;
  logLevel!: string;
  /**
   * SERVICE_TRUST_PROXY: whether client addresses come from X-Forwarded-For (Fastify's trustProxy):
   * false (default), true (any proxy), a hop count, or the proxies' addresses/CIDRs.
   */
  trustProxy!: boolean | number | string[];
  /** Instance label used as actor id when the system acts. */
  instanceId!: string;
  heartbeat!: HeartbeatSettings;
  /**
   * SERVICE_SHUTDOWN_GRACE_SEC (default 30): on SIGTERM/SIGINT the instance stops claiming runs and
   * waits up to this long for its live runs to finish before it hands the rest back; 0 hands them back at once
   */
  shutdownGraceSec!: number;
  /** routines scheduler tick (SERVICE_ROUTINES_TICK_MS): how often due cron triggers are looked for */
  routinesTickMs!: number;
  /** default of the experimental setting builtInAgents when it was never set (SERVICE_ENABLE_BUILT_IN_AGENTS) */
  builtInAgentsDefault!: boolean;
  /** the OS identity of each agent's processes (SERVICE_AGENT_UID_RANGE, SERVICE_AGENT_ROOT, SERVICE_AGENT_SANDBOX) */
  agentIdentity!: IdentitySettings;
  /** skill import sources and limits */
  skills!: SkillSourceSettings;
  /** plugin runtime settings */
  plugins!: PluginSettings;
  /** where the coding-agent CLIs are looked for (SERVICE_CLI_PATH) and model providers reached by default (SERVICE_AI_BASE_URLS) */
  runtimes!: RuntimeSettings;
  /** what server-side fetches of user-supplied URLs may reach besides public addresses (SERVICE_OUTBOUND_ALLOW) */
  outbound!: OutboundSettings;
  /** where workspace cwds and local-path imports may point (SERVICE_WORKSPACE_ROOTS) and what they never reach */
  pathRoots!: PathRootSettings;
  /** live event stream (WebSocket and SSE) */
  events!: LiveEventSettings;
  /** GET /api/metrics access: a bearer token (SERVICE_METRICS_TOKEN), else loopback callers only unless SERVICE_METRICS_ALLOW_REMOTE */
  metrics!: { token?: string; allowRemote: boolean };
  /** external adapters: where packages are unpacked (SERVICE_ADAPTERS_DIR, default `<data dir>/adapters`) and how often installs are polled (SERVICE_ADAPTERS_SYNC_MS) */
  adapters!: { installDir: string; syncMs: number };
  /**
   * database backups: where files go (SERVICE_BACKUP_DIR, default `<data dir>/backups`), the engine
   * (SERVICE_BACKUP_ENGINE: auto = pg_dump when a compatible one exists, else built-in), the tools
   * (SERVICE_PG_DUMP_PATH, SERVICE_PG_RESTORE_PATH) and the scheduler tick (SERVICE_BACKUP_TICK_MS)
   */
  backups!: { dir: string; engine: 'auto' | 'pg_dump' | 'builtin'; pgDumpPath?: string; pgRestorePath?: string; tickMs: number };
  /**
   * the activity chain's anchors (docs/audit-chain.md): the Ed25519 seed they are signed with
   * (SERVICE_AUDIT_SIGNING_KEY / _FILE, else `<data dir>/keys/audit-signing-key`) and how often each
   * company's chain head is anchored (SERVICE_AUDIT_ANCHOR_INTERVAL_SEC); public keys the verify route
   * also trusts (SERVICE_AUDIT_TRUSTED_KEYS: other instances' keys, SPKI DER base64, comma-separated)
   */
  audit!: { signingKey: Buffer; anchorIntervalSec: number; trustedPublicKeys: string[] };
  /**
   * company tool connections (docs/mcp.md): how long a gateway call of an "ask" tool waits for the
   * board's decision before it answers "pending" (SERVICE_TOOL_APPROVAL_WAIT_SEC, default 20; 0 = answer at once)
   */
  tools!: { approvalWaitSec: number };
}

export interface LiveEventSettings {
  /** how long events stay resumable (SERVICE_EVENTS_RETENTION_SEC, default 900) */
  retentionSec: number;
  /** ping interval of idle connections, and how often a connection's credential and access are re-checked (SERVICE_EVENTS_PING_MS) */
  pingMs: number;
  /** a client with more unsent bytes than this is closed as too slow (SERVICE_EVENTS_MAX_BUFFER_BYTES) */
  maxBufferedBytes: number;
}

export class ConfigError extends Error {}

export const DEFAULT_ALLOWED_ATTACHMENT_TYPES = [
  'image/*',
  'application/pdf',
  'text/plain',
  'text/markdown',
  'application/json',
  'text/csv',
  'text/html',
  'application/zip',
  'video/mp4',
  'video/webm',
  'video/quicktime',
];

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '::1', '[::1]']);

export function isLoopbackHost(host: string): boolean {
  return LOOPBACK_HOSTS.has(host) || /^127\.\d+\.\d+\.\d+$/.test(host);
}

function parseBool(name: string, raw: string | undefined, def: boolean): boolean {
  if (raw === undefined || raw === '') return def;
  const v = raw.trim().toLowerCase();
  if (['1', 'true', 'yes', 'on'].includes(v)) return true;
  if (['0', 'false', 'no', 'off'].includes(v)) return false;
  throw new ConfigError(`${name} must be a boolean (true/false), got "${raw}"`);
}

function parseTrustProxy(raw: string | undefined): boolean | number | string[] {
  const v = raw?.trim() ?? '';
  if (v === '') return false;
  if (/^\d+$/.test(v)) return Number(v);
  try {
    return parseBool('SERVICE_TRUST_PROXY', v, false);
  } catch {
    const list = v
      .split(',')
      .map((x) => x.trim())
      .filter(Boolean);
    const bad = list.find((x) => {
      const [addr, bits, extra] = x.split('/');
      const family = net.isIP(addr);
      return !family || extra !== undefined || (bits !== undefined && !(/^\d+$/.test(bits) && Number(bits) <= (family === 4 ? 32 : 128)));
    });
    if (bad !== undefined || !list.length) {
      throw new ConfigError(
        `SERVICE_TRUST_PROXY must be true/false, a hop count, or proxy addresses/CIDRs separated by commas, got "${raw}"`,
      );
    }
    return list;
  }
}

function parseInteger(name: string, raw: string | undefined, def: number, min: number, max: number): number {
  if (raw === undefined || raw === '') return def;
  if (!/^\d+$/.test(raw.trim())) throw new ConfigError(`${name} must be an integer, got "${raw}"`);
  const n = Number(raw);
  if (n < min || n > max) throw new ConfigError(`${name} must be between ${min} and ${max}, got ${n}`);
  return n;
}

/**
 * Reads a key from the environment, from a file named by `<NAME>_FILE`, or from a file in the data
 * directory that is generated (mode 0600) on first start.
 */
function loadKey(env: NodeJS.ProcessEnv, name: string, dataDir: string, fileName: string, persist: boolean): Buffer {
  const inline = env[name];
  if (inline) return decodeKey(name, inline);
  const fileVar = env[`${name}_FILE`];
  if (fileVar) {
    if (!fs.existsSync(fileVar)) throw new ConfigError(`${name}_FILE points to a missing file: ${fileVar}`);
    return decodeKey(`${name}_FILE`, fs.readFileSync(fileVar, 'utf8').trim());
  }
  const keyPath = path.join(dataDir, 'keys', fileName);
  if (fs.existsSync(keyPath)) {
    tightenMode(keyPath, 0o600);
    return decodeKey(keyPath, fs.readFileSync(keyPath, 'utf8').trim());
  }
  const key = randomBytes(32);
  if (persist) {
    fs.mkdirSync(path.dirname(keyPath), { recursive: true, mode: 0o700 });
    fs.writeFileSync(keyPath, key.toString('base64') + '\n', { mode: 0o600, flag: 'wx' });
  }
  return key;
}

/** SERVICE_AUDIT_TRUSTED_KEYS: Ed25519 public keys (SPKI DER, base64), separated by commas or spaces. */
function trustedAuditKeys(raw: string | undefined): string[] {
  const keys = (raw ?? '').split(/[\s,]+/).filter(Boolean);
  for (const k of keys) {
    let type: string | undefined;
    try {
      type = createPublicKey({ key: Buffer.from(k, 'base64'), format: 'der', type: 'spki' }).asymmetricKeyType;
    } catch {
      type = undefined;
    }
    if (type !== 'ed25519')
      throw new ConfigError(`SERVICE_AUDIT_TRUSTED_KEYS: "${k.slice(0, 24)}…" is not an Ed25519 public key (SPKI DER, base64)`);
  }
  return keys;
}

/** Removes group/other permissions (never adds any): the data directory is the service user's alone. */
function tightenMode(p: string, mode: number): void {
  try {
    const st = fs.statSync(p);
    if ((st.mode & 0o777 & ~mode) !== 0) fs.chmodSync(p, st.mode & mode);
  } catch {
    /* missing: created with the right mode later */
  }
}

/** The data directory and its keys folder are 0700 (created so, or tightened when they exist). */
function secureDataDir(dataDir: string): void {
  try {
    mkdirParents(dataDir, 0o700);
  } catch (err) {
    throw new ConfigError(`SERVICE_DATA_DIR ${dataDir} cannot be created: ${(err as Error).message}`);
  }
  tightenMode(dataDir, 0o700);
  tightenMode(path.join(dataDir, 'keys'), 0o700);
}

/**
 * `mkdir -p`, one level at a time: Node's recursive mkdirSync loops forever (100% CPU) under a
 * pseudo file system that answers ENOENT for every new entry (`/proc/x`).
 */
export function mkdirParents(dir: string, mode: number): void {
  const missing: string[] = [];
  let cur = path.resolve(dir);
  for (;;) {
    const st = fs.statSync(cur, { throwIfNoEntry: false });
    if (st) {
      if (!st.isDirectory()) throw Object.assign(new Error(`${cur} is not a directory`), { code: 'ENOTDIR' });
      break;
    }
    missing.unshift(cur);
    const parent = path.dirname(cur);
    if (parent === cur) break;
    cur = parent;
  }
  for (const d of missing) {
    try {
      fs.mkdirSync(d, { mode });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
}

function decodeKey(source: string, raw: string): Buffer {
  const v = raw.trim();
  let buf: Buffer;
  if (/^[0-9a-fA-F]{64}$/.test(v)) buf = Buffer.from(v, 'hex');
  else buf = Buffer.from(v, 'base64');
  if (buf.length !== 32) throw new ConfigError(`${source} must be 32 bytes, as 64 hex characters or base64`);
  return buf;
}

export interface LoadConfigOptions {
  /** generate missing key files in the data directory (the service does; `npm run migrate` must not) */
  writeKeys?: boolean;
  /** create the data directory and tighten its modes (default); `aos doctor` only looks */
  touchDataDir?: boolean;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env, opts: LoadConfigOptions = {}): AppConfig {
  const c = new AppConfig();
  c.port = parseInteger('PORT', env.PORT, 3100, 0, 65535);
  c.host = (env.HOST ?? '127.0.0.1').trim() || '127.0.0.1';
  c.databaseUrl = env.DATABASE_URL?.trim() || undefined;
  if (c.databaseUrl && !/^postgres(ql)?:\/\//.test(c.databaseUrl)) {
    throw new ConfigError('DATABASE_URL must be a postgres:// or postgresql:// URL');
  }
  c.dataDir = path.resolve(env.SERVICE_DATA_DIR?.trim() || path.join(os.homedir(), '.service'));
  const mode = (env.SERVICE_DEPLOYMENT_MODE ?? 'local_trusted').trim();
  if (mode !== 'local_trusted' && mode !== 'authenticated') {
    throw new ConfigError(`SERVICE_DEPLOYMENT_MODE must be local_trusted or authenticated, got "${mode}"`);
  }
  c.deploymentMode = mode;
  if (mode === 'local_trusted' && !isLoopbackHost(c.host)) {
    throw new ConfigError(
      `local_trusted mode binds to loopback only; HOST=${c.host} is not a loopback address (use SERVICE_DEPLOYMENT_MODE=authenticated)`,
    );
  }
  c.publicUrl = publicUrlOf(env, c.host, c.port);
  c.enableCompanyDeletion = parseBool('SERVICE_ENABLE_COMPANY_DELETION', env.SERVICE_ENABLE_COMPANY_DELETION, false);
  c.allowedAttachmentTypes = attachmentTypesOf(env);
  c.maxUploadBytes = parseInteger('SERVICE_MAX_UPLOAD_BYTES', env.SERVICE_MAX_UPLOAD_BYTES, 10 * 1024 * 1024, 1, 1024 * 1024 * 1024);
  c.trustProxy = parseTrustProxy(env.SERVICE_TRUST_PROXY);
  c.logLevel = (env.LOG_LEVEL ?? 'info').trim();
  if (!['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].includes(c.logLevel)) {
    throw new ConfigError(`LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent`);
  }
  const persistKeys = env.SERVICE_EPHEMERAL_KEYS !== 'true' && opts.writeKeys !== false;
  if ((persistKeys || !c.databaseUrl) && opts.touchDataDir !== false) secureDataDir(c.dataDir);
  c.jwtSecret = new Uint8Array(loadKey(env, 'SERVICE_JWT_SECRET', c.dataDir, 'jwt-secret', persistKeys));
  c.secretsMasterKey = loadKey(env, 'SERVICE_SECRETS_MASTER_KEY', c.dataDir, 'secrets-master-key', persistKeys);
  c.secretsMasterKeyFingerprint = createHash('sha256').update(c.secretsMasterKey).digest('hex').slice(0, 16);
  c.defaultSecretProvider = env.SERVICE_SECRETS_DEFAULT_PROVIDER?.trim() || undefined;
  c.secretsStrictMode = parseBool('SERVICE_SECRETS_STRICT', env.SERVICE_SECRETS_STRICT, mode === 'authenticated');
  const identity = identitySettingsFromEnv(env, c.dataDir, process.getuid?.() === 0);
  if (typeof identity === 'string') throw new ConfigError(identity);
  c.agentIdentity = identity;
  c.instanceId = env.SERVICE_INSTANCE_ID?.trim() || `${os.hostname()}-${process.pid}`;
  c.heartbeat = heartbeatSettings(env);
  c.shutdownGraceSec = parseInteger('SERVICE_SHUTDOWN_GRACE_SEC', env.SERVICE_SHUTDOWN_GRACE_SEC, 30, 0, 86_400);
  c.events = eventSettings(env);
  c.routinesTickMs = parseInteger('SERVICE_ROUTINES_TICK_MS', env.SERVICE_ROUTINES_TICK_MS, 250, 50, 3_600_000);
  c.builtInAgentsDefault = parseBool('SERVICE_ENABLE_BUILT_IN_AGENTS', env.SERVICE_ENABLE_BUILT_IN_AGENTS, false);
  c.adapters = {
    installDir: path.resolve(env.SERVICE_ADAPTERS_DIR?.trim() || path.join(c.dataDir, 'adapters')),
    syncMs: parseInteger('SERVICE_ADAPTERS_SYNC_MS', env.SERVICE_ADAPTERS_SYNC_MS, 2000, 50, 3_600_000),
  };
  c.metrics = {
    token: env.SERVICE_METRICS_TOKEN?.trim() || undefined,
    allowRemote: parseBool('SERVICE_METRICS_ALLOW_REMOTE', env.SERVICE_METRICS_ALLOW_REMOTE, false),
  };
  c.backups = backupSettings(env, c.dataDir);
  c.audit = {
    signingKey: loadKey(env, 'SERVICE_AUDIT_SIGNING_KEY', c.dataDir, 'audit-signing-key', persistKeys),
    anchorIntervalSec: parseInteger('SERVICE_AUDIT_ANCHOR_INTERVAL_SEC', env.SERVICE_AUDIT_ANCHOR_INTERVAL_SEC, 3600, 1, 30 * 86_400),
    trustedPublicKeys: trustedAuditKeys(env.SERVICE_AUDIT_TRUSTED_KEYS),
  };
  c.tools = { approvalWaitSec: parseInteger('SERVICE_TOOL_APPROVAL_WAIT_SEC', env.SERVICE_TOOL_APPROVAL_WAIT_SEC, 20, 0, 600) };
  try {
    c.skills = loadSkillSourceSettings(env);
    c.outbound = loadOutboundSettings(env);
    c.plugins = loadPluginSettings(env, c.dataDir);
    c.runtimes = loadRuntimeSettings(env);
    c.pathRoots = loadPathRootSettings(env, [
      c.dataDir,
      env.SERVICE_JWT_SECRET_FILE,
      env.SERVICE_SECRETS_MASTER_KEY_FILE,
      c.adapters.installDir,
      c.backups.dir,
      c.plugins.installDir ?? undefined,
      ...c.plugins.folderRoots,
    ]);
  } catch (err) {
    throw new ConfigError((err as Error).message);
  }
  return c;
}

/** SERVICE_PUBLIC_URL, or the URL of the bound address. */
function publicUrlOf(env: NodeJS.ProcessEnv, host: string, port: number): string {
  const publicUrl = env.SERVICE_PUBLIC_URL?.trim();
  if (publicUrl) {
    try {
      const u = new URL(publicUrl);
      if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('protocol');
    } catch {
      throw new ConfigError(`SERVICE_PUBLIC_URL must be an http(s) URL, got "${publicUrl}"`);
    }
    return publicUrl.replace(/\/$/, '');
  }
  const h = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
  return `http://${h}:${port}`;
}

/** SERVICE_ALLOWED_ATTACHMENT_TYPES (MIME types or patterns), or the default list. */
function attachmentTypesOf(env: NodeJS.ProcessEnv): string[] {
  const types = env.SERVICE_ALLOWED_ATTACHMENT_TYPES?.trim();
  if (!types) return DEFAULT_ALLOWED_ATTACHMENT_TYPES;
  const list = types
    .split(',')
    .map((t) => t.trim().toLowerCase())
    .filter(Boolean);
  for (const t of list) {
    if (!/^([a-z0-9!#$&^_.+-]+|\*)\/([a-z0-9!#$&^_.+-]+|\*)$/.test(t)) {
      throw new ConfigError(`SERVICE_ALLOWED_ATTACHMENT_TYPES has an invalid MIME type or pattern: "${t}"`);
    }
  }
  return list;
}

function heartbeatSettings(env: NodeJS.ProcessEnv): AppConfig['heartbeat'] {
  return {
    instanceId: env.SERVICE_INSTANCE_ID?.trim() || `${os.hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`,
    tickMs: parseInteger('SERVICE_HEARTBEAT_TICK_MS', env.SERVICE_HEARTBEAT_TICK_MS, 2000, 50, 3_600_000),
    reaperMs: parseInteger('SERVICE_HEARTBEAT_REAPER_MS', env.SERVICE_HEARTBEAT_REAPER_MS, 10_000, 50, 3_600_000),
    leaseSec: parseInteger('SERVICE_HEARTBEAT_LEASE_SEC', env.SERVICE_HEARTBEAT_LEASE_SEC, 60, 1, 86_400),
    keepaliveMs: parseInteger('SERVICE_HEARTBEAT_KEEPALIVE_MS', env.SERVICE_HEARTBEAT_KEEPALIVE_MS, 2000, 50, 600_000),
    maxLocalRuns: parseInteger('SERVICE_HEARTBEAT_MAX_LOCAL_RUNS', env.SERVICE_HEARTBEAT_MAX_LOCAL_RUNS, 64, 1, 10_000),
    wakeLoopLimit: parseInteger('SERVICE_WAKE_LOOP_LIMIT', env.SERVICE_WAKE_LOOP_LIMIT, 10, 1, 1_000_000),
    wakeLoopWindowSec: parseInteger('SERVICE_WAKE_LOOP_WINDOW_SEC', env.SERVICE_WAKE_LOOP_WINDOW_SEC, 3600, 1, 30 * 86_400),
    runLogMaxBytes: parseInteger('SERVICE_RUN_LOG_MAX_BYTES', env.SERVICE_RUN_LOG_MAX_BYTES, 5 * 1024 * 1024, 1024, 1024 * 1024 * 1024),
  };
}

function eventSettings(env: NodeJS.ProcessEnv): AppConfig['events'] {
  return {
    retentionSec: parseInteger('SERVICE_EVENTS_RETENTION_SEC', env.SERVICE_EVENTS_RETENTION_SEC, 900, 60, 7 * 86_400),
    pingMs: parseInteger('SERVICE_EVENTS_PING_MS', env.SERVICE_EVENTS_PING_MS, 25_000, 100, 600_000),
    maxBufferedBytes: parseInteger(
      'SERVICE_EVENTS_MAX_BUFFER_BYTES',
      env.SERVICE_EVENTS_MAX_BUFFER_BYTES,
      4 * 1024 * 1024,
      1024,
      1024 * 1024 * 1024,
    ),
  };
}

function backupSettings(env: NodeJS.ProcessEnv, dataDir: string): AppConfig['backups'] {
  const engine = (env.SERVICE_BACKUP_ENGINE?.trim() || 'auto') as AppConfig['backups']['engine'];
  if (!['auto', 'pg_dump', 'builtin'].includes(engine))
    throw new ConfigError(`SERVICE_BACKUP_ENGINE must be auto, pg_dump or builtin, got "${engine}"`);
  return {
    dir: path.resolve(env.SERVICE_BACKUP_DIR?.trim() || path.join(dataDir, 'backups')),
    engine,
    pgDumpPath: env.SERVICE_PG_DUMP_PATH?.trim() || undefined,
    pgRestorePath: env.SERVICE_PG_RESTORE_PATH?.trim() || undefined,
    tickMs: parseInteger('SERVICE_BACKUP_TICK_MS', env.SERVICE_BACKUP_TICK_MS, 30_000, 50, 3_600_000),
  };
}
