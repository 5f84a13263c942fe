import { ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { listenersOn } from '../../common/net/socket-owner';
import { treeHoldsSocket } from '../../common/process/process-groups';
import { healthCheckPath } from './workspace-rules';
import { AppConfig } from '../../config/app-config';
import type { RuntimeConfig } from './project-workspace.entity';
import { WorkspacesRepository } from './workspaces.repository';
import { inaccessibleReason } from '../../common/process/agent-user';
import { AgentIdentities } from '../../common/process/agent-identities';
import { prepareAgentSpawn } from '../../common/process/agent-sandbox';

interface Supervised {
  workspaceId: string;
  child: ChildProcess;
  pid: number;
  logPath: string;
  stopping: boolean;
  exited: Promise<number | null>;
  exitCode?: number | null;
}

export interface SpawnResult {
  pid: number;
  logPath: string;
}

const DEFAULT_STOP_TIMEOUT_MS = 5000;
const DEFAULT_HEALTH_TIMEOUT_MS = 10_000;
/** the only variables of the service's own environment a runtime service inherits (no service secrets) */
const INHERITED_ENV = ['PATH', 'HOME', 'LANG', 'LC_ALL', 'TZ', 'TMPDIR', 'USER', 'SHELL', 'NODE_OPTIONS'];

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Whether `p` settles within `ms`. The timer is cleared when `p` wins: a pending one (a sleep in a
 * race) kept the process alive for the whole grace period after the service had stopped, and made
 * a test worker overstay its end (jest's "worker failed to exit gracefully").
 */
async function settlesWithin(p: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([p.then(() => true), new Promise<boolean>((r) => (timer = setTimeout(() => r(false), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    try {
      process.kill(pid, signal);
    } catch {
      /* already gone */
    }
  }
}

/**
 * Runs workspace runtime services as supervised child processes of this instance: no shell, in
 * the workspace cwd, each in its own process group (so a stop reaches its children too), output
 * to a log file under the data directory. Stop is SIGTERM to the group, then SIGKILL after the
 * grace period. Every process is stopped when the service shuts down; the desired state stays in
 * the database so the next start-up reconciles it.
 */
@Injectable()
export class RuntimeSupervisor implements OnApplicationShutdown {
  private readonly logger = new Logger('RuntimeSupervisor');
  private readonly processes = new Map<string, Supervised>();
  /**
   * Which instance owns a process. An explicitly named instance (SERVICE_INSTANCE_ID) keeps its
   * name; the default name changes with every process id, so then host plus data directory
   * identify the instance across restarts.
   */
  readonly ownerId: string;

  constructor(
    private readonly config: AppConfig,
    private readonly workspaces: WorkspacesRepository,
    private readonly identities: AgentIdentities,
  ) {
    const defaultId = `${os.hostname()}-${process.pid}`;
    this.ownerId = config.instanceId === defaultId ? `${os.hostname()}:${config.dataDir}` : config.instanceId;
  }

  running(workspaceId: string): SpawnResult | undefined {
    const p = this.processes.get(workspaceId);
    return p && !p.stopping ? { pid: p.pid, logPath: p.logPath } : undefined;
  }

  /** Starts the configured command; resolves once the process exists (rejects if it cannot be spawned). */
  async spawn(workspaceId: string, operationId: string, cfg: RuntimeConfig, cwd: string, companyId: string): Promise<SpawnResult> {
    const dir = path.join(this.config.dataDir, 'runtime-services', workspaceId);
    fs.mkdirSync(dir, { recursive: true });
    const logPath = path.join(dir, `${operationId}.log`);
    const fd = fs.openSync(logPath, 'a', 0o600);
    let child: ChildProcess;
    try {
      // as root, a workspace's service runs as its company's services identity (never as an agent's or root)
      const runAs = this.identities.forCompanyServices(companyId);
      const denied = inaccessibleReason(cwd, runAs);
      if (denied) throw new Error(`working directory ${cwd}: ${denied}`);
      const prepared = prepareAgentSpawn(
        { identity: runAs, root: this.config.agentIdentity.root, namespaces: this.config.agentIdentity.namespaces },
        cfg.command,
        cfg.args ?? [],
        { cwd, env: this.environment(cfg), detached: true, shell: false, stdio: ['ignore', fd, fd] as ['ignore', number, number] },
      );
      child = spawn(prepared.command, prepared.args, prepared.options);
      await new Promise<void>((resolve, reject) => {
        child.once('spawn', resolve);
        child.once('error', reject);
      });
    } finally {
      fs.closeSync(fd);
    }
    const pid = child.pid!;
    const entry: Supervised = {
      workspaceId,
      child,
      pid,
      logPath,
      stopping: false,
      exited: new Promise((resolve) => child.once('exit', (code) => resolve(code))),
    };
    child.once('exit', (code, signal) => {
      entry.exitCode = code;
      if (this.processes.get(workspaceId) === entry) this.processes.delete(workspaceId);
      if (!entry.stopping) void this.recordUnexpectedExit(workspaceId, pid, code, signal);
    });
    this.processes.set(workspaceId, entry);
    return { pid, logPath };
  }

  /**
   * Polls the health check until it answers 2xx/3xx; returns an error message, or null when healthy
   * (or none configured). Only the workspace's own service is asked: `http://127.0.0.1:<port><path>`
   * (a `url` must name that port on loopback), and only once the socket listening on that port is
   * held by the workspace's own process (the kernel's socket table, then its file descriptors):
   * another service on the port, another instance's API say, is never contacted, so the result
   * tells a tenant nothing about the host's ports and routes.
   */
  async waitHealthy(workspaceId: string, cfg: RuntimeConfig): Promise<string | null> {
    const hc = cfg.healthCheck;
    if (!hc || (!hc.url && !hc.path)) return null;
    if (!cfg.port) return 'the health check needs runtimeConfig.port';
    const path = healthCheckPath(hc, cfg.port);
    if (path === null) return `health check refused: only http://127.0.0.1:${cfg.port}/… (the workspace's own port) is polled`;
    const url = `http://127.0.0.1:${cfg.port}${path}`;
    const deadline = Date.now() + (hc.timeoutMs ?? DEFAULT_HEALTH_TIMEOUT_MS);
    const interval = hc.intervalMs ?? 100;
    let last = 'no answer';
    while (Date.now() < deadline) {
      const entry = this.processes.get(workspaceId);
      if (!entry || entry.exitCode !== undefined)
        return `process exited before it became healthy (exit code ${entry?.exitCode ?? 'unknown'})`;
      if (!(await this.servesPort(entry.pid, cfg.port))) {
        last = `port ${cfg.port} is not served by the workspace's process`;
        await sleep(interval);
        continue;
      }
      try {
        const res = await fetch(url, {
          signal: AbortSignal.timeout(Math.min(2000, Math.max(100, deadline - Date.now()))),
          redirect: 'manual',
        });
        await res.arrayBuffer().catch(() => undefined);
        if (res.status < 400) return null;
        last = `HTTP ${res.status}`;
      } catch (err) {
        last = (err as Error).message;
      }
      await sleep(interval);
    }
    return `health check ${url} did not pass within ${hc.timeoutMs ?? DEFAULT_HEALTH_TIMEOUT_MS} ms (${last})`;
  }

  /** Whether the socket listening on `port` belongs to the process tree of the supervised `pid`. */
  private async servesPort(pid: number, port: number): Promise<boolean> {
    const listeners = await listenersOn(port);
    return listeners.length > 0 && treeHoldsSocket(pid, new Set(listeners.map((l) => l.inode)));
  }

  /** SIGTERM to the process group, SIGKILL after the grace period. Returns whether a process of this instance was stopped. */
  async stop(workspaceId: string, graceMs = DEFAULT_STOP_TIMEOUT_MS): Promise<boolean> {
    const entry = this.processes.get(workspaceId);
    if (!entry) return false;
    entry.stopping = true;
    signalGroup(entry.pid, 'SIGTERM');
    const exited = await settlesWithin(entry.exited, graceMs);
    if (!exited) {
      signalGroup(entry.pid, 'SIGKILL');
      await settlesWithin(entry.exited, 5000);
    } else {
      // the leader is gone; make sure nothing of its group lingers
      signalGroup(entry.pid, 'SIGKILL');
    }
    if (this.processes.get(workspaceId) === entry) this.processes.delete(workspaceId);
    return true;
  }

  /**
   * A process recorded by an earlier run of this instance (crash: it outlived its parent). It is
   * only signalled when its command line still matches, so a reused pid is left alone.
   */
  async stopOrphan(pid: number, cfg: RuntimeConfig | null, graceMs = DEFAULT_STOP_TIMEOUT_MS): Promise<void> {
    if (!isAlive(pid) || !cfg || !this.commandMatches(pid, cfg.command)) return;
    signalGroup(pid, 'SIGTERM');
    const deadline = Date.now() + graceMs;
    while (Date.now() < deadline && isAlive(pid)) await sleep(50);
    if (isAlive(pid)) signalGroup(pid, 'SIGKILL');
  }

  async onApplicationShutdown(): Promise<void> {
    const ids = [...this.processes.keys()];
    if (!ids.length) return;
    await Promise.all(ids.map((id) => this.stop(id)));
    // the desired state stays: start-up reconciles it; the processes themselves are gone
    await this.workspaces
      .releaseRuntimes(ids, this.ownerId)
      .catch((err: Error) => this.logger.warn(`could not record stopped runtime services: ${err.message}`));
  }

  private commandMatches(pid: number, command: string): boolean {
    try {
      const cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      return cmdline.some((part) => part === command || path.basename(part) === path.basename(command));
    } catch {
      return false;
    }
  }

  private environment(cfg: RuntimeConfig): NodeJS.ProcessEnv {
    const env: NodeJS.ProcessEnv = {};
    for (const name of INHERITED_ENV) if (process.env[name] !== undefined) env[name] = process.env[name];
    if (cfg.port) env.PORT = String(cfg.port);
    return { ...env, ...(cfg.env ?? {}) };
  }

  private async recordUnexpectedExit(workspaceId: string, pid: number, code: number | null, signal: NodeJS.Signals | null): Promise<void> {
    this.logger.warn(`runtime service of workspace ${workspaceId} (pid ${pid}) exited unexpectedly (code ${code}, signal ${signal})`);
    // the exit callback may fire inside the request that spawned it: write outside its transaction
    await this.workspaces
      .recordUnexpectedExit(workspaceId, pid, code)
      .catch((err: Error) => this.logger.warn(`could not record the exit: ${err.message}`));
  }
}
