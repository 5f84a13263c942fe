import * as fs from 'node:fs';
import * as path from 'node:path';
import { str, strArray } from '../adapter.types';
import { count, type RunMeter } from './run-meter';
import {
  CodingCliRuntime,
  jsonLine,
  obj,
  deliverSkills,
  type CliSpec,
  type PreparedRun,
  type RuntimeFailure,
  type StreamParser,
} from './coding-cli.runtime';
import type { TokenCounts } from './model-prices';
import { claudeMcpAllowedTools, claudeMcpArgs, claudeMcpDisallowedTools } from './mcp-config';

const PERMISSION_MODES = ['acceptEdits', 'auto', 'bypassPermissions', 'default', 'dontAsk', 'plan'];

const CLAUDE_SPEC: CliSpec = {
  type: 'claude_local',
  label: 'Claude Code (local)',
  provider: 'anthropic',
  defaultCommand: 'claude',
  defaultModel: null,
  modelEnv: 'ANTHROPIC_MODEL',
  credentialEnv: ['ANTHROPIC_API_KEY', 'ANTHROPIC_AUTH_TOKEN', 'CLAUDE_CODE_OAUTH_TOKEN'],
  credentialFiles: ['.claude/.credentials.json'],
  baseUrlEnv: 'ANTHROPIC_BASE_URL',
  defaultBaseUrl: 'https://api.anthropic.com',
  hello: {
    args: ['-p', '--output-format', 'stream-json', '--verbose', '--max-turns', '1'],
    env: { DISABLE_TELEMETRY: '1', DISABLE_AUTOUPDATER: '1', DISABLE_ERROR_REPORTING: '1', CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1' },
    problem: (stdout) => {
      const result = stdout
        .split('\n')
        .map(jsonLine)
        .find((l) => l?.type === 'result');
      if (!result) return 'no result from the CLI';
      return result.is_error === true ? String(result.result ?? result.subtype ?? 'the CLI reported an error').slice(0, 300) : null;
    },
  },
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

const AUTH_TEXT = /not logged in|invalid api key|authentication_error|oauth token|please run \/login|credit balance is too low/i;

/**
 * Claude Code's `--output-format stream-json --verbose` stream: `system/init` (session id, model),
 * `assistant` messages (one per content block, repeating the call's usage: deduplicated by message
 * id), `system/api_retry` while the endpoint fails, and one `result` whose usage (per model in
 * `model_usage_since_last_result`, sub-agents included, with its cost) is the run's authoritative total.
 */
export class ClaudeStreamParser implements StreamParser {
  sessionId: string | null = null;
  summary: string | null = null;
  finished = false;
  failure: RuntimeFailure | null = null;
  private connectFailures = 0;

  constructor(
    private readonly meter: RunMeter,
    private readonly maxConnectRetries = 3,
    /** the CLI was given --resume: its session-level totals are cumulative */
    private readonly resumed = false,
  ) {}

  accept(line: string): void {
    const o = jsonLine(line);
    if (!o) return;
    if (typeof o.session_id === 'string' && !this.sessionId) this.sessionId = o.session_id;
    switch (o.type) {
      case 'system':
        return this.system(o);
      case 'assistant':
        return this.assistant(o);
      case 'result':
        return this.result(o);
    }
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
    if (usage && typeof m.id === 'string' && !o.parent_tool_use_id) this.meter.turn(m.id, tokens(usage));
    else if (usage && typeof m.id === 'string') this.meter.turn(`sub:${m.id}`, tokens(usage));
  }

  private result(o: Record<string, unknown>): void {
    this.finished = true;
    if (typeof o.session_id === 'string') this.sessionId = o.session_id;
    if (typeof o.result === 'string') this.summary = o.result.slice(0, 20_000);
    // Per run: `model_usage_since_last_result` (per model, sub-agents included, with its cost). On a
    // resumed session `modelUsage` and `total_cost_usd` are the whole session's (cumulative), so
    // without the per-run ledger they are used only for a fresh session; else the top-level usage
    // (this run's main loop) is priced from the table.
    const sinceLast = obj(o.model_usage_since_last_result);
    const ledger = sinceLast && Object.keys(sinceLast).length ? sinceLast : this.resumed ? null : obj(o.modelUsage);
    let totals: TokenCounts | null = null;
    let cost: number | null = null;
    let top: { model: string; cost: number } | null = null;
    if (ledger && Object.keys(ledger).length) {
      totals = { inputTokens: 0, cachedInputTokens: 0, cacheCreationInputTokens: 0, outputTokens: 0 };
      cost = 0;
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
      if (ledger !== sinceLast && typeof o.total_cost_usd === 'number') cost = o.total_cost_usd;
    } else if (obj(o.usage)) totals = tokens(obj(o.usage)!);
    if (top) this.meter.setModel(top.model);
    this.meter.final(totals, cost, typeof o.num_turns === 'number' ? o.num_turns : undefined);
    if (o.is_error === true || (typeof o.subtype === 'string' && o.subtype.startsWith('error'))) {
      const errors = strArray(o.errors).join('; ');
      const message = errors || (typeof o.result === 'string' ? o.result : '') || String(o.subtype);
      if (/no conversation found/i.test(message)) this.failure = { code: 'runtime_session_unknown', message };
      else if (AUTH_TEXT.test(message)) this.failure = { code: 'runtime_auth_failed', message };
      else if (o.subtype === 'error_max_turns') this.failure = { code: 'runtime_max_turns', message: 'the CLI reached its turn limit' };
      else this.failure ??= { code: 'runtime_error', message: message.slice(0, 1000) };
    }
  }
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
    const args = ['-p', '--output-format', 'stream-json', '--verbose'];
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
    return () => placed.forEach((p) => fs.rmSync(p, { recursive: true, force: true }));
  }

  protected settingsModel(home: string): string | null {
    try {
      const settings = JSON.parse(fs.readFileSync(path.join(home, '.claude', 'settings.json'), 'utf8')) as { model?: unknown };
      return typeof settings.model === 'string' ? settings.model : null;
    } catch {
      return null;
    }
  }

  protected parser(meter: RunMeter, run: PreparedRun, resume: string | null): StreamParser {
    const n = run.config.maxConnectRetries;
    return new ClaudeStreamParser(meter, typeof n === 'number' && n > 0 ? n : 3, !!resume);
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
