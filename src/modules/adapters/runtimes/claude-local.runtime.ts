import * as path from 'node:path';
import { readNoFollow } from '../../../common/fs/agent-home';
import { str, strArray } from '../adapter.types';
import { count, type RunMeter } from './run-meter';
import { CodingCliRuntime } from './coding-cli.runtime';
import {
  jsonLine,
  obj,
  deliverSkills,
  removeDelivered,
  type CliSpec,
  type PreparedRun,
  type RuntimeFailure,
  type StreamParser,
} from './coding-cli-kit';
import type { TokenCounts } from './model-prices';
import { claudeMcpAllowedTools, claudeMcpArgs, claudeMcpDisallowedTools } from './mcp-config';

const PERMISSION_MODES = ['acceptEdits', 'auto', 'bypassPermissions', 'default', 'dontAsk', 'plan'];

const CLAUDE_SPEC: CliSpec = {
  type: 'claude_local',
  label: 'Claude Code',
  provider: 'anthropic',
  genAiSystem: 'anthropic',
  aiProviders: ['anthropic'],
  defaultCommand: 'claude',
  defaultModel: null,
  modelEnv: 'ANTHROPIC_MODEL',
  credentialEnv: ['ANTHROPIC_API_KEY', 'ANTHROPIC_AUTH_TOKEN', 'CLAUDE_CODE_OAUTH_TOKEN'],
  credentialFiles: ['.claude/.credentials.json'],
  baseUrlEnv: 'ANTHROPIC_BASE_URL',
  defaultBaseUrl: 'https://api.anthropic.com',
  models: [
    { id: 'claude-opus-4-5', label: 'Claude Opus 4.5' },
    { id: 'claude-sonnet-4-5', label: 'Claude Sonnet 4.5' },
    { id: 'claude-haiku-4-5', label: 'Claude Haiku 4.5' },
    { id: 'opus', label: 'Opus (latest)' },
    { id: 'sonnet', label: 'Sonnet (latest)' },
    { id: 'haiku', label: 'Haiku (latest)' },
  ],
  extraSchema: {
    dangerouslySkipPermissions: {
      type: 'boolean',
      description: 'pass --dangerously-skip-permissions (default true: the agent runs unattended under its own user)',
    },
    permissionMode: { type: 'string', enum: PERMISSION_MODES, description: 'used when dangerouslySkipPermissions is false' },
    effort: { type: 'string', description: 'reasoning effort (--effort): low, medium, high, xhigh, max' },
    allowedTools: { type: 'string-array' },
    disallowedTools: { type: 'string-array' },
  },
};

/** Anthropic usage object → our counts (input excludes cache reads and writes there). */
function tokens(u: Record<string, unknown>): TokenCounts {
  return {
    inputTokens: count(u.input_tokens ?? u.inputTokens),
    cachedInputTokens: count(u.cache_read_input_tokens ?? u.cacheReadInputTokens),
    cacheCreationInputTokens: count(u.cache_creation_input_tokens ?? u.cacheCreationInputTokens),
    outputTokens: count(u.output_tokens ?? u.outputTokens),
  };
}

/**
 * The bulk of a partial-message stream: a line per content block start, delta and stop, none with
 * usage. Skipped before JSON parsing (Claude Code prints `type` first, then the API `event`).
 */
const STREAM_EVENT = '{"type":"stream_event"';
const CONTENT_EVENT = `${STREAM_EVENT},"event":{"type":"content_block_`;

const AUTH_TEXT = /not logged in|invalid api key|authentication_error|oauth token|please run \/login|credit balance is too low/i;

/**
 * Claude Code's `--output-format stream-json --verbose --include-partial-messages` stream:
 * `system/init` (session id, model), `stream_event` lines wrapping the Messages API's own events
 * (`message_start` with the call's input usage, `message_delta` with its output usage, cumulative,
 * as the call ends), `assistant` messages (one per content block, with the usage of message start:
 * output 1), `system/api_retry` while the endpoint fails, and one `result` whose usage (per model in
 * `model_usage_since_last_result`, sub-agents included, with its cost) is the run's authoritative
 * total. Each call is metered by its message id (largest numbers seen), so a run cut short is
 * booked every call that ended and the input of the one in flight.
 */
