import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import type { ProcessIdentity } from '../../../common/process/agent-identities';
import { prepareAgentSpawn, type SandboxSpec } from '../../../common/process/agent-sandbox';
import { findCommand } from '../child-process-run';

/** What the environment test needs to know of a CLI. */
export interface RuntimeProbe {
  type: string;
  defaultCommand: string;
  /** any of these variables set = credentials present */
  credentialEnv: string[];
  /** or any of these files under the CLI's HOME (a stored login) */
  credentialFiles: string[];
  /** the variable that points the CLI at another endpoint, and the endpoint otherwise */
  baseUrlEnv: string | null;
  defaultBaseUrl: string;
  /** a one-turn test prompt through the CLI itself (the board UI's form needs it answered before it goes on) */
  hello?: HelloProbe;
}

/** How to ask the CLI one test question: its arguments (the prompt goes to stdin), extra env, and how to tell it answered. */
export interface HelloProbe {
  args: string[];
  env?: Record<string, string>;
  /** did the CLI's stdout report an answer? null = yes, else what went wrong */
  problem: (stdout: string) => string | null;
}

export const HELLO_PROMPT = 'Respond with the single word: hello';
const HELLO_TIMEOUT_MS = 30_000;

export type CheckLevel = 'info' | 'warn' | 'error';

export interface EnvironmentCheckResult {
  code: string;
  level: CheckLevel;
  message: string;
  detail?: string;
  hint?: string;
}

/** The board UI's environment test result. */
export interface RuntimeEnvironmentReport {
  adapterType: string;
  testedAt: string;
  status: 'pass' | 'warn' | 'fail';
  checks: EnvironmentCheckResult[];
}

const envOf = (config: Record<string, unknown>): Record<string, unknown> =>
  config.env && typeof config.env === 'object' && !Array.isArray(config.env) ? (config.env as Record<string, unknown>) : {};

/** An env value is set: an inline non-empty string or a secret reference (resolved at launch). */
const isSet = (v: unknown): boolean => (typeof v === 'string' ? v.trim().length > 0 : !!v && typeof v === 'object');

/** `<command> --version`, as the agents' user (never as the service's own, possibly root, user). */
function version(command: string, sandbox: SandboxSpec | null): Promise<string | null> {
  return new Promise((resolve) => {
    const runAs: ProcessIdentity | null = sandbox?.identity ?? null;
    let p;
    try {
      p = prepareAgentSpawn(sandbox ?? { identity: null, root: '', namespaces: 'off' }, command, ['--version'], {
        timeout: 10_000,
        env: { PATH: process.env.PATH ?? '', HOME: runAs?.home ?? os.tmpdir() },
      });
    } catch {
      resolve(null);
      return;
    }
    execFile(p.command, p.args, { ...p.options, encoding: 'utf8' }, (err, stdout) =>
      resolve(err ? null : String(stdout).trim().split('\n')[0]?.slice(0, 200) || null),
    );
  });
}

/** Can a TCP connection be opened to the endpoint's host and port (any HTTP answer would follow)? */
export function reachable(url: string, timeoutMs = 3000): Promise<string | null> {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return Promise.resolve('not a URL');
  }
  const port = Number(u.port) || (u.protocol === 'https:' ? 443 : 80);
  return new Promise((resolve) => {
    const socket = net.connect({ host: u.hostname.replace(/^\[|\]$/g, ''), port });
    const done = (problem: string | null) => {
      socket.destroy();
      resolve(problem);
    };
    socket.setTimeout(timeoutMs, () => done(`no answer within ${timeoutMs} ms`));
    socket.once('connect', () => done(null));
    socket.once('error', (e: NodeJS.ErrnoException) => done(e.code ?? e.message));
  });
}

const lastLine = (text: string): string =>
  text
    .trim()
    .split('\n')
    .filter((l) => l.trim())
    .slice(-1)[0]
    ?.slice(0, 300) ?? '';

