import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import type { ProcessIdentity } from '../../../common/process/agent-identities';
import { prepareAgentSpawn, type SandboxSpec } from '../../../common/process/agent-sandbox';
import { refusalIn, type OutboundTarget, OutboundRefusedError } from '../../../common/net/outbound-guard';
import { cliAccessProblem, resolveCliCommand } from './cli-command';
import { providerOfOpencodeModel, type RuntimeProviders } from './model-providers';

/** What the environment test needs to know of a CLI. */
export interface RuntimeProbe extends Pick<RuntimeProviders, 'modelNamesProvider'> {
  type: string;
  defaultCommand: string;
  /** any of these variables set = credentials present */
  credentialEnv: string[];
  /** or any of these files under the CLI's HOME (a stored login) */
  credentialFiles: string[];
  /** the variable that points the CLI at another endpoint, and the endpoint otherwise */
  baseUrlEnv: string | null;
  defaultBaseUrl: string;
}

/** The environment test's prompt: one short model call through the CLI as a run makes it. */
export const HELLO_PROMPT = 'Respond with the single word: hello';
/** how long the test prompt may take (a CLI starts, calls the model once, answers) */
export const HELLO_TIMEOUT_SEC = 45;

/** How the test prompt went, and the call's usage record (what a run's would say) when it made one. */
export interface HelloResult {
  /** why the CLI did not answer, in our words (null: it answered) */
  problem: string | null;
  /** what the CLI itself said of it (its error, or its last line on stderr), when that adds something */
  said?: string | null;
  /** what the failure is about, for the hint: the credentials, the endpoint, or time */
  cause?: 'auth' | 'endpoint' | 'timeout' | null;
  usage: Record<string, unknown> | null;
}

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

/**
 * The text of an inline env value (a string, a number or boolean, or the board UI's
 * `{ type: "plain", value }`); undefined for a secret reference or anything else.
 */
export function envText(v: unknown): string | undefined {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (v && typeof v === 'object' && (v as { type?: unknown }).type === 'plain') {
    const value = (v as { value?: unknown }).value;
    return typeof value === 'string' ? value : undefined;
  }
  return undefined;
}

/** An env value is set: a non-empty inline value or a secret reference (resolved at launch). */
const isSet = (v: unknown): boolean => {
  const text = envText(v);
  if (text !== undefined) return text.trim().length > 0;
  return !!v && typeof v === 'object' && (v as { type?: unknown }).type === 'secret_ref';
};

/**
 * How long `--version` may take: a bundled CLI starts node twice (Gemini relaunches itself with a larger
 * heap), 6-10 s on a busy 2-core host; a slow start is not a broken binary (the run would wait for it too).
 */
const VERSION_TIMEOUT_MS = 30_000;