export class ClaudeStreamParser implements StreamParser {
  sessionId: string | null = null;
  summary: string | null = null;
  finished = false;
  failure: RuntimeFailure | null = null;
  /** the session's cumulative totals after this run (`modelUsage`, `total_cost_usd`): the next resume's baseline */
  sessionTotals: Record<string, unknown> | null = null;
  private connectFailures = 0;

  constructor(
    private readonly meter: RunMeter,
    private readonly maxConnectRetries = 3,
    /** the CLI was given --resume: its session-level totals are cumulative */
    private readonly resumed = false,
    /** a resumed session's totals as its previous run recorded them (`sessionTotals`), when known */
    private readonly before: Record<string, unknown> | null = null,
  ) {}

  /** The partial-message events are for metering only: the log keeps the CLI's messages (the board's transcript). */
  keepInLog(line: string): boolean {
    return !line.startsWith(STREAM_EVENT);
  }

  accept(line: string): void {
    if (line.startsWith(CONTENT_EVENT)) return;
    const o = jsonLine(line);
    if (!o) return;
    if (typeof o.session_id === 'string' && !this.sessionId) this.sessionId = o.session_id;
    switch (o.type) {
      case 'stream_event':
        return this.streamEvent(o);
      case 'system':
        return this.system(o);
      case 'assistant':
        return this.assistant(o);
      case 'result':
        return this.result(o);
    }
  }

  /** A model call's usage as the API streams it: input at `message_start`, output (cumulative) at `message_delta`. */
  private streamEvent(o: Record<string, unknown>): void {
    const e = obj(o.event);
    if (!e) return;
    const message = e.type === 'message_start' ? obj(e.message) : null;
    const id = typeof o.api_message_id === 'string' ? o.api_message_id : str(message?.id);
    const usage = obj(message ? message.usage : e.type === 'message_delta' ? e.usage : null);
    if (message) this.meter.setModel(str(message.model));
    if (id && usage) this.meter.turn(o.parent_tool_use_id ? `sub:${id}` : id, tokens(usage));
  }

  private system(o: Record<string, unknown>): void {
    if (o.subtype === 'init') {
      if (typeof o.session_id === 'string') this.sessionId = o.session_id;
      this.meter.setModel(str(o.model));
      if (o.apiKeySource === 'none') this.meter.billingType = 'subscription_included';
    } else if (o.subtype === 'api_retry') {
      const status = typeof o.error_status === 'number' ? o.error_status : null;
      if (status === 401 || status === 403) {
        this.failure = { code: 'runtime_auth_failed', message: `the model endpoint refused the credentials (HTTP ${status})` };
      } else if (status === null && ++this.connectFailures >= this.maxConnectRetries) {
        this.failure = {
          code: 'runtime_endpoint_unreachable',
          message: `the model endpoint is unreachable (${this.connectFailures} failed connections)`,
        };
      }
    }
  }

  private assistant(o: Record<string, unknown>): void {
    const m = obj(o.message);
    if (!m) return;
    if (m.model === '<synthetic>') {
      const text = JSON.stringify(m.content ?? '');
      if (AUTH_TEXT.test(text)) this.failure = { code: 'runtime_auth_failed', message: textOf(m.content) || 'not logged in' };
      return;
    }
    this.meter.setModel(str(m.model));
    const usage = obj(m.usage);
    if (usage && typeof m.id === 'string') this.meter.turn(o.parent_tool_use_id ? `sub:${m.id}` : m.id, tokens(usage));
  }