/** Runs the CLI once with the test prompt, as the agents' user, with the test's env (secrets resolved); null = it answered. */
function helloProbe(command: string, probe: HelloProbe, env: Record<string, string>, sandbox: SandboxSpec | null): Promise<string | null> {
  const runAs: ProcessIdentity | null = sandbox?.identity ?? null;
  const secrets = Object.values(env).filter((v) => v.length >= 8);
  const scrub = (t: string) => secrets.reduce((acc, v) => acc.split(v).join('***'), t);
  return new Promise((resolve) => {
    let p;
    try {
      p = prepareAgentSpawn(sandbox ?? { identity: null, root: '', namespaces: 'off' }, command, probe.args, {
        timeout: HELLO_TIMEOUT_MS,
        env: { PATH: process.env.PATH ?? '', HOME: runAs?.home ?? os.tmpdir(), ...env, ...probe.env },
      });
    } catch (e) {
      resolve((e as Error).message);
      return;
    }
    const child = execFile(p.command, p.args, { ...p.options, encoding: 'utf8', maxBuffer: 4 * 1024 * 1024 }, (err, stdout, stderr) => {
      const problem = probe.problem(String(stdout));
      if (!problem) resolve(null);
      else resolve(scrub(lastLine(String(stderr)) || (err ? err.message : problem)));
    });
    child.stdin?.end(HELLO_PROMPT);
  });
}

/**
 * The environment test of a coding-agent CLI: its binary (found, version), credentials (a key in the
 * agent's env or a stored login in the CLI's home), and whether its model endpoint accepts connections.
 * `extraEnv` are values given only for the test (never stored).
 */
export async function environmentReport(
  spec: RuntimeProbe,
  config: Record<string, unknown>,
  extraEnv: Record<string, string>,
  home = process.env.HOME ?? os.homedir(),
  opts: {
    skipEndpoint?: boolean;
    sandbox?: SandboxSpec | null;
    /** the env with secret references resolved: given, the CLI answers a test prompt when everything else passed */
    resolvedEnv?: Record<string, string>;
  } = {},
): Promise<RuntimeEnvironmentReport> {
  const checks: EnvironmentCheckResult[] = [];
  const env = { ...envOf(config), ...extraEnv };
  const command = typeof config.command === 'string' && config.command ? config.command : spec.defaultCommand;
  const found = findCommand(command, typeof env.PATH === 'string' ? env.PATH : process.env.PATH);
  if (!found) {
    checks.push({
      code: 'adapter_command_not_found',
      level: 'error',
      message: `${command} is not installed or not on PATH`,
      hint: `install the CLI on the service host or set adapterConfig.command to its path`,
    });
  } else {
    const v = await version(found, opts.sandbox ?? null);
    checks.push({
      code: 'adapter_command_found',
      level: v ? 'info' : 'warn',
      message: v ? `${command} ${v}` : `${command} found but --version failed`,
      detail: found,
    });
  }
  const key = spec.credentialEnv.find((k) => isSet(env[k]));
  const file = spec.credentialFiles.find((f) => fs.existsSync(path.join(home, f)));
  if (key) checks.push({ code: 'adapter_auth_present', level: 'info', message: `credentials from ${key}` });
  else if (file) checks.push({ code: 'adapter_auth_present', level: 'info', message: `stored login (${file})` });
  else
    checks.push({
      code: 'adapter_auth_missing',
      level: 'error',
      message: 'no credentials',
      hint: `set ${spec.credentialEnv.join(' or ')} in the agent's env (a secret reference is best)`,
    });
  const configured = spec.baseUrlEnv ? env[spec.baseUrlEnv] : undefined;
  const endpoint = typeof configured === 'string' && configured.trim() ? configured.trim() : spec.defaultBaseUrl;
  const problem = opts.skipEndpoint ? null : await reachable(endpoint);
  if (!opts.skipEndpoint)
    checks.push(
      problem
        ? { code: 'adapter_endpoint_unreachable', level: 'error', message: `${endpoint} is not reachable`, detail: problem }
        : { code: 'adapter_endpoint_reachable', level: 'info', message: `${endpoint} accepts connections` },
    );
  if (spec.hello && opts.resolvedEnv && found && !checks.some((c) => c.level === 'error')) {
    const problem = await helloProbe(found, spec.hello, opts.resolvedEnv, opts.sandbox ?? null);
    checks.push(
      problem
        ? { code: 'adapter_hello_probe_failed', level: 'error', message: `${command} did not answer a test prompt`, detail: problem }
        : { code: 'adapter_hello_probe_passed', level: 'info', message: `${command} answered a test prompt` },
    );
  }
  const status = checks.some((c) => c.level === 'error') ? 'fail' : checks.some((c) => c.level === 'warn') ? 'warn' : 'pass';
  return { adapterType: spec.type, testedAt: new Date().toISOString(), status, checks };
}
