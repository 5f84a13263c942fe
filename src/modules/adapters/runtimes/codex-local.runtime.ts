import * as fs from 'node:fs';
import * as path from 'node:path';
import { str } from '../adapter.types';
import { CodingCliRuntime } from './coding-cli.runtime';
import {
  jsonLine,
  obj,
  deliverSkills,
  removeDelivered,
  ensureAgentDir,
  type CliSpec,
  type PreparedRun,
  type RuntimeFailure,
  type StreamParser,
} from './coding-cli-kit';
import type { TokenCounts } from './model-prices';
import { count, type RunMeter } from './run-meter';
import { codexMcpArgs } from './mcp-config';
import { SessionFileTail, sizeOf } from './session-file-tail';

const CODEX_SPEC: CliSpec = {
  type: 'codex_local',
  label: 'Codex',
  provider: 'openai',
  genAiSystem: 'openai',
  aiProviders: ['openai'],
  defaultCommand: 'codex',
  defaultModel: null,
  modelEnv: null,
  credentialEnv: ['OPENAI_API_KEY', 'CODEX_API_KEY'],
  credentialFiles: ['.codex/auth.json'],
  baseUrlEnv: 'OPENAI_BASE_URL',
  defaultBaseUrl: 'https://api.openai.com',
  models: [
    { id: 'gpt-5-codex', label: 'GPT-5 Codex' },
    { id: 'gpt-5', label: 'GPT-5' },
    { id: 'gpt-5-mini', label: 'GPT-5 mini' },
    { id: 'o4-mini', label: 'o4-mini' },
  ],
  extraSchema: {
    dangerouslyBypassApprovalsAndSandbox: {
      type: 'boolean',
      description: 'pass --dangerously-bypass-approvals-and-sandbox (default true: the agent runs unattended under its own user)',
    },
    sandbox: { type: 'string', enum: ['read-only', 'workspace-write', 'danger-full-access'], description: 'used when the bypass is off' },
    modelReasoningEffort: { type: 'string', description: 'model_reasoning_effort: minimal, low, medium, high' },
    search: { type: 'boolean' },
  },
};

/** OpenAI usage (input includes cached and cache-write tokens, output includes reasoning) → our counts. */
function tokens(u: Record<string, unknown>): TokenCounts {
  const cached = count(u.cached_input_tokens);
  const written = count(u.cache_write_input_tokens);
  return {
    inputTokens: Math.max(0, count(u.input_tokens) - cached - written),
    cachedInputTokens: cached,
    cacheCreationInputTokens: written,
    outputTokens: count(u.output_tokens),
  };
}

const minus = (a: TokenCounts, b: TokenCounts): TokenCounts => ({
  inputTokens: Math.max(0, a.inputTokens - b.inputTokens),
  cachedInputTokens: Math.max(0, a.cachedInputTokens - b.cachedInputTokens),
  cacheCreationInputTokens: Math.max(0, a.cacheCreationInputTokens - b.cacheCreationInputTokens),
  outputTokens: Math.max(0, a.outputTokens - b.outputTokens),
});

/** The rollout file of a Codex session under CODEX_HOME/sessions/YYYY/MM/DD/. */
export function codexRolloutFile(codexHome: string, threadId: string): string | null {
  const root = path.join(codexHome, 'sessions');
  const walk = (dir: string, depth: number): string | null => {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch {
      return null;
    }
    for (const e of entries.sort((a, b) => b.name.localeCompare(a.name))) {
      const p = path.join(dir, e.name);
      if (e.isDirectory() && depth < 3) {
        const hit = walk(p, depth + 1);
        if (hit) return hit;
      } else if (e.isFile() && e.name.endsWith(`-${threadId}.jsonl`)) return p;
    }
    return null;
  };
  return walk(root, 0);
}

