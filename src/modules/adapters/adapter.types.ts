import type { ProcessIdentity } from '../../common/process/agent-identities';
import type { SandboxSpec } from '../../common/process/agent-sandbox';
import type { AdapterConfigSchema } from './adapter-config-schema';
import type { LogStream, RunOutcome, WakeContext, WakeDetails } from './run.types';

/** Everything an adapter needs to execute one run. */
export interface AdapterRunContext {
  runId: string;
  agentId: string;
  companyId: string;
  adapterType: string;
  /** the agent's adapterConfig, with env values already resolved (secret refs replaced) */
  config: Record<string, unknown>;
  /** resolved `config.env` values */
  configEnv: Record<string, string>;
  agent: { name: string; role: string; title: string | null; capabilities: string; metadata: Record<string, unknown> };
  context: WakeContext;
  /** the issue and comments the wake names (for the prompt); null when it names none */
  wake?: WakeDetails | null;
  /** SERVICE_* variables injected into local processes (API URL, run token, run/agent/company ids, wake context) */
  serviceEnv: Record<string, string>;
  apiUrl: string;
  runToken: string;
  /** the session id of the agent's last successful run (same adapter and issue), unless the wake forced a fresh session */
  resumeSessionId: string | null;
  /**
   * what shaped that session (model, instructions hash, adapter type, working folder), as that run
   * recorded it (`resultJson.sessionShape`); a runtime resumes only while its own shape is the same
   */
  resumeSessionShape?: Record<string, unknown> | null;
  /** that session's cumulative totals as that run recorded them (`resultJson.sessionTotals`): a CLI whose totals are per session subtracts them */
  resumeSessionTotals?: Record<string, unknown> | null;
  /** local processes run as this unprivileged user (null = the service's user: not root, or opted out) */
  runAs: ProcessIdentity | null;
  /** where identities live and whether namespaces are used (pass to runChild) */
  sandbox?: Omit<SandboxSpec, 'identity'>;
  /** a local process started, in its own process group `pgid` (recorded with the run for crash clean-up) */
  onProcessStarted?(pgid: number): void;
  /** the run's project (the wake's, or its issue's), for cost attribution */
  projectId?: string | null;
  /** the project workspace's directory, when the run has one: the CLI runtimes work there */
  workspaceCwd?: string | null;
  /** usage so far, as a runtime reads it from its stream (running totals; caps and budgets act on it) */
  onUsage?(usage: Record<string, unknown>): void;
  /** an event of the run on the live stream (`heartbeat.run.event`), e.g. why a session was not resumed */
  onEvent?(eventType: string, message: string, payload?: Record<string, unknown>): void;
  log(stream: LogStream, chunk: string): void;
}

/** A started execution: ends on its own, or when cancelled (process group killed, remote call abandoned). */
export interface AdapterRun {
  done: Promise<RunOutcome>;
  /** `graceSec` overrides the SIGTERM→SIGKILL delay (caps stop a run within seconds) */
  cancel(reason: string, graceSec?: number): void;
}

export interface EnvironmentCheck {
  name: string;
  ok: boolean;
  message: string;
}

export interface EnvironmentReport {
  ok: boolean;
  checks: EnvironmentCheck[];
}

/**
 * How skills reach the runs of an adapter type (the skills module writes them; see
 * skills/skill-delivery.ts): `ephemeral`, a fresh folder per run named by SERVICE_SKILLS_DIR and
 * removed after it; `persistent_in_cwd`, kept in `<cwd>/.service/skills` and updated before each run
 * when the agent has a `cwd` (ephemeral without one); `unsupported`, a remote that cannot receive
 * files (the assignment is recorded only).
 */
export type SkillDelivery = 'ephemeral' | 'persistent_in_cwd' | 'unsupported';

export const SKILL_DELIVERIES: readonly SkillDelivery[] = ['ephemeral', 'persistent_in_cwd', 'unsupported'];

/**
 * What an adapter type says of itself. The adapter list (`GET /api/adapters`), config validation on
 * create and patch, skills delivery and the runs' traces all read it from the executor: nothing
 * else names the types.
 */
export interface AdapterDescription {
  /** the name people know it by (`GET /api/adapters` label; the board UI's adapter list) */
  label: string;
  /** the one schema of `adapterConfig`: checked on create and patch, served to settings forms */
  configSchema: AdapterConfigSchema;
  skills: SkillDelivery;
  /** the provider its model calls go to, as OpenTelemetry's `gen_ai.system` names it; null when it makes none of its own */
  genAiSystem: string | null;
  /** config fields the service itself connects to, with their URL schemes (refused on save when the outbound policy refuses them) */
  outboundUrlFields?: ReadonlyArray<readonly [field: string, schemes: readonly string[]]>;
  /** create-time defaults (e.g. a default model, a generated device key); called on validated config */
  createDefaults?(config: Record<string, unknown>): Record<string, unknown>;
}

/**
 * The execution side of an adapter type, keyed by its type string, with its description. The
 * adapters module's registry of types is made of these descriptions (built-in executors at start,
 * external packages as they load).
 */
export interface AdapterExecutor {
  readonly type: string;
  readonly description: AdapterDescription;
  /** human-readable problems of a config; empty when valid */
  validateConfig(config: Record<string, unknown>): string[];
  start(ctx: AdapterRunContext): AdapterRun;
  testEnvironment(config: Record<string, unknown>): Promise<EnvironmentReport>;
}

// small config readers shared by the executors
export const str = (v: unknown): string | undefined => (typeof v === 'string' && v.length > 0 ? v : undefined);
export const num = (v: unknown, def: number): number => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : def);
export const strArray = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);
