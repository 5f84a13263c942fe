import * as fs from 'node:fs';
import * as path from 'node:path';
import { readAsOwner } from '../../../common/fs/agent-home';
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
import { EndpointProbe, maxConnectRetries } from './endpoint-probe';
import { count, type RunMeter } from './run-meter';
import { geminiMcpServers } from './mcp-config';
import { SessionFileTail } from './session-file-tail';

const GEMINI_SPEC: CliSpec = {
  type: 'gemini_local',
  label: 'Gemini CLI',
  provider: 'google',
  genAiSystem: 'gcp.gemini',
  aiProviders: ['gemini'],
  defaultCommand: 'gemini',
  defaultModel: null,
  modelEnv: 'GEMINI_MODEL',
  credentialEnv: ['GEMINI_API_KEY', 'GOOGLE_API_KEY'],
  credentialFiles: ['.gemini/oauth_creds.json'],
  baseUrlEnv: 'GOOGLE_GEMINI_BASE_URL',
  defaultBaseUrl: 'https://generativelanguage.googleapis.com',
  models: [
    { id: 'gemini-2.5-pro', label: 'Gemini 2.5 Pro' },
    { id: 'gemini-2.5-flash', label: 'Gemini 2.5 Flash' },
    { id: 'gemini-2.5-flash-lite', label: 'Gemini 2.5 Flash-Lite' },
  ],
  extraSchema: {
    dangerouslySkipPermissions: {
      type: 'boolean',
      description: 'pass --yolo (default true: the agent runs unattended under its own user)',
    },
    approvalMode: {
      type: 'string',
      enum: ['default', 'auto_edit', 'yolo', 'plan'],
      description: 'used when dangerouslySkipPermissions is false',
    },
  },
};

/** the run's instructions, a context file of the agent's Gemini settings */
const INSTRUCTIONS_FILE = '.service-instructions.md';

const AUTH_TEXT = /api key not valid|api_key_invalid|permission denied|unauthenticated|invalid auth method|401|403/i;

/** The Gemini CLI's chat record of a session: `<gemini dir>/tmp/<project>/chats/session-<time>-<id prefix>.jsonl`. */
export function geminiChatFile(geminiDir: string, sessionId: string): string | null {
  const suffix = `-${sessionId.slice(0, 8)}.jsonl`;
  const tmp = path.join(geminiDir, 'tmp');
  let best: { file: string; mtime: number } | null = null;
  let projects: string[] = [];
  try {
    projects = fs.readdirSync(tmp);
  } catch {
    return null;
  }
  for (const p of projects) {
    const chats = path.join(tmp, p, 'chats');
    let names: string[] = [];
    try {
      names = fs.readdirSync(chats);
    } catch {
      continue;
    }
    for (const name of names) {
      if (!name.startsWith('session-') || !name.endsWith(suffix)) continue;
      const file = path.join(chats, name);
      const mtime = fs.statSync(file, { throwIfNoEntry: false })?.mtimeMs ?? 0;
      if (!best || mtime > best.mtime) best = { file, mtime };
    }
  }
  return best?.file ?? null;
}

/** One model call as the chat record keeps it: prompt (cached included), output, thoughts, tool-use prompt. */
interface ChatTokens {
  input: number;
  output: number;
  cached: number;
  thoughts: number;
  tool: number;
}

/**
 * `gemini -p '' --output-format stream-json`: `init` (session id, model), `message` deltas,
 * `tool_use` / `tool_result`, and one `result` whose `stats` are the run's usage (per run, also on a
 * resumed session; `input_tokens` includes the cached part, `input` is the uncached rest; thoughts
 * and tool-use prompt tokens are not in them). The stream has no usage before `result`; the CLI
 * records each model call's tokens in its chat record (JSON lines in the agent's `~/.gemini/tmp`)
 * as the call ends, which is followed while the run goes, so the meter and the caps move call by
 * call; the thoughts and tool-use tokens found there are added to the final stats. Gemini reports
 * no cost: runs are priced from the model price table.
 */
export class GeminiStreamParser implements StreamParser {
  sessionId: string | null = null;
  summary: string | null = null;
  finished = false;
  failure: RuntimeFailure | null = null;
  onUpdate: (() => void) | null = null;
  private text = '';
  private tools = 0;
  private readonly probe: EndpointProbe;
  private chat: SessionFileTail | null = null;
  /** this run's calls in the chat record (a resumed record holds earlier runs' calls: older than this run) */
  private readonly calls = new Map<string, ChatTokens>();
  private readonly since = Date.now();

