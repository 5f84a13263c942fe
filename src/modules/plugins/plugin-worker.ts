import { ChildProcess, spawn } from 'node:child_process';
import * as path from 'node:path';
import { createInterface } from 'node:readline';
import { JSONRPCClient, JSONRPCErrorException, JSONRPCServer, JSONRPCServerAndClient } from 'json-rpc-2.0';
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
  private pending = 0;
  private drainWaiters: (() => void)[] = [];

  constructor(
    readonly manifest: PluginManifest,
    installPath: string,
    identity: WorkerIdentity | null,
    host: HostApi,
    private readonly log: (line: Omit<PluginLogLine, 'at'>) => void,
    onExit: (code: number | null, signal: NodeJS.Signals | null) => void,
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
    this.child = spawn(
      process.execPath,
      [path.join(installPath, manifest.entry)],
      workerSpawnOptions(identity, {
        cwd: installPath,
        stdio: ['pipe', 'pipe', 'pipe'],
        env: {
          PATH: process.env.PATH,
          NODE_ENV: process.env.NODE_ENV ?? 'production',
          PLUGIN_KEY: manifest.key,
          PLUGIN_PROTOCOL_VERSION: String(manifest.protocolVersion),
        },
      }),
    );
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
    this.child.on('exit', (code, signal) => {
      this.exited = true;
      this.rpc.rejectAllPendingRequests(`worker exited (${signal ?? code})`);
      for (const w of this.drainWaiters.splice(0)) w();
      onExit(code, signal);
    });
  }

  get pid(): number | undefined {
    return this.child.pid;
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

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms).unref());
