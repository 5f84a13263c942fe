import { ChildProcess, spawn, SpawnOptions } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createInterface } from 'node:readline';
import { JSONRPCClient, JSONRPCErrorException, JSONRPCServer, JSONRPCServerAndClient } from 'json-rpc-2.0';
import { namespacesAvailable, prepareAgentSpawn } from '../../common/process/agent-sandbox';
import { WorkerIdentity, workerSpawnOptions } from '../../common/process/worker-identity';
import type { PluginCapability, PluginManifest } from './manifest';

/** One log line of a plugin (kept in memory per instance, newest last). */
export interface PluginLogLine {
  at: string;
  level: 'info' | 'warn' | 'error' | 'debug';
  source: 'worker' | 'stderr' | 'supervisor';
  message: string;
}

export type HostMethod = (params: Record<string, unknown>) => Promise<unknown> | unknown;
/** Host API methods a worker may call, with the capability each needs (null = always allowed). */
export type HostApi = Record<string, { capability: PluginCapability | null; handler: HostMethod }>;

export const CAPABILITY_DENIED = -32001;
/** http.fetch to a destination the outbound guard refuses (data: `{ reason }`) */
export const URL_NOT_ALLOWED = -32002;

/**
 * One worker process: `node <entry>` speaking JSON-RPC 2.0 over stdio, one JSON message per line
 * (stdout carries only protocol messages; anything on stderr is kept as log lines).
 */
export class PluginWorker {
  readonly rpc: JSONRPCServerAndClient;
  readonly child: ChildProcess;
  readonly startedAt = new Date();
  exited = false;
  /** started inside a PID namespace of its own (the spawned process is the sandbox, not the worker) */
  private sandboxed = false;
  private pending = 0;
  private drainWaiters: (() => void)[] = [];

  constructor(
    readonly manifest: PluginManifest,
    installPath: string,
    identity: WorkerIdentity | null,
    host: HostApi,
    private readonly log: (line: Omit<PluginLogLine, 'at'>) => void,
    onExit: (code: number | null, signal: NodeJS.Signals | null) => void,
    sandbox: { root: string; namespaces: 'auto' | 'off' } | null = null,
  ) {
    // a host method that fails answers the worker with the error and leaves a line in the plugin's
    // log (the library's default would print it on the service's console, outside its JSON log)
    const server = new JSONRPCServer({
      errorListener: (message: string, err: unknown) =>
        this.log({
          level: 'warn',
          source: 'supervisor',
          message: `${message} ${err instanceof Error ? err.message : String(err)}`.slice(0, 2000),
        }),
    });
    for (const [name, m] of Object.entries(host)) {
      server.addMethod(name, async (params: unknown) => {
        if (m.capability && !manifest.capabilities.includes(m.capability)) {
          throw new JSONRPCErrorException(`capability ${m.capability} not granted by the manifest`, CAPABILITY_DENIED);
        }
        return m.handler((params ?? {}) as Record<string, unknown>);
      });
    }
    this.rpc = new JSONRPCServerAndClient(
      server,
      new JSONRPCClient((req) => {
        if (this.exited || !this.child.stdin?.writable) return Promise.reject(new Error('worker not running'));
        this.child.stdin.write(JSON.stringify(req) + '\n');
        return Promise.resolve();
      }),
    );
    // its own uid (not an agent's, not root), a clean environment: nothing of the service's
    const entry = [path.join(installPath, manifest.entry)];
    const options: SpawnOptions = {
      cwd: installPath,
      stdio: ['pipe', 'pipe', 'pipe'],
      env: {
        PATH: process.env.PATH,
        NODE_ENV: process.env.NODE_ENV ?? 'production',
        PLUGIN_KEY: manifest.key,
        PLUGIN_PROTOCOL_VERSION: String(manifest.protocolVersion),
      },
    };
    if (identity && sandbox && namespacesAvailable(sandbox.namespaces)) {
      // as root: a PID namespace of its own as well (the agents' sandbox), so that it sees no other
      // process: not the agents', their command lines or their environment
      const p = prepareAgentSpawn({ identity, root: sandbox.root, namespaces: sandbox.namespaces }, process.execPath, entry, options);
      this.child = spawn(p.command, p.args, p.options);
      this.sandboxed = true;
    } else this.child = spawn(process.execPath, entry, workerSpawnOptions(identity, options));
    this.child.stdin?.on('error', () => undefined);
    createInterface({ input: this.child.stdout! }).on('line', (line) => {
      if (!line.trim()) return;
      let msg: unknown;
      try {
        msg = JSON.parse(line);
      } catch {
        this.log({ level: 'warn', source: 'worker', message: `non-protocol output: ${line.slice(0, 500)}` });
        return;
      }
      void this.rpc.receiveAndSend(msg as never).catch(() => undefined);
    });
    createInterface({ input: this.child.stderr! }).on('line', (line) =>
      this.log({ level: 'info', source: 'stderr', message: line.slice(0, 2000) }),
    );
    this.child.on('error', (err) => this.log({ level: 'error', source: 'supervisor', message: `spawn failed: ${err.message}` }));
    this.child.on('exit', (exitCode, exitSignal) => {
      // in a PID namespace the sandbox reports a worker killed by signal n as exit code 128+n
      const byName = this.sandboxed && exitSignal === null && exitCode !== null && exitCode > 128 ? signalName(exitCode - 128) : null;
      const [code, signal] = byName ? [null, byName] : [exitCode, exitSignal];
      this.exited = true;
      this.rpc.rejectAllPendingRequests(`worker exited (${signal ?? code})`);
      for (const w of this.drainWaiters.splice(0)) w();
      onExit(code, signal);
    });
  }