  constructor(
    private readonly meter: RunMeter,
    /** the model endpoint: probed while the CLI is silent (it retries a dead endpoint without a word on its stream) */
    endpoint: string | null = null,
    maxFailures = 3,
    /** the agent's `~/.gemini`, where the chat records are */
    private readonly geminiDir: string | null = null,
  ) {
    this.probe = new EndpointProbe(endpoint, maxFailures);
  }

  poll(): void {
    if (!this.finished && !this.failure) {
      this.probe.poll();
      this.failure = this.probe.failure;
    }
    this.readChat();
  }

  close(): void {
    this.chat?.close();
  }

  private readChat(): void {
    if (!this.geminiDir || !this.sessionId || this.finished) return;
    if (!this.chat) {
      const file = geminiChatFile(this.geminiDir, this.sessionId);
      if (!file) return;
      this.chat = new SessionFileTail(file, 0, (line) => this.record(line));
      this.chat.watch(() => {
        if (this.finished) return;
        this.chat?.read();
        this.onUpdate?.();
      });
    }
    this.chat.read();
  }

  /** A `gemini` message of the chat record with its tokens (repeated when the message is updated: same id). */
  private record(line: string): void {
    if (!line.includes('"tokens"') || !line.includes('"gemini"')) return;
    const m = jsonLine(line);
    const t = obj(m?.tokens);
    if (!m || !t || m.type !== 'gemini' || typeof m.id !== 'string') return;
    if (Date.parse(String(m.timestamp)) < this.since) return;
    const call: ChatTokens = {
      input: count(t.input),
      output: count(t.output),
      cached: count(t.cached),
      thoughts: count(t.thoughts),
      tool: count(t.tool),
    };
    this.calls.set(m.id, call);
    this.meter.setModel(str(m.model));
    this.meter.turn(m.id, {
      inputTokens: Math.max(0, call.input - call.cached) + call.tool,
      cachedInputTokens: call.cached,
      cacheCreationInputTokens: 0,
      outputTokens: call.output + call.thoughts,
    });
  }

  accept(line: string): void {
    this.probe.activity();
    const o = jsonLine(line);
    if (!o) return;
    switch (o.type) {
      case 'init':
        if (typeof o.session_id === 'string') this.sessionId = o.session_id;
        this.meter.setModel(str(o.model));
        return this.readChat();
      case 'message':
        if (o.role === 'assistant' && typeof o.content === 'string' && this.text.length < 20_000) this.text += o.content;
        return;
      case 'tool_use':
        this.tools++;
        // the call that asked for the tool is in the chat record by now
        return this.readChat();
      case 'error':
        return this.fail(String(o.message ?? obj(o.error)?.message ?? 'error'));
      case 'result':
        return this.result(o);
    }
  }

  private result(o: Record<string, unknown>): void {
    this.readChat();
    this.finished = true;
    this.close();
    this.summary = this.text.slice(0, 20_000) || null;
    const stats = obj(o.stats);
    if (stats) {
      const cached = count(stats.cached);
      const models = obj(stats.models) ?? {};
      let top: { model: string; tokens: number } | null = null;
      for (const [model, v] of Object.entries(models)) {
        const n = count(obj(v)?.total_tokens);
        if (!top || n > top.tokens) top = { model, tokens: n };
      }
      if (top) this.meter.setModel(top.model);
      // the stats leave out thinking (billed as output) and tool-use prompt tokens: the chat record has them
      let thoughts = 0;
      let tool = 0;
      for (const c of this.calls.values()) {
        thoughts += c.thoughts;
        tool += c.tool;
      }
      this.meter.final(
        {
          inputTokens: (stats.input !== undefined ? count(stats.input) : Math.max(0, count(stats.input_tokens) - cached)) + tool,
          cachedInputTokens: cached,
          cacheCreationInputTokens: 0,
          outputTokens: count(stats.output_tokens) + thoughts,
        },
        null,
        this.tools + 1,
      );
    }
    if (o.status !== 'success') this.fail(String(obj(o.error)?.message ?? o.error ?? `status ${String(o.status)}`));
  }

  private fail(message: string): void {
    if (AUTH_TEXT.test(message)) this.failure = { code: 'runtime_auth_failed', message };
    else if (/ECONNREFUSED|fetch failed|ENOTFOUND|ETIMEDOUT|network/i.test(message))
      this.failure = { code: 'runtime_endpoint_unreachable', message };
    else this.failure ??= { code: 'runtime_error', message: message.slice(0, 1000) };
  }
}