/** The session's cumulative token usage recorded in its rollout file (zero when none). */
export function codexSessionTotals(codexHome: string, threadId: string): TokenCounts {
  const zero = { inputTokens: 0, cachedInputTokens: 0, cacheCreationInputTokens: 0, outputTokens: 0 };
  const file = codexRolloutFile(codexHome, threadId);
  if (!file) return zero;
  let last = zero;
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    if (!line.includes('"token_count"')) continue;
    try {
      const total = obj(obj(obj(JSON.parse(line))?.payload)?.info)?.total_token_usage;
      if (obj(total)) last = tokens(obj(total)!);
    } catch {
      /* a partial line */
    }
  }
  return last;
}

/**
 * `codex exec --json` events: `thread.started` (the session id), items as they complete, `error`
 * while it reconnects, and `turn.completed` with the usage of the whole session (cumulative on a
 * resumed thread: the run's part is the difference to the session's total before the run) or
 * `turn.failed`. Codex prints no usage per model call; it records one `token_count` per call in its
 * session file (the rollout), which is followed while the turn runs (a watch, each stream line and
 * the runtime's poll), so the meter and the caps move call by call. Codex reports no cost: runs are
 * priced from the model price table.
 */
export class CodexStreamParser implements StreamParser {
  sessionId: string | null = null;
  summary: string | null = null;
  finished = false;
  failure: RuntimeFailure | null = null;
  onUpdate: (() => void) | null = null;
  private reconnects = 0;
  private items = 0;
  private rollout: SessionFileTail | null = null;
  private calls = 0;
  /** a resumed session's file: what it held before this run is not this run's */
  private readonly skipBefore: { threadId: string; size: number } | null;

  constructor(
    private readonly meter: RunMeter,
    private readonly baseline: TokenCounts,
    private readonly maxConnectRetries = 3,
    /** where the session files are: their token_count records meter the run per model call */
    private readonly codexHome: string | null = null,
    resumed: string | null = null,
  ) {
    const file = codexHome && resumed ? codexRolloutFile(codexHome, resumed) : null;
    this.skipBefore = file && resumed ? { threadId: resumed, size: sizeOf(file) } : null;
  }

  /** New token_count records of the session file since the last read: one per model call (`last_token_usage`). */
  poll(): void {
    if (!this.codexHome || !this.sessionId || this.finished) return;
    if (!this.rollout) {
      const threadId = this.sessionId;
      const file = codexRolloutFile(this.codexHome, threadId);
      if (!file) return;
      const offset = this.skipBefore?.threadId === threadId ? this.skipBefore.size : 0;
      this.rollout = new SessionFileTail(file, offset, (line) => this.record(line));
      this.rollout.watch(() => {
        if (this.finished) return;
        this.rollout?.read();
        this.onUpdate?.();
      });
    }
    this.rollout.read();
  }

  close(): void {
    this.rollout?.close();
  }

  private record(line: string): void {
    if (this.finished || !line.includes('"token_count"')) return;
    const last = obj(obj(obj(obj(jsonLine(line))?.payload)?.info)?.last_token_usage);
    if (last) this.meter.turn(`call-${++this.calls}`, tokens(last));
  }

  accept(line: string): void {
    const o = jsonLine(line);
    if (!o) return;
    // a stream line after a model call (a tool starting, a message): its token_count is written by then
    if (o.type !== 'turn.completed') this.poll();
    switch (o.type) {
      case 'thread.started':
        if (typeof o.thread_id === 'string') this.sessionId = o.thread_id;
        this.poll();
        return;
      case 'item.completed': {
        const item = obj(o.item);
        if (item?.type === 'agent_message' && typeof item.text === 'string') this.summary = item.text.slice(0, 20_000);
        this.items++;
        return;
      }
      case 'turn.completed': {
        const u = obj(o.usage);
        if (u) this.meter.final(minus(tokens(u), this.baseline), null, this.items);
        this.finished = true;
        this.close();
        return;
      }
      case 'turn.failed':
        return this.fail(String(obj(o.error)?.message ?? 'the turn failed'));
      case 'error':
        return this.error(String(o.message ?? ''));
    }
  }