  private result(o: Record<string, unknown>): void {
    this.finished = true;
    if (typeof o.session_id === 'string') this.sessionId = o.session_id;
    if (typeof o.result === 'string') this.summary = o.result.slice(0, 20_000);
    const session = obj(o.modelUsage);
    const sessionCost = typeof o.total_cost_usd === 'number' ? o.total_cost_usd : null;
    if (session) this.sessionTotals = { costUsd: sessionCost, models: session };
    const { ledger, cost } = this.runLedger(o, session, sessionCost);
    const sum = ledger ? sumLedger(ledger) : null;
    if (sum?.top) this.meter.setModel(sum.top);
    const totals = sum?.totals ?? (obj(o.usage) ? tokens(obj(o.usage)!) : null);
    this.meter.final(totals, cost ?? sum?.cost ?? null, typeof o.num_turns === 'number' ? o.num_turns : undefined);
    if (o.is_error === true || (typeof o.subtype === 'string' && o.subtype.startsWith('error'))) this.resultError(o);
  }

  /**
   * This run's ledger (per model, sub-agents included, with each model's cost): the CLI's per-run
   * `model_usage_since_last_result`; else the session's `modelUsage` of a fresh session; else, on a
   * resumed session (whose `modelUsage` and `total_cost_usd` are cumulative), the session's totals
   * less those the previous run recorded. Without any, the top-level usage (this run's main loop)
   * is priced from the table. `cost` overrides the ledger's sum (the session's total cost).
   */
  private runLedger(
    o: Record<string, unknown>,
    session: Record<string, unknown> | null,
    sessionCost: number | null,
  ): { ledger: Record<string, unknown> | null; cost: number | null } {
    const sinceLast = obj(o.model_usage_since_last_result);
    if (sinceLast && Object.keys(sinceLast).length) return { ledger: sinceLast, cost: null };
    if (!session || !Object.keys(session).length) return { ledger: null, cost: null };
    if (!this.resumed) return { ledger: session, cost: sessionCost };
    if (!this.before) return { ledger: null, cost: null };
    const before = this.before;
    return {
      ledger: ledgerMinus(session, obj(before.models) ?? {}),
      cost: sessionCost !== null && typeof before.costUsd === 'number' ? Math.max(0, sessionCost - before.costUsd) : null,
    };
  }

  private resultError(o: Record<string, unknown>): void {
    const errors = strArray(o.errors).join('; ');
    const message = errors || (typeof o.result === 'string' ? o.result : '') || String(o.subtype);
    if (/no conversation found/i.test(message)) this.failure = { code: 'runtime_session_unknown', message };
    else if (AUTH_TEXT.test(message)) this.failure = { code: 'runtime_auth_failed', message };
    else if (o.subtype === 'error_max_turns') this.failure = { code: 'runtime_max_turns', message: 'the CLI reached its turn limit' };
    else this.failure ??= { code: 'runtime_error', message: message.slice(0, 1000) };
  }
}

const LEDGER_FIELDS = ['inputTokens', 'outputTokens', 'cacheReadInputTokens', 'cacheCreationInputTokens', 'costUSD'];

/** A cumulative per-model ledger less an earlier one of the same session (the part in between). */
function ledgerMinus(now: Record<string, unknown>, before: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [model, v] of Object.entries(now)) {
    const u = obj(v) ?? {};
    const b = obj(before[model]) ?? {};
    out[model] = Object.fromEntries(
      LEDGER_FIELDS.map((k) => [
        k,
        typeof u[k] === 'number' ? Math.max(0, (u[k] as number) - (typeof b[k] === 'number' ? (b[k] as number) : 0)) : u[k],
      ]),
    );
  }
  return out;
}

/** A per-model ledger summed: its tokens, its cost (null when a model has none) and the model that cost most. */
function sumLedger(ledger: Record<string, unknown>): { totals: TokenCounts; cost: number | null; top: string | null } {
  const totals: TokenCounts = { inputTokens: 0, cachedInputTokens: 0, cacheCreationInputTokens: 0, outputTokens: 0 };
  let cost: number | null = 0;
  let top: { model: string; cost: number } | null = null;
  for (const [model, v] of Object.entries(ledger)) {
    const u = obj(v) ?? {};
    const t = tokens(u);
    totals.inputTokens += t.inputTokens;
    totals.cachedInputTokens += t.cachedInputTokens;
    totals.cacheCreationInputTokens += t.cacheCreationInputTokens;
    totals.outputTokens += t.outputTokens;
    const c = typeof u.costUSD === 'number' ? u.costUSD : null;
    cost = cost !== null && c !== null ? cost + c : null;
    if (!top || (c ?? 0) > top.cost) top = { model, cost: c ?? 0 };
  }
  return { totals, cost, top: top?.model ?? null };
}

