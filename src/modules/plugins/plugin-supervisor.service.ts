import { Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { AsyncResource } from 'node:async_hooks';
import { EventEmitter } from 'node:events';
import { AgentIdentities } from '../../common/process/agent-identities';
import { resolveWorkerIdentity, WorkerIdentity } from '../../common/process/worker-identity';
import { AppConfig } from '../../config/app-config';
import type { PluginRecord } from './plugins.repository';
import { HostApi, PluginLogLine, PluginWorker } from './plugin-worker';

const LOG_LINES = 500;
const FIRST_BACKOFF_MS = 100;
const MAX_BACKOFF_MS = 30_000;
/** a worker that ran this long before crashing restarts with the first backoff again */
const STABLE_MS = 30_000;
const HEALTH_EVERY_MS = 15_000;
const HEALTH_TIMEOUT_MS = 2_000;
const INIT_TIMEOUT_MS = 10_000;

export type WorkerState = 'stopped' | 'starting' | 'running' | 'backoff' | 'failed';

interface Slot {
  plugin: PluginRecord;
  worker: PluginWorker | null;
  ready: Promise<PluginWorker> | null;
  state: WorkerState;
  restarts: number;
  crashes: number;
  backoffMs: number;
  lastCrash: { at: string; code: number | null; signal: string | null } | null;
  lastHealth: { at: string; ok: boolean; detail?: unknown } | null;
  restartTimer: NodeJS.Timeout | null;
  wanted: boolean;
}

/** Live-stream hook: `plugin.worker.crashed` / `plugin.worker.restarted` (a live-events bus publishes them when present). */
export type WorkerEventSink = (type: 'plugin.worker.crashed' | 'plugin.worker.restarted', payload: Record<string, unknown>) => void;

/**
 * Keeps the worker processes of this instance: started on first use (lazily, so many installed
 * plugins cost nothing at service start), restarted with exponential backoff after a crash,
 * health-checked, stopped gracefully. Logs are kept per plugin in memory (the last 500 lines).
 */
@Injectable()
export class PluginSupervisor implements OnApplicationShutdown {
  private readonly logger = new Logger('PluginSupervisor');
  private readonly slots = new Map<string, Slot>();
  private readonly logs = new Map<string, PluginLogLine[]>();
  /** stream channels: `${pluginId}:${channel}` → SSE subscribers */
  readonly streams = new EventEmitter();
  /** spawns outside any request's async context (no transaction leaks into worker callbacks) */
  private readonly rootScope = new AsyncResource('plugin-supervisor');
  private readonly healthTimer: NodeJS.Timeout;
  private shuttingDown = false;
  eventSink: WorkerEventSink | null = null;
  /** builds the host API a worker of this plugin may call */
  hostApiFactory: (plugin: PluginRecord) => HostApi = () => ({});
  /** whether the plugin is still wanted (enabled in the database) when a restart is due */
  stillEnabled: (pluginId: string) => Promise<PluginRecord | null> = async () => null;
  /**
   * checks the installed code before each spawn (the recorded tree hash); answers the record to
   * start from, or throws (the plugin is then marked and not restarted until enabled again)
   */
  verifyCode: (plugin: PluginRecord) => Promise<PluginRecord> = async (p) => p;
  /** the config a worker is given (secret references resolved) */
  configFor: (plugin: PluginRecord) => Promise<Record<string, unknown>> = async (p) => p.config;

  constructor(
    private readonly config: AppConfig,
    private readonly identities: AgentIdentities,
  ) {
    this.streams.setMaxListeners(0);
    this.healthTimer = setInterval(() => void this.checkHealth(), HEALTH_EVERY_MS);
    this.healthTimer.unref();
  }

  log(pluginId: string, line: Omit<PluginLogLine, 'at'>): void {
    let buf = this.logs.get(pluginId);
    if (!buf) this.logs.set(pluginId, (buf = []));
    buf.push({ at: new Date().toISOString(), ...line });
    if (buf.length > LOG_LINES) buf.splice(0, buf.length - LOG_LINES);
  }

  /**
   * Who a plugin's worker runs as. As root: a uid of its own (from the agent identity range, its own
   * private HOME) with the plugin user's group, which alone may read the sealed code; so one plugin's
   * worker cannot signal, trace or read another's. With identities off, every worker runs as the
   * plugin user; not as root, as the service's user (null).
   */
  private workerIdentity(pluginId: string): WorkerIdentity | null {
    const shared = resolveWorkerIdentity(this.config.plugins.workerUser);
    if (!shared) return null;
    return this.identities.forPlugin(pluginId, shared.gid) ?? shared;
  }

  recentLogs(pluginId: string, limit: number): PluginLogLine[] {
    return (this.logs.get(pluginId) ?? []).slice(-limit);
  }

  /** The running worker of an enabled plugin, started if needed. */
  async ensure(plugin: PluginRecord): Promise<PluginWorker> {
    let slot = this.slots.get(plugin.id);
    if (slot && slot.plugin.version !== plugin.version) {
      await this.stop(plugin.id);
      slot = undefined;
    }
    if (!slot) {
      slot = {
        plugin,
        worker: null,
        ready: null,
        state: 'stopped',
        restarts: 0,
        crashes: 0,
        backoffMs: FIRST_BACKOFF_MS,
        lastCrash: null,
        lastHealth: null,
        restartTimer: null,
        wanted: true,
      };
      this.slots.set(plugin.id, slot);
    }
    slot.plugin = plugin;
    slot.wanted = true;
    if (slot.worker && !slot.worker.exited && slot.state === 'running') return slot.worker;
    if (slot.ready) return slot.ready;
    if (slot.restartTimer) {
      // used while backing off after a crash: the restart happens now, counted and announced as one
      clearTimeout(slot.restartTimer);
      slot.restartTimer = null;
      return this.restartNow(slot);
    }
    return this.start(slot);
  }

  private start(slot: Slot): Promise<PluginWorker> {
    slot.state = 'starting';
    const ready = this.rootScope.runInAsyncScope(async () => {
      let plugin: PluginRecord;
      try {
        plugin = slot.plugin = await this.verifyCode(slot.plugin);
      } catch (err) {
        // refused before anything ran: no restart until the plugin is enabled (or upgraded) again
        slot.wanted = false;
        slot.state = 'failed';
        throw err;
      }
      const worker = new PluginWorker(
        plugin.manifest,
        plugin.installPath,
        this.workerIdentity(plugin.id),
        this.hostApiFactory(plugin),
        (line) => this.log(plugin.id, line),
        (code, signal) => this.onExit(slot, worker, code, signal),
        { root: this.config.agentIdentity.root, namespaces: this.config.agentIdentity.namespaces },
      );
      slot.worker = worker;
      this.log(plugin.id, {
        level: 'info',
        source: 'supervisor',
        message: `worker started (pid ${worker.pid ?? '?'}, version ${plugin.version})`,
      });
      const config = await this.configFor(plugin);
      await worker.call(
        'initialize',
        { protocolVersion: plugin.protocolVersion, plugin: { key: plugin.pluginKey, version: plugin.version }, config },
        INIT_TIMEOUT_MS,
      );
      slot.state = 'running';
      return worker;
    });
    slot.ready = ready;
    ready.then(
      () => {
        if (slot.ready === ready) slot.ready = null;
      },
      (err) => {
        if (slot.ready === ready) slot.ready = null;
        this.log(slot.plugin.id, {
          level: 'error',
          source: 'supervisor',
          message: `worker failed to start: ${(err as Error).message}`,
        });
        slot.worker?.child.kill('SIGKILL');
      },
    );
    return ready;
  }

  private onExit(slot: Slot, worker: PluginWorker, code: number | null, signal: NodeJS.Signals | null): void {
    if (slot.worker !== worker) return;
    slot.worker = null;
    if (!slot.wanted || this.shuttingDown) {
      slot.state = 'stopped';
      this.log(slot.plugin.id, { level: 'info', source: 'supervisor', message: `worker stopped (${signal ?? code})` });
      return;
    }
    const ranMs = Date.now() - worker.startedAt.getTime();
    if (ranMs > STABLE_MS) slot.backoffMs = FIRST_BACKOFF_MS;
    slot.crashes++;
    slot.lastCrash = { at: new Date().toISOString(), code, signal };
    slot.state = 'backoff';
    const delay = slot.backoffMs;
    slot.backoffMs = Math.min(MAX_BACKOFF_MS, slot.backoffMs * 2);
    this.log(slot.plugin.id, {
      level: 'error',
      source: 'supervisor',
      message: `worker crashed (${signal ?? `exit ${code}`}); restarting in ${delay} ms`,
    });
    this.logger.warn(`plugin ${slot.plugin.pluginKey}: worker crashed (${signal ?? `exit ${code}`}); restarting in ${delay} ms`);
    this.eventSink?.('plugin.worker.crashed', {
      pluginId: slot.plugin.id,
      pluginKey: slot.plugin.pluginKey,
      exitCode: code,
      signal,
      restartInMs: delay,
    });
    slot.restartTimer = setTimeout(() => {
      slot.restartTimer = null;
      void this.restart(slot);
    }, delay);
    slot.restartTimer.unref();
  }

  private async restart(slot: Slot): Promise<void> {
    if (!slot.wanted || this.shuttingDown) return;
    const current = await this.stillEnabled(slot.plugin.id).catch(() => slot.plugin);
    if (!current) {
      slot.wanted = false;
      slot.state = 'stopped';
      return;
    }
    slot.plugin = current;
    await this.restartNow(slot).catch(() => undefined); // the exit handler schedules the next attempt
  }

  /** Starts a crashed plugin's worker again: counted, logged and on the live stream once it runs. */
  private restartNow(slot: Slot): Promise<PluginWorker> {
    slot.restarts++;
    const ready = this.start(slot);
    ready.then(
      () => {
        this.log(slot.plugin.id, { level: 'info', source: 'supervisor', message: `worker restarted (restart ${slot.restarts})` });
        this.eventSink?.('plugin.worker.restarted', {
          pluginId: slot.plugin.id,
          pluginKey: slot.plugin.pluginKey,
          restarts: slot.restarts,
        });
      },
      () => undefined,
    );
    return ready;
  }

  /** Graceful stop (drain, TERM, KILL); the plugin is not restarted until used again. */
  async stop(pluginId: string): Promise<void> {
    const slot = this.slots.get(pluginId);
    if (!slot) return;
    slot.wanted = false;
    if (slot.restartTimer) clearTimeout(slot.restartTimer);
    slot.restartTimer = null;
    await slot.ready?.catch(() => undefined);
    await slot.worker?.stop();
    slot.state = 'stopped';
    this.slots.delete(pluginId);
  }

  /** Config changed: tell a running worker (it is also given the config at each start). */
  notifyConfig(plugin: PluginRecord): void {
    const slot = this.slots.get(plugin.id);
    if (!slot) return;
    slot.plugin = plugin;
    const worker = slot.worker;
    if (worker && slot.state === 'running') {
      void this.rootScope
        .runInAsyncScope(() => this.configFor(plugin))
        .then(
          (config) => worker.rpc.notify('config.changed', { config }),
          () => undefined,
        );
    }
  }

  runningIds(): string[] {
    return [...this.slots.keys()];
  }

  health(pluginId: string) {
    const slot = this.slots.get(pluginId);
    if (!slot)
      return {
        state: 'stopped' as WorkerState,
        pid: null,
        startedAt: null,
        restarts: 0,
        crashes: 0,
        lastCrash: null,
        lastHealthCheck: null,
      };
    return {
      state: slot.state,
      pid: slot.state === 'running' ? (slot.worker?.pid ?? null) : null,
      startedAt: slot.worker ? slot.worker.startedAt.toISOString() : null,
      restarts: slot.restarts,
      crashes: slot.crashes,
      lastCrash: slot.lastCrash,
      lastHealthCheck: slot.lastHealth,
    };
  }

  /** Pings a running worker; a worker that does not answer is killed (and so restarted). */
  async ping(pluginId: string): Promise<{ ok: boolean; detail?: unknown }> {
    const slot = this.slots.get(pluginId);
    const worker = slot?.worker;
    if (!slot || !worker || slot.state !== 'running') return { ok: false };
    try {
      const detail = await worker.call('health', {}, HEALTH_TIMEOUT_MS);
      slot.lastHealth = { at: new Date().toISOString(), ok: true, detail };
      return { ok: true, detail };
    } catch (err) {
      slot.lastHealth = { at: new Date().toISOString(), ok: false, detail: (err as Error).message };
      if (!worker.exited) {
        this.log(pluginId, {
          level: 'error',
          source: 'supervisor',
          message: `health check failed (${(err as Error).message}); killing the worker`,
        });
        worker.child.kill('SIGKILL');
      }
      return { ok: false, detail: (err as Error).message };
    }
  }

  private async checkHealth(): Promise<void> {
    await Promise.all([...this.slots.keys()].map((id) => this.ping(id).catch(() => undefined)));
  }

  async onApplicationShutdown(): Promise<void> {
    this.shuttingDown = true;
    clearInterval(this.healthTimer);
    await Promise.all([...this.slots.keys()].map((id) => this.stop(id).catch(() => undefined)));
  }
}