/** `gemini_local`: the Gemini CLI, headless with the prompt on stdin, `--resume <session>` to continue. */
export class GeminiLocalRuntime extends CodingCliRuntime {
  readonly spec = GEMINI_SPEC;

  protected cliEnv(): Record<string, string> {
    return { GEMINI_CLI_TRUST_WORKSPACE: 'true', GEMINI_TELEMETRY_ENABLED: 'false' };
  }

  protected args(run: PreparedRun, resume: string | null): string[] {
    const c = run.config;
    const args = ['-p', '', '--output-format', 'stream-json'];
    if (run.model) args.push('-m', run.model);
    if (c.dangerouslySkipPermissions !== false) args.push('--yolo');
    else if (str(c.approvalMode)) args.push('--approval-mode', String(c.approvalMode));
    if (resume) args.push('--resume', resume);
    return args;
  }

  /**
   * The agent's `~/.gemini/settings.json` keeps the service's keys (no usage statistics, API-key
   * auth when a key is set, the service's instructions file among the context files; the CLI only
   * honours system settings in root-owned directories, so they cannot be per run). Per run: the
   * instructions in `~/.gemini/.service-instructions.md` and the skills in `~/.gemini/skills/`.
   */
  protected deliver(run: PreparedRun): () => void {
    const dir = path.join(run.home, '.gemini');
    ensureAgentDir(dir, run.ctx);
    const settingsFile = path.join(dir, 'settings.json');
    let settings: Record<string, unknown> = {};
    let readable = true;
    try {
      settings = JSON.parse(readAsOwner(run.ctx.runAs, settingsFile)) as Record<string, unknown>;
    } catch (err) {
      readable = (err as NodeJS.ErrnoException).code === 'ENOENT';
    }
    if (readable && obj(settings)) {
      const next = JSON.parse(JSON.stringify(settings)) as Record<string, Record<string, unknown>>;
      next.privacy = { ...obj(next.privacy), usageStatisticsEnabled: false };
      next.telemetry = { ...obj(next.telemetry), enabled: false };
      const files = obj(next.context)?.fileName;
      const names = Array.isArray(files) ? files.map(String) : typeof files === 'string' ? [files] : ['GEMINI.md', 'AGENTS.md'];
      next.context = { ...obj(next.context), fileName: [...new Set([...names, INSTRUCTIONS_FILE])] };
      const mcpServers = geminiMcpServers(run, obj(next.mcpServers));
      if (mcpServers) next.mcpServers = mcpServers;
      if (run.env.GEMINI_API_KEY || run.env.GOOGLE_API_KEY)
        next.security = { ...obj(next.security), auth: { ...obj(obj(next.security)?.auth), selectedType: 'gemini-api-key' } };
      if (JSON.stringify(next) !== JSON.stringify(settings)) writeAgentFile(settingsFile, JSON.stringify(next, null, 2), run.ctx);
    } else run.ctx.log('system', `${settingsFile} is not valid JSON: left as it is\n`);
    const instructionsFile = path.join(dir, INSTRUCTIONS_FILE);
    if (run.instructions) writeAgentFile(instructionsFile, run.instructions, run.ctx);
    const placed = deliverSkills(run, path.join(dir, 'skills'));
    // only what this run wrote (the environment test's prompt writes no instructions and leaves a live run's alone)
    return () => removeDelivered(run, [...(run.instructions ? [instructionsFile] : []), ...placed]);
  }

  protected parser(meter: RunMeter, run: PreparedRun): StreamParser {
    const endpoint = run.env.GOOGLE_GEMINI_BASE_URL || GEMINI_SPEC.defaultBaseUrl || null;
    return new GeminiStreamParser(meter, endpoint, maxConnectRetries(run.config), path.join(run.home, '.gemini'));
  }

  protected unknownSession(_parser: StreamParser, stderr: string): boolean {
    return /error resuming session|invalid session identifier/i.test(stderr);
  }

  protected classifyStderr(stderr: string): RuntimeFailure | null {
    if (/invalid auth method|api key not valid|GEMINI_API_KEY/i.test(stderr))
      return { code: 'runtime_auth_failed', message: stderr.trim().split('\n').slice(-1)[0] ?? '' };
    return super.classifyStderr(stderr);
  }
}