  /**
   * The worker's process id as the host sees it. In its PID namespace the spawned process is the
   * sandbox (unshare, then the namespace's init): the worker is the init's one child. Undefined while
   * that chain is not whole (the worker not started yet, or gone while the sandbox is still exiting):
   * the init's own pid is never reported as the worker's.
   */
  get pid(): number | undefined {
    const pid = this.child.pid;
    if (!this.sandboxed || pid === undefined) return pid;
    let cur = pid;
    for (let depth = 0; depth < 2; depth++) {
      const children = childrenOf(cur);
      if (children.length !== 1) return depth === 0 ? pid : undefined;
      cur = children[0];
    }
    return cur;
  }

  /** A request to the worker with a time limit; counted for draining. */
  async call<T>(method: string, params: unknown, timeoutMs: number): Promise<T> {
    if (this.exited) throw new Error('worker not running');
    this.pending++;
    try {
      return (await this.rpc.timeout(timeoutMs).request(method, params)) as T;
    } finally {
      if (--this.pending === 0) for (const w of this.drainWaiters.splice(0)) w();
    }
  }

  /** Graceful stop: wait for requests in flight (drain), ask it to shut down, then TERM, then KILL. */
  async stop(drainMs = 2000, termMs = 2000): Promise<void> {
    if (this.exited) return;
    const exited = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    if (this.pending > 0) await Promise.race([new Promise<void>((r) => this.drainWaiters.push(r)), sleep(drainMs)]);
    if (this.exited) return;
    this.rpc.notify('shutdown', {});
    this.child.stdin?.end();
    if (await Promise.race([exited.then(() => true), sleep(300).then(() => false)])) return;
    this.child.kill('SIGTERM');
    if (await Promise.race([exited.then(() => true), sleep(termMs).then(() => false)])) return;
    this.child.kill('SIGKILL');
    await Promise.race([exited, sleep(1000)]);
  }
}

function signalName(n: number): NodeJS.Signals | null {
  const found = Object.entries(os.constants.signals).find(([, v]) => v === n);
  return found ? (found[0] as NodeJS.Signals) : null;
}

/** The child processes of `pid` (Linux: /proc/<pid>/task/<pid>/children). */
function childrenOf(pid: number): number[] {
  try {
    return fs.readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms).unref());
