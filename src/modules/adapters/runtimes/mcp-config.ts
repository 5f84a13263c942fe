import { obj, type PreparedRun } from './coding-cli-kit';

/**
 * The service's MCP server (and the company's local tool servers) in each coding CLI's run
 * configuration, so every run has the tools without setup. The run's token never appears in a file
 * or an argument: each CLI is told to read it from the run's environment (SERVICE_API_KEY, which
 * only the agent's own processes can read), by the CLI's own variable syntax. Secrets of local
 * servers travel the same way (variables named in SERVICE_MCP_LOCAL_SERVERS, redacted from logs).
 */

/** The server's name in every CLI's configuration: Claude Code calls its tools `mcp__aos__<tool>`. */
export const MCP_SERVER_KEY = 'aos';
/** The run variable describing the run's local MCP servers (set by the tools module at launch). */
export const LOCAL_MCP_SERVERS_ENV = 'SERVICE_MCP_LOCAL_SERVERS';
/** Marks the Gemini settings entries this file manages (removed when no longer configured). */
const MANAGED = 'managed by the agent orchestration service';

/** A company tool connection run as a local command by the agent's CLI. */
export interface LocalMcpServer {
  /** the server's name in the CLI configuration (the connection's tool prefix) */
  name: string;
  command: string;
  args: string[];
  /** plain variables */
  env: Record<string, string>;
  /** variable of the server -> the run variable holding its secret value */
  secretEnv: Record<string, string>;
  /** tools a profile denies by name */
  disabledTools: string[];
}

interface McpSetup {
  url: string | null;
  locals: LocalMcpServer[];
}

function setup(run: PreparedRun): McpSetup {
  const base = run.env.SERVICE_API_URL;
  let locals: LocalMcpServer[] = [];
  try {
    const parsed: unknown = JSON.parse(run.env[LOCAL_MCP_SERVERS_ENV] ?? '[]');
    if (Array.isArray(parsed)) locals = parsed as LocalMcpServer[];
  } catch {
    locals = [];
  }
  // only runs with a run token get the service's server (an agent's own env could not name one)
  const url = base && run.env.SERVICE_API_KEY && run.env.SERVICE_RUN_ID ? `${base.replace(/\/+$/, '')}/api/mcp` : null;
  return { url, locals };
}

/** The service's server and the local ones, with `ref(variable)` the CLI's way to read a variable. */
function servers(run: PreparedRun, ref: (name: string) => string) {
  const s = setup(run);
  const headers = { Authorization: `Bearer ${ref('SERVICE_API_KEY')}`, 'X-Service-Run-Id': ref('SERVICE_RUN_ID') };
  const locals = s.locals.map((l) => ({
    ...l,
    env: { ...l.env, ...Object.fromEntries(Object.entries(l.secretEnv).map(([k, carrier]) => [k, ref(carrier)])) },
  }));
  return { url: s.url, headers, locals };
}

/**
 * Claude Code: `--mcp-config <json>` (its `${VAR}` syntax; no secret in the argument). The service's
 * tools are always loaded (`alwaysLoad`), not deferred behind Claude Code's tool search: they are
 * what every run works with, and the company tools the agent may use come with them.
 */
export function claudeMcpArgs(run: PreparedRun): string[] {
  const s = servers(run, (v) => `\${${v}}`);
  const mcpServers: Record<string, unknown> = {};
  if (s.url) mcpServers[MCP_SERVER_KEY] = { type: 'http', url: s.url, headers: s.headers, alwaysLoad: true };
  for (const l of s.locals) mcpServers[l.name] = { type: 'stdio', command: l.command, args: l.args, env: l.env };
  if (!Object.keys(mcpServers).length) return [];
  return ['--mcp-config', JSON.stringify({ mcpServers })];
}

/** Claude Code permission rules: every tool of these servers runs without a prompt (print mode cannot answer one). */
export function claudeMcpAllowedTools(run: PreparedRun): string[] {
  const s = setup(run);
  return [...(s.url ? [`mcp__${MCP_SERVER_KEY}`] : []), ...s.locals.map((l) => `mcp__${l.name}`)];
}

