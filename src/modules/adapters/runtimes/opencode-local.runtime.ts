import * as path from 'node:path';
import { str } from '../adapter.types';
import { CodingCliRuntime } from './coding-cli.runtime';
import {
  jsonLine,
  obj,
  deliverSkills,
  removeDelivered,
  ensureAgentDir,
  writeAgentFile,
  type CliSpec,
  type PreparedRun,
  type RuntimeFailure,
  type StreamParser,
} from './coding-cli-kit';
import type { AdapterRunContext } from '../adapter.types';
import { count, type RunMeter, type UsageSnapshot } from './run-meter';
import { EndpointProbe, maxConnectRetries } from './endpoint-probe';
import { opencodeMcpConfig } from './mcp-config';

const OPENCODE_SPEC: CliSpec = {
  type: 'opencode_local',
  label: 'OpenCode',
  provider: 'opencode',
  genAiSystem: 'opencode',
  aiProviders: ['anthropic', 'openai', 'gemini', 'openrouter'],
  modelNamesProvider: true,
  defaultCommand: 'opencode',
  defaultModel: null,
  modelEnv: null,
  credentialEnv: ['OPENAI_API_KEY', 'ANTHROPIC_API_KEY', 'OPENROUTER_API_KEY', 'GEMINI_API_KEY', 'OPENCODE_API_KEY'],
  credentialFiles: ['.local/share/opencode/auth.json'],
  baseUrlEnv: 'OPENAI_BASE_URL',
  defaultBaseUrl: 'https://api.openai.com',
  models: [
    { id: 'openai/gpt-5', label: 'OpenAI GPT-5' },
    { id: 'openai/gpt-5-mini', label: 'OpenAI GPT-5 mini' },
    { id: 'anthropic/claude-sonnet-4-5', label: 'Anthropic Claude Sonnet 4.5' },
    { id: 'google/gemini-2.5-pro', label: 'Google Gemini 2.5 Pro' },
    { id: 'openrouter/anthropic/claude-sonnet-4.5', label: 'OpenRouter Claude Sonnet 4.5' },
  ],
  extraSchema: {
    dangerouslySkipPermissions: {
      type: 'boolean',
      description: 'pass --auto (default true: the agent runs unattended under its own user)',
    },
    variant: { type: 'string', description: 'model variant / reasoning effort (--variant)' },
    agentName: { type: 'string', description: 'OpenCode agent to use (--agent)' },
    opencodeConfig: { type: 'object', description: 'extra OpenCode configuration merged into the run’s config' },
  },
};

/** the public endpoints of the providers whose base URL the agent's env may replace */
const DEFAULT_BASE_URL: Record<string, string> = {
  openai: 'https://api.openai.com',
  anthropic: 'https://api.anthropic.com',
  google: 'https://generativelanguage.googleapis.com',
};

/** provider id → the variable of the agent's env whose value becomes that provider's baseURL */
const BASE_URL_ENV: Record<string, string> = {
  openai: 'OPENAI_BASE_URL',
  anthropic: 'ANTHROPIC_BASE_URL',
  google: 'GOOGLE_GEMINI_BASE_URL',
};

/**
 * The baseURL OpenCode's provider (the AI SDK's) takes for an endpoint the agent's env names as the
 * other CLIs name it: ANTHROPIC_BASE_URL and GOOGLE_GEMINI_BASE_URL are the API's origin (Claude Code
 * and Gemini CLI add the version), the SDK's baseURL includes it (`/v1`, `/v1beta`); OPENAI_BASE_URL
 * includes `/v1` already.
 */
function sdkBaseUrl(provider: string, url: string): string {
  const version = ({ anthropic: '/v1', google: '/v1beta' } as Record<string, string>)[provider];
  const trimmed = url.replace(/\/+$/, '');
  return version && !/\/v1(beta)?$/.test(trimmed) ? `${trimmed}${version}` : url;
}

/**
 * `opencode run --format json`: `step_start`, `text`, `tool_use`, and `step_finish` per model call with
 * that call's tokens (input uncached, output without reasoning, reasoning, cache read/write) and its
 * cost (OpenCode prices from its model list); the run is done at a `step_finish` whose reason is
 * `stop`. Per run also on a continued session; the run's cost is the sum of its steps.
 */
export class OpenCodeStreamParser implements StreamParser {
  sessionId: string | null = null;
  summary: string | null = null;
  finished = false;
  failure: RuntimeFailure | null = null;
  private text = '';
  private readonly probe: EndpointProbe;

  constructor(
    private readonly meter: RunMeter,
    /** the model provider's endpoint: probed while the CLI is silent (OpenCode retries a dead endpoint without a word) */
    endpoint: string | null = null,
    maxFailures = 3,
  ) {
    this.probe = new EndpointProbe(endpoint, maxFailures);
  }

  poll(): void {
    if (this.finished || this.failure) return;
    this.probe.poll();
    this.failure = this.probe.failure;
  }

