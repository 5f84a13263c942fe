import type { Command } from 'commander';
import type pino from 'pino';
import { AppConfig, ConfigError, loadConfig } from '../config/app-config';
import { dataDirOf, ListeningRecord, liveListening } from '../config/listening-file';
import { createRootLogger } from '../logger';

/** A failure the CLI reports as one line (and `{ error, code }` with --json), exiting with `exitCode`. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly code = 'failed',
    readonly exitCode = 1,
  ) {
    super(message);
  }
}

/** Options every command takes (declared on the root program). */
export interface GlobalOptions {
  json?: boolean;
  url?: string;
  token?: string;
}

const DEFAULT_PORT = 3100;

const LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/**
 * What a command needs around it: the logger, how to report its result, the configuration.
 *
 * Output rules: log lines (what happens on the way, warnings) are the service's pino lines, pretty
 * in a terminal and JSON otherwise; error lines go to stderr. The command's result is text in a terminal; with `--json` it is
 * one JSON document on stdout and the log lines move to stderr, so stdout parses as JSON; neither,
 * it is one JSON log line carrying the result. A result holding a secret the operator asked for
 * (a claim link, a new token) is never a log line: it is printed as it is.
 */
export class CliContext {
  readonly log: pino.Logger;
  readonly json: boolean;
  private config?: AppConfig;

  constructor(
    readonly command: string,
    readonly globals: GlobalOptions,
    readonly env: NodeJS.ProcessEnv = process.env,
  ) {
    this.json = globals.json === true;
    const level = env.LOG_LEVEL?.trim();
    this.log = createRootLogger(level && LEVELS.includes(level) ? level : 'info', {
      fd: this.json ? 2 : 1,
      errorsToStderr: true,
    }).child({ context: command });
  }

  /** stdout is a terminal and no JSON was asked for: text results and progress bars. */
  get interactive(): boolean {
    return !this.json && process.stdout.isTTY === true;
  }

  /**
   * The service's configuration from the environment (never writes key files: the CLI must not
   * create a secrets master key the service would then use).
   */
  loadConfig(overrides: NodeJS.ProcessEnv = {}, opts: { touchDataDir?: boolean } = {}): AppConfig {
    if (this.config && Object.keys(overrides).length === 0) return this.config;
    try {
      const config = loadConfig({ ...this.env, ...overrides }, { writeKeys: false, touchDataDir: opts.touchDataDir });
      if (Object.keys(overrides).length === 0) this.config = config;
      return config;
    } catch (err) {
      if (err instanceof ConfigError) throw new CliError(`Configuration error: ${err.message}`, 'config_invalid');
      throw err;
    }
  }

  /**
   * The running service's base URL: --url, SERVICE_URL; else, unless SERVICE_PUBLIC_URL, PORT or
   * HOST say where it listens, the service of the data directory (its `listening.json`); else where
   * the configuration says it listens (from PORT and HOST alone when the configuration is invalid).
   */
  baseUrl(): string {
    return this.serviceUrl().url;
  }

  /** The base URL and what named it (`given`: --url or SERVICE_URL; `port`: PORT/HOST; `listening`: the data directory's service). */
  serviceUrl(): { url: string; from: 'given' | 'public' | 'port' | 'listening' | 'default' } {
    const given = this.globals.url ?? this.env.SERVICE_URL?.trim();
    if (given) return { url: given.replace(/\/+$/, ''), from: 'given' };
    const named = ['SERVICE_PUBLIC_URL', 'PORT', 'HOST'].some((k) => this.env[k]?.trim());
    const live = named ? null : this.liveService();
    if (live) return { url: live.url, from: 'listening' };
    const from = this.env.SERVICE_PUBLIC_URL?.trim() ? 'public' : named ? 'port' : 'default';
    try {
      const c = this.loadConfig();
      return { url: from === 'public' ? c.publicUrl : this.listensAt(c.host, c.port), from };
    } catch {
      const port = Number(this.env.PORT?.trim() || DEFAULT_PORT);
      return { url: this.listensAt(this.env.HOST?.trim() || '127.0.0.1', Number.isInteger(port) ? port : DEFAULT_PORT), from };
    }
  }

  private listensAt(host: string, port: number): string {
    const h = ['0.0.0.0', '::', '[::]'].includes(host) ? '127.0.0.1' : host;
    return `http://${h.includes(':') && !h.startsWith('[') ? `[${h}]` : h}:${port}`;
  }

  /** The data directory named by the environment (SERVICE_DATA_DIR, else ~/.service). */
  get dataDir(): string {
    return dataDirOf(this.env);
  }

  /** The running service of the data directory (from its listening.json), or null. */
  liveService(): ListeningRecord | null {
    return liveListening(this.dataDir);
  }

  /** A board credential for the API: --token, else SERVICE_TOKEN (none: the local trusted board). */
  token(): string | undefined {
    return this.globals.token ?? (this.env.SERVICE_TOKEN?.trim() || undefined);
  }

  /** Reports the command's result (see the class comment). */
  result(data: object, text: string | string[], opts: { secret?: boolean } = {}): void {
    const lines = Array.isArray(text) ? text : [text];
    if (this.json) return void process.stdout.write(JSON.stringify(data, null, 2) + '\n');
    if (this.interactive || opts.secret) return void process.stdout.write(lines.join('\n') + '\n');
    this.log.info({ result: data }, lines.join('; '));
  }
}

/** The global options of the command being run (commander keeps them on the root program). */
export function globalsOf(cmd: Command): GlobalOptions {
  return cmd.optsWithGlobals<GlobalOptions>();
}

/** Runs a command's action with its context; failures become one error line (and a JSON error with --json) and exit code 1. */
export function action<A extends unknown[]>(
  name: string,
  fn: (ctx: CliContext, ...args: A) => Promise<number | void>,
): (...args: [...A, Record<string, unknown>, Command]) => Promise<void> {
  return async (...args) => {
    const cmd = args[args.length - 1] as Command;
    const ctx = new CliContext(name, globalsOf(cmd));
    try {
      const code = await fn(ctx, ...(args.slice(0, -1) as unknown as A));
      process.exitCode = code ?? 0;
    } catch (err) {
      const e = err instanceof CliError ? err : new CliError((err as Error).message ?? String(err), 'failed');
      if (ctx.json) process.stdout.write(JSON.stringify({ error: e.message, code: e.code }, null, 2) + '\n');
      ctx.log.error({ code: e.code }, e.message);
      process.exitCode = e.exitCode;
    }
  };
}