export function claudeMcpDisallowedTools(run: PreparedRun): string[] {
  return setup(run).locals.flatMap((l) => l.disabledTools.map((t) => `mcp__${l.name}__${t}`));
}

const toml = (v: unknown): string => JSON.stringify(v);
const tomlTable = (o: Record<string, string>): string =>
  `{${Object.entries(o)
    .map(([k, v]) => `${toml(k)}=${toml(v)}`)
    .join(',')}}`;

/**
 * Codex: `-c mcp_servers.<name>.…` overrides. The token is read from the environment by Codex
 * itself (`bearer_token_env_var`, `env_http_headers`); a local server's secret variables are
 * forwarded by name (`env_vars`) and renamed by a `sh` wrapper (Codex cannot map variable names).
 */
export function codexMcpArgs(run: PreparedRun): string[] {
  const s = setup(run);
  const out: string[] = [];
  const set = (key: string, value: string) => out.push('-c', `mcp_servers.${key}=${value}`);
  if (s.url) {
    set(`${MCP_SERVER_KEY}.url`, toml(s.url));
    set(`${MCP_SERVER_KEY}.bearer_token_env_var`, toml('SERVICE_API_KEY'));
    set(`${MCP_SERVER_KEY}.env_http_headers`, tomlTable({ 'X-Service-Run-Id': 'SERVICE_RUN_ID' }));
  }
  for (const l of s.locals) {
    const secrets = Object.entries(l.secretEnv);
    if (secrets.length) {
      const assign = secrets.map(([k, carrier]) => `${k}="$${carrier}"`).join(' ');
      set(`${l.name}.command`, toml('sh'));
      set(`${l.name}.args`, toml(['-c', `${assign} exec "$0" "$@"`, l.command, ...l.args]));
      set(`${l.name}.env_vars`, toml(secrets.map(([, carrier]) => carrier)));
    } else {
      set(`${l.name}.command`, toml(l.command));
      set(`${l.name}.args`, toml(l.args));
    }
    if (Object.keys(l.env).length) set(`${l.name}.env`, tomlTable(l.env));
    if (l.disabledTools.length) set(`${l.name}.disabled_tools`, toml(l.disabledTools));
  }
  return out;
}

/**
 * Gemini CLI: the `mcpServers` of its settings (which it reads with `$VAR` expansion), merged into
 * the agent's own; entries this function wrote before and no longer configures are removed.
 */
export function geminiMcpServers(run: PreparedRun, current: Record<string, unknown> | null): Record<string, unknown> | null {
  const s = servers(run, (v) => `$${v}`);
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(current ?? {})) if (obj(v)?.description !== MANAGED) out[k] = v;
  if (s.url) out[MCP_SERVER_KEY] = { httpUrl: s.url, headers: s.headers, trust: true, description: MANAGED };
  for (const l of s.locals)
    out[l.name] = {
      command: l.command,
      args: l.args,
      env: l.env,
      trust: true,
      description: MANAGED,
      ...(l.disabledTools.length ? { excludeTools: l.disabledTools } : {}),
    };
  return Object.keys(out).length ? out : current ? {} : null;
}

/** OpenCode: the `mcp` section (and tool switches) of the run's OPENCODE_CONFIG_CONTENT, with `{env:VAR}` references. */
export function opencodeMcpConfig(run: PreparedRun): { mcp?: Record<string, unknown>; tools?: Record<string, boolean> } {
  const s = servers(run, (v) => `{env:${v}}`);
  const mcp: Record<string, unknown> = {};
  if (s.url) mcp[MCP_SERVER_KEY] = { type: 'remote', url: s.url, headers: s.headers, enabled: true, oauth: false };
  for (const l of s.locals) mcp[l.name] = { type: 'local', command: [l.command, ...l.args], environment: l.env, enabled: true };
  const tools = Object.fromEntries(s.locals.flatMap((l) => l.disabledTools.map((t) => [`${l.name}_${t}`, false])));
  return { ...(Object.keys(mcp).length ? { mcp } : {}), ...(Object.keys(tools).length ? { tools } : {}) };
}