const textOf = (content: unknown): string =>
  Array.isArray(content)
    ? content
        .map((b) => (obj(b)?.type === 'text' ? String(obj(b)?.text ?? '') : ''))
        .join('')
        .slice(0, 500)
    : '';

/** `claude_local`: Claude Code, `claude -p --output-format stream-json --verbose`, the prompt on stdin. */
export class ClaudeLocalRuntime extends CodingCliRuntime {
  readonly spec = CLAUDE_SPEC;

  protected args(run: PreparedRun, resume: string | null): string[] {
    const c = run.config;
    // partial messages: the API's message_delta (a call's output usage) reaches the stream as the call ends
    const args = ['-p', '--output-format', 'stream-json', '--verbose', '--include-partial-messages'];
    if (run.model) args.push('--model', run.model);
    if (typeof c.maxTurnsPerRun === 'number') args.push('--max-turns', String(c.maxTurnsPerRun));
    if (resume) args.push('--resume', resume);
    if (c.dangerouslySkipPermissions !== false) args.push('--dangerously-skip-permissions');
    else if (str(c.permissionMode)) args.push('--permission-mode', String(c.permissionMode));
    if (str(c.effort)) args.push('--effort', String(c.effort));
    args.push(...claudeMcpArgs(run));
    const allowed = [...strArray(c.allowedTools), ...claudeMcpAllowedTools(run)];
    const disallowed = [...strArray(c.disallowedTools), ...claudeMcpDisallowedTools(run)];
    if (allowed.length) args.push('--allowed-tools', allowed.join(','));
    if (disallowed.length) args.push('--disallowed-tools', disallowed.join(','));
    if (run.instructions) args.push('--append-system-prompt', run.instructions);
    return args;
  }

  protected cliEnv(): Record<string, string> {
    // no telemetry, error reports, update checks or other traffic besides the model endpoint
    return {
      DISABLE_TELEMETRY: '1',
      DISABLE_AUTOUPDATER: '1',
      DISABLE_ERROR_REPORTING: '1',
      DISABLE_BUG_COMMAND: '1',
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    };
  }

  /** Skills go to the agent's `~/.claude/skills/<name>/` for the run and are removed after it. */
  protected deliver(run: PreparedRun): () => void {
    const placed = deliverSkills(run, path.join(run.home, '.claude', 'skills'));
    return () => removeDelivered(run, placed);
  }

  protected settingsModel(home: string): string | null {
    try {
      // never through a link or a FIFO put in the home (common/fs/agent-home)
      const settings = JSON.parse(readNoFollow(path.join(home, '.claude', 'settings.json'))) as { model?: unknown };
      return typeof settings.model === 'string' ? settings.model : null;
    } catch {
      return null;
    }
  }

  protected parser(meter: RunMeter, run: PreparedRun, resume: string | null): StreamParser {
    const n = run.config.maxConnectRetries;
    const before = resume && resume === run.ctx.resumeSessionId ? (run.ctx.resumeSessionTotals ?? null) : null;
    return new ClaudeStreamParser(meter, typeof n === 'number' && n > 0 ? n : 3, !!resume, before);
  }

  protected unknownSession(parser: StreamParser, stderr: string): boolean {
    return parser.failure?.code === 'runtime_session_unknown' || /no conversation found with session id/i.test(stderr);
  }

  protected classifyStderr(stderr: string): RuntimeFailure | null {
    if (/cannot be used with root\/sudo privileges/i.test(stderr))
      return {
        code: 'runtime_config_rejected',
        message: '--dangerously-skip-permissions is refused as root: enable agent process isolation',
      };
    return super.classifyStderr(stderr);
  }
}