  accept(line: string): void {
    this.probe.activity();
    const o = jsonLine(line);
    if (!o) return;
    if (typeof o.sessionID === 'string') this.sessionId = o.sessionID;
    const part = obj(o.part) ?? {};
    if (o.type === 'text' && typeof part.text === 'string' && this.text.length < 20_000) {
      this.text += part.text;
      this.summary = this.text.slice(0, 20_000);
    } else if (o.type === 'step_finish') {
      const t = obj(part.tokens) ?? {};
      const cache = obj(t.cache) ?? {};
      const id = typeof part.id === 'string' ? part.id : `step-${Math.random()}`;
      this.meter.turn(
        id,
        {
          inputTokens: count(t.input),
          cachedInputTokens: count(cache.read),
          cacheCreationInputTokens: count(cache.write),
          outputTokens: count(t.output) + count(t.reasoning),
        },
        typeof part.cost === 'number' ? part.cost : null,
      );
      if (part.reason === 'stop' || part.reason === 'length') this.finished = true;
    } else if (o.type === 'error') {
      const e = obj(o.error);
      const message = String(obj(e?.data)?.message ?? e?.message ?? e?.name ?? 'error');
      if (/401|unauthori[sz]ed|api key/i.test(message)) this.failure = { code: 'runtime_auth_failed', message };
      else if (/ECONNREFUSED|connect|fetch failed|ENOTFOUND/i.test(message))
        this.failure = { code: 'runtime_endpoint_unreachable', message };
      else this.failure ??= { code: 'runtime_error', message: message.slice(0, 1000) };
    }
  }
}

/** `opencode_local`: OpenCode, `opencode run --format json -m <provider/model>`, the prompt on stdin, `--session` to continue. */
export class OpenCodeLocalRuntime extends CodingCliRuntime {
  readonly spec = OPENCODE_SPEC;

  private dir(run: PreparedRun): string {
    return path.join(run.home, '.config', 'opencode');
  }

  private instructionsFile(run: PreparedRun): string {
    return path.join(this.dir(run), `service-instructions-${run.ctx.runId.replace(/[^a-zA-Z0-9-]/g, '')}.md`);
  }

  /**
   * The run's configuration (OPENCODE_CONFIG_CONTENT): base URLs from the agent's env, instructions,
   * no sharing or updates, and no session titles. OpenCode names a new session with a call of its
   * own to the provider's small model (e.g. `gpt-5.4-nano` beside `openai/gpt-5`) that its JSON
   * stream never reports: spend no meter could book. Its `title` agent is disabled unless the
   * agent's `opencodeConfig` turns it back on (that spend is then not booked).
   */
  protected cliEnv(run: PreparedRun): Record<string, string> {
    const own = obj(run.config.opencodeConfig) ?? {};
    const agents = obj(own.agent) ?? {};
    const config: Record<string, unknown> = {
      autoupdate: false,
      share: 'disabled',
      ...own,
      agent: { ...agents, title: { disable: true, ...(obj(agents.title) ?? {}) } },
    };
    const provider: Record<string, unknown> = { ...(obj(config.provider) ?? {}) };
    for (const [id, envName] of Object.entries(BASE_URL_ENV)) {
      const url = run.env[envName];
      if (!url) continue;
      const p = obj(provider[id]) ?? {};
      provider[id] = { ...p, options: { ...(obj(p.options) ?? {}), baseURL: sdkBaseUrl(id, url) } };
    }
    if (Object.keys(provider).length) config.provider = provider;
    const mcp = opencodeMcpConfig(run);
    if (mcp.mcp) config.mcp = { ...(obj(config.mcp) ?? {}), ...mcp.mcp };
    if (mcp.tools) config.tools = { ...(obj(config.tools) ?? {}), ...mcp.tools };
    if (run.instructions)
      config.instructions = [...(Array.isArray(config.instructions) ? config.instructions : []), this.instructionsFile(run)];
    return {
      OPENCODE_CONFIG_CONTENT: JSON.stringify(config),
      OPENCODE_DISABLE_AUTOUPDATE: '1',
      OPENCODE_DISABLE_MODELS_FETCH: '1',
      OPENCODE_DISABLE_SHARE: '1',
    };
  }

  protected args(run: PreparedRun, resume: string | null): string[] {
    const c = run.config;
    const args = ['run', '--format', 'json'];
    if (run.model) args.push('-m', run.model);
    if (resume) args.push('--session', resume);
    if (c.dangerouslySkipPermissions !== false) args.push('--auto');
    if (str(c.variant) ?? str(c.effort)) args.push('--variant', String(str(c.variant) ?? str(c.effort)));
    if (str(c.agentName)) args.push('--agent', String(c.agentName));
    return args;
  }

  /** Per run: the instructions file named in the run's config and the skills in `~/.config/opencode/skills/`; removed after. */
  protected deliver(run: PreparedRun): () => void {
    ensureAgentDir(this.dir(run), run.ctx);
    const file = this.instructionsFile(run);
    if (run.instructions) writeAgentFile(file, run.instructions, run.ctx);
    const placed = deliverSkills(run, path.join(this.dir(run), 'skills'));
    return () => removeDelivered(run, [file, ...placed]);
  }

  protected parser(meter: RunMeter, run: PreparedRun): StreamParser {
    const model = run.model ?? '';
    // the model's provider is the biller (openai/…, anthropic/…); OpenCode itself is the runtime
    meter.setModel(model || null);
    const provider = model.includes('/') ? model.slice(0, model.indexOf('/')) : '';
    const envName = BASE_URL_ENV[provider];
    const endpoint = (envName && run.env[envName]) || DEFAULT_BASE_URL[provider] || null;
    return new OpenCodeStreamParser(meter, endpoint, maxConnectRetries(run.config));
  }

  /** The model's provider (`openai/…`) is provider and biller of the cost; OpenCode is the runtime. */
  protected usageRecord(s: UsageSnapshot, ctx: AdapterRunContext): Record<string, unknown> {
    const provider = s.model?.includes('/') ? s.model.slice(0, s.model.indexOf('/')) : s.provider;
    return super.usageRecord({ ...s, provider, biller: provider }, ctx);
  }

  protected unknownSession(_parser: StreamParser, stderr: string): boolean {
    return /session not found/i.test(stderr);
  }
}
