import { randomUUID } from 'node:crypto';
import type { ProcessIdentity } from '../../../common/process/agent-identities';
import type { SandboxSpec } from '../../../common/process/agent-sandbox';
import type { AdapterRunContext } from '../adapter.types';
import type { RunOutcome } from '../run.types';
import { HELLO_TIMEOUT_SEC, type HelloResult } from './runtime-environment';

/** What the environment test's prompt runs with: the form's config and env, as the run's identity would. */
export interface HelloRequest {
  /** the binary the environment test found (SERVICE_CLI_PATH, then PATH) */
  binary: string;
  /** the effective config (the type's instance config under the form's) */
  config: Record<string, unknown>;
  /** the env as the CLI would get it: inline values, secret references resolved, the test's credentials */
  env: Record<string, string>;
  /** the agent's own identity (with `agentId`), or the checks' identity; null: the service's user */
  identity: ProcessIdentity | null;
  sandbox: Omit<SandboxSpec, 'identity'>;
  companyId: string;
  agentId?: string | null;
}

/**
 * The run's config for the test prompt: the invocation the agent's runs get (model, endpoint,
 * provider settings, permission flags) without what only a real run needs (instructions, skills,
 * extra arguments, its working folder: the CLI's HOME instead), one turn, a short deadline.
 */
function probeConfig(r: HelloRequest): Record<string, unknown> {
  const c: Record<string, unknown> = { ...r.config, command: r.binary };
  for (const k of ['cwd', 'promptTemplate', 'instructions', 'instructionsFilePath', 'serviceSkillSync', 'extraArgs']) delete c[k];
  // a one-word answer needs no tools: no flag that skips permission prompts (Claude Code refuses it as root)
  return {
    ...c,
    dangerouslySkipPermissions: false,
    maxTurnsPerRun: 1,
    timeoutSec: HELLO_TIMEOUT_SEC,
    idleTimeoutSec: HELLO_TIMEOUT_SEC,
    graceSec: 2,
  };
}

/** A run context for the test prompt: no run, no wake, no token, no MCP server; what the CLI writes is kept nowhere. */
export function helloContext(r: HelloRequest, output: { stderr: string }): AdapterRunContext {
  return {
    runId: `environment-test-${randomUUID()}`,
    agentId: r.agentId ?? '',
    companyId: r.companyId,
    adapterType: '',
    config: probeConfig(r),
    configEnv: r.env,
    agent: { name: 'environment test', role: 'general', title: null, capabilities: '', metadata: {} },
    context: {
      source: 'environment_test',
      triggerDetail: null,
      reason: null,
      payload: {},
      issueId: null,
      commentId: null,
      forceFreshSession: true,
      wakeupRequestIds: [],
    },
    serviceEnv: {},
    apiUrl: '',
    runToken: '',
    resumeSessionId: null,
    runAs: r.identity,
    sandbox: r.sandbox,
    log: (stream, chunk) => {
      if (stream === 'stderr') output.stderr = (output.stderr + chunk).slice(-4000);
    },
  };
}

/** What a run's failure code means for the test prompt: in our words, and what it is about. */
const WHY: Record<string, { why: string; cause: HelloResult['cause'] }> = {
  runtime_auth_failed: { why: 'the model endpoint refused the credentials', cause: 'auth' },
  runtime_endpoint_unreachable: { why: 'the model endpoint could not be reached', cause: 'endpoint' },
  runtime_idle_timeout: { why: `no answer within ${HELLO_TIMEOUT_SEC} s`, cause: 'timeout' },
  runtime_no_result: { why: 'the CLI exited without an answer', cause: null },
};

const lastLine = (text: string): string =>
  text
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .slice(-1)[0] ?? '';

/** A plain http(s) address (no user, password or query in it): not a secret, and the user needs to see it. */
const plainUrl = (v: string): boolean => {
  try {
    const u = new URL(v);
    return /^https?:$/.test(u.protocol) && !u.username && !u.password && !u.search;
  } catch {
    return false;
  }
};

/** Masks every value of the env a CLI might echo (keys, tokens), base URLs excepted. */
function masker(env: Record<string, string>): (text: string) => string {
  const secrets = Object.values(env).filter((v) => v.length >= 8 && !plainUrl(v));
  return (text) => secrets.reduce((t, v) => t.split(v).join('***'), text);
}

/**
 * What the test prompt's outcome says: why, in our words (from the run's failure code), and what
 * the CLI said (its error, or its last word on stderr when the run's error says only how the
 * process ended), with no secret of the env in it (a key a CLI echoes is masked).
 */
export function helloResult(o: RunOutcome, env: Record<string, string>, stderr: string): HelloResult {
  const usage = o.usage && typeof o.usage.totalTokens === 'number' && o.usage.totalTokens > 0 ? o.usage : null;
  if (o.status === 'succeeded') return { problem: null, usage };
  const said = (o.errorCode === 'adapter_exit_nonzero' || o.errorCode === 'adapter_killed' ? lastLine(stderr) || o.error : o.error) ?? '';
  const known = o.status === 'timed_out' ? WHY.runtime_idle_timeout : o.errorCode ? WHY[o.errorCode] : undefined;
  const mask = masker(env);
  const problem = mask(known?.why ?? (said || `the CLI ${o.status}`)).slice(0, 300);
  const detail = said && said !== known?.why ? mask(said).slice(0, 500) : null;
  return { problem, said: detail, cause: known?.cause ?? null, usage };
}