  private error(message: string): void {
    if (/401|unauthori[sz]ed|invalid api key|missing environment variable/i.test(message)) {
      this.failure = { code: 'runtime_auth_failed', message };
    } else if (/reconnecting|connection|disconnected|error sending request/i.test(message) && ++this.reconnects >= this.maxConnectRetries) {
      this.failure = { code: 'runtime_endpoint_unreachable', message: `the model endpoint is unreachable: ${message}` };
    }
  }

  private fail(message: string): void {
    if (/401|unauthori[sz]ed|invalid api key|missing environment variable/i.test(message))
      this.failure = { code: 'runtime_auth_failed', message };
    else if (/no rollout found|thread\/resume failed/i.test(message)) this.failure = { code: 'runtime_session_unknown', message };
    else this.failure ??= { code: 'runtime_error', message: message.slice(0, 1000) };
  }
}

const toml = (s: string) => JSON.stringify(s);

/** `codex_local`: the Codex CLI, `codex exec --json … -` with the prompt on stdin, `resume <thread>` to continue. */
export class CodexLocalRuntime extends CodingCliRuntime {
  readonly spec = CODEX_SPEC;

  private codexHome(run: PreparedRun): string {
    return run.env.CODEX_HOME ?? path.join(run.home, '.codex');
  }

  protected cliEnv(run: PreparedRun): Record<string, string> {
    return { CODEX_HOME: path.join(run.home, '.codex') };
  }

  protected args(run: PreparedRun, resume: string | null): string[] {
    const c = run.config;
    const args = ['exec', '--json', '--skip-git-repo-check', '--color', 'never'];
    if (run.model) args.push('-m', run.model);
    if (c.dangerouslyBypassApprovalsAndSandbox !== false) args.push('--dangerously-bypass-approvals-and-sandbox');
    else if (str(c.sandbox)) args.push('-s', String(c.sandbox));
    const effort = str(c.modelReasoningEffort) ?? str(c.effort);
    if (effort) args.push('-c', `model_reasoning_effort=${toml(effort)}`);
    if (run.instructions) args.push('-c', `developer_instructions=${toml(run.instructions)}`);
    // a base URL in the agent's env becomes a model provider of this invocation (Codex itself reads none)
    const baseUrl = run.env.OPENAI_BASE_URL;
    if (baseUrl) {
      const key = run.env.CODEX_API_KEY && !run.env.OPENAI_API_KEY ? 'CODEX_API_KEY' : 'OPENAI_API_KEY';
      for (const [k, v] of Object.entries({ name: 'service', base_url: baseUrl, env_key: key, wire_api: 'responses' }))
        args.push('-c', `model_providers.service.${k}=${toml(v)}`);
      args.push('-c', 'model_provider="service"');
    }
    args.push(...codexMcpArgs(run));
    if (resume) args.push('resume', resume);
    args.push('-');
    return args;
  }

  /** Skills go to `$CODEX_HOME/skills/<name>/` for the run and are removed after it. */
  protected deliver(run: PreparedRun): () => void {
    ensureAgentDir(this.codexHome(run), run.ctx);
    const placed = deliverSkills(run, path.join(this.codexHome(run), 'skills'));
    return () => removeDelivered(run, placed);
  }

  protected parser(meter: RunMeter, run: PreparedRun, resume: string | null): StreamParser {
    const baseline = resume
      ? codexSessionTotals(this.codexHome(run), resume)
      : { inputTokens: 0, cachedInputTokens: 0, cacheCreationInputTokens: 0, outputTokens: 0 };
    const n = run.config.maxConnectRetries;
    return new CodexStreamParser(meter, baseline, typeof n === 'number' && n > 0 ? n : 3, this.codexHome(run), resume);
  }

  protected unknownSession(parser: StreamParser, stderr: string): boolean {
    return parser.failure?.code === 'runtime_session_unknown' || /no rollout found|thread\/resume failed/i.test(stderr);
  }

  protected classifyStderr(stderr: string): RuntimeFailure | null {
    if (/missing environment variable/i.test(stderr))
      return { code: 'runtime_auth_failed', message: stderr.trim().split('\n').slice(-1)[0] ?? '' };
    return super.classifyStderr(stderr);
  }
}