/** `<command> --version`, as the agents' user (never as the service's own, possibly root, user). */
function version(command: string, sandbox: SandboxSpec | null): Promise<string | null> {
  return new Promise((resolve) => {
    const runAs: ProcessIdentity | null = sandbox?.identity ?? null;
    let p;
    try {
      p = prepareAgentSpawn(sandbox ?? { identity: null, root: '', namespaces: 'off' }, command, ['--version'], {
        timeout: VERSION_TIMEOUT_MS,
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

/**
 * Can a TCP connection be opened to the endpoint's host and port (any HTTP answer would follow)?
 * With `outbound`, the destination policy applies first (a refused address is not probed: the
 * answer must not tell a tenant what listens on the host's private network).
 */
export function reachable(url: string, timeoutMs = 3000, outbound?: OutboundTarget): Promise<string | null> {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return Promise.resolve('not a URL');
  }
  if (outbound) {
    const refused = outbound.guard.refusalOf(url, outbound.options);
    if (refused) return Promise.reject(refused);
  }
  const port = Number(u.port) || (u.protocol === 'https:' ? 443 : 80);
  return new Promise((resolve, reject) => {
    const socket = net.connect({
      host: u.hostname.replace(/^\[|\]$/g, ''),
      port,
      ...(outbound ? { lookup: outbound.guard.lookup(outbound.options) } : {}),
    });
    const done = (problem: string | null) => {
      socket.destroy();
      resolve(problem);
    };
    socket.setTimeout(timeoutMs, () => done(`no answer within ${timeoutMs} ms`));
    socket.once('connect', () => done(null));
    socket.once('error', (e: NodeJS.ErrnoException) => {
      const refusal = refusalIn(e);
      if (refusal) {
        socket.destroy();
        reject(refusal);
      } else done(e.code ?? e.message);
    });
  });
}

/** How the environment test runs: who runs the CLI, where it is looked for, what it may reach. */
export interface EnvironmentOptions {
  skipEndpoint?: boolean;
  /** the identity that runs the CLI (the agent's own, or the checks' identity before an agent exists) */
  sandbox?: SandboxSpec | null;
  /** the env with secret references resolved (the key check reads inline values and references either way) */
  resolvedEnv?: Record<string, string>;
  /** the test prompt through the binary found: given, it runs when every other check passed */
  hello?: (binary: string) => Promise<HelloResult>;
  /** SERVICE_CLI_PATH: folders looked in before PATH for a bare command name */
  cliPath?: readonly string[];
  /** the destination policy of the endpoint probe (internal callers without it probe any endpoint) */
  outbound?: OutboundTarget;
  /** origins the operator named (SERVICE_AI_BASE_URLS): probed whatever the policy says of their address */
  trustedEndpoints?: string[];
}

/** The model endpoint the CLI would call and the variables its key may come from. */
function endpointOf(spec: RuntimeProbe, config: Record<string, unknown>, text: (k: string) => string | undefined) {
  // a model that names its provider (OpenCode's `anthropic/…`) calls that provider with its key and base URL variables
  const p = spec.modelNamesProvider ? providerOfOpencodeModel(typeof config.model === 'string' ? config.model : null) : null;
  const baseUrlEnv = p ? p.baseUrlEnv : spec.baseUrlEnv;
  const configured = baseUrlEnv ? text(baseUrlEnv)?.trim() : undefined;
  return {
    url: configured || (p ? p.defaultBaseUrl : spec.defaultBaseUrl),
    baseUrlEnv,
    credentialEnv: p ? [p.keyEnv] : spec.credentialEnv,
  };
}

/** The binary checks the run applies: found (SERVICE_CLI_PATH, then PATH), startable by the identity, answers --version. */
async function commandChecks(
  command: string,
  env: Record<string, unknown>,
  opts: EnvironmentOptions,
): Promise<{ checks: EnvironmentCheckResult[]; binary: string | null }> {
  const r = resolveCliCommand(command, opts.cliPath ?? [], envText(env.PATH) ?? process.env.PATH);
  if (!r.path)
    return {
      binary: null,
      checks: [
        {
          code: 'adapter_command_not_found',
          level: 'error',
          message: `${command} is not installed or not on PATH`,
          detail: r.searched.length ? `looked in ${r.searched.join(':')}` : undefined,
          hint: `install the CLI where agents can run it (e.g. npm install -g, into /usr/local/bin), name its folder in SERVICE_CLI_PATH, or set adapterConfig.command to its path; the service's own node_modules/.bin is not searched`,
        },
      ],
    };
  const identity = opts.sandbox?.identity ?? null;
  const denied = cliAccessProblem(r.path, identity);
  if (denied)
    return {
      binary: r.path,
      checks: [
        {
          code: 'adapter_command_not_accessible',
          level: 'error',
          message: `${r.path} cannot be run by the agents' user`,
          detail: denied,
          hint: 'agents run under uids of their own: install the CLI in a folder every user may enter and read (e.g. /usr/local/bin, /opt/<cli>), or set adapterConfig.command to such a copy',
        },
      ],
    };
  const v = await version(r.path, opts.sandbox ?? null);
  return {
    binary: r.path,
    checks: [
      v
        ? { code: 'adapter_command_found', level: 'info', message: `would run ${r.path}: ${v}`, detail: r.path }
        : {
            code: 'adapter_command_failed',
            level: 'error',
            message: `${r.path} did not answer --version${identity ? ` as ${identity.user}` : ''}`,
            detail: r.path,
            hint: 'the run would start this binary the same way: check that it runs for that user',
          },
    ],
  };
}

const originOf = (url: string): string => {
  try {
    return new URL(url).origin;
  } catch {
    return '';
  }
};

type Endpoint = ReturnType<typeof endpointOf>;

/** Where the endpoint comes from, for a hint: the form's base-URL variable, else the vendor's default. */
const endpointSource = (e: Endpoint, text: (k: string) => string | undefined): string =>
  e.baseUrlEnv && text(e.baseUrlEnv)?.trim() ? `${e.baseUrlEnv} of the env or AI connection` : 'the vendor endpoint';

async function endpointCheck(e: Endpoint, source: string, outbound: OutboundTarget | undefined): Promise<EnvironmentCheckResult> {
  const url = e.url;
  try {
    const problem = await reachable(url, 3000, outbound);
    return problem
      ? {
          code: 'adapter_endpoint_unreachable',
          level: 'error',
          message: `${url} is not reachable`,
          detail: problem,
          hint: `the CLI would call ${url} (from ${source}): check the address, or that the server is up`,
        }
      : { code: 'adapter_endpoint_reachable', level: 'info', message: `${url} accepts connections` };
  } catch (err) {
    if (!(err instanceof OutboundRefusedError)) throw err;
    return {
      code: 'adapter_endpoint_not_allowed',
      level: 'error',
      message: `${url} is not probed: ${err.message}`,
      detail: err.reason,
    };
  }
}

/** What to do about a failed test prompt, by its cause (`credentials`: where the key came from). */
function helloHint(r: HelloResult, e: Endpoint, source: string, credentials: string): string | undefined {
  if (r.cause === 'auth') return `check ${credentials}: ${e.url} refused it`;
  if (r.cause === 'endpoint') return `check ${source}: the CLI could not talk to ${e.url}`;
  if (r.cause === 'timeout') return `${e.url} accepted the connection but the CLI got no answer in time: check that it serves the model`;
  return undefined;
}

/** The test prompt's check: passed with what the call used, or failed saying why (the CLI's own words as detail). */
function helloCheck(command: string, r: HelloResult, e: Endpoint, source: string, credentials: string): EnvironmentCheckResult {
  if (r.problem) {
    const hint = helloHint(r, e, source, credentials);
    return {
      code: 'adapter_hello_probe_failed',
      level: 'error',
      message: `${command} did not answer a test prompt: ${r.problem}`,
      ...(r.said ? { detail: r.said } : {}),
      ...(hint ? { hint } : {}),
    };
  }
  const u = r.usage ?? {};
  const n = (k: string) => (typeof u[k] === 'number' ? (u[k] as number) : 0);
  const used = n('totalTokens') ? `${n('totalTokens')} tokens${typeof u.model === 'string' ? ` of ${u.model}` : ''}` : null;
  return {
    code: 'adapter_hello_probe_passed',
    level: 'info',
    message: `${command} answered a test prompt`,
    ...(used ? { detail: used } : {}),
  };
}

/**
 * The environment test of a coding-agent CLI, with the checks its run applies: the binary (found as
 * the run finds it, startable by the agent's identity, its version), credentials (a key in the
 * agent's env or a stored login in the CLI's home), whether its model endpoint (the form's base URL,
 * else the vendor's) accepts connections, and, given the resolved env, one test prompt.
 * `extraEnv` are values given only for the test (never stored).
 */
export async function environmentReport(
  spec: RuntimeProbe,
  config: Record<string, unknown>,
  extraEnv: Record<string, string>,
  home = process.env.HOME ?? os.homedir(),
  opts: EnvironmentOptions = {},
): Promise<RuntimeEnvironmentReport> {
  const env: Record<string, unknown> = { ...envOf(config), ...extraEnv };
  const text = (k: string) => opts.resolvedEnv?.[k] ?? envText(env[k]);
  const command = typeof config.command === 'string' && config.command ? config.command : spec.defaultCommand;
  const { checks, binary } = await commandChecks(command, env, opts);
  const endpoint = endpointOf(spec, config, text);
  const key = endpoint.credentialEnv.find((k) => isSet(env[k]));
  const file = spec.credentialFiles.find((f) => fs.existsSync(path.join(home, f)));
  if (key) checks.push({ code: 'adapter_auth_present', level: 'info', message: `credentials from ${key}` });
  else if (file) checks.push({ code: 'adapter_auth_present', level: 'info', message: `stored login (${file})` });
  else
    checks.push({
      code: 'adapter_auth_missing',
      level: 'error',
      message: 'no credentials',
      hint: `set ${endpoint.credentialEnv.join(' or ')} in the agent's env (a secret reference is best)`,
    });
  const source = endpointSource(endpoint, text);
  if (!opts.skipEndpoint) {
    const trusted = opts.trustedEndpoints?.includes(originOf(endpoint.url));
    checks.push(await endpointCheck(endpoint, source, trusted ? undefined : opts.outbound));
  }
  if (opts.hello && binary && !checks.some((c) => c.level === 'error'))
    checks.push(helloCheck(command, await opts.hello(binary), endpoint, source, key ? `the key in ${key}` : `the stored login (${file})`));
  const status = checks.some((c) => c.level === 'error') ? 'fail' : checks.some((c) => c.level === 'warn') ? 'warn' : 'pass';
  return { adapterType: spec.type, testedAt: new Date().toISOString(), status, checks };
}
