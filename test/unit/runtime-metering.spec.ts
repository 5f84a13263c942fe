import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ClaudeStreamParser } from '../../src/modules/adapters/runtimes/claude-local.runtime';
import { shapeChanges, type SessionShape } from '../../src/modules/adapters/runtimes/coding-cli-kit';
import { GeminiStreamParser } from '../../src/modules/adapters/runtimes/gemini-local.runtime';
import { RunMeter } from '../../src/modules/adapters/runtimes/run-meter';
import { wakeSection } from '../../src/modules/adapters/wake-prompt';
import type { WakeContext } from '../../src/modules/adapters/run.types';

const line = (o: unknown) => JSON.stringify(o);
/** What Claude Code prints for the API's own events with --include-partial-messages. */
const streamEvent = (event: Record<string, unknown>, id: string, parent: string | null = null) =>
  line({ type: 'stream_event', event, session_id: 's1', parent_tool_use_id: parent, api_message_id: id });

describe('Claude Code: metered from the API events of its partial-message stream', () => {
  it('books a call’s input at message_start and its output at message_delta, before the CLI’s result', () => {
    const meter = new RunMeter('anthropic', 'anthropic', null);
    const p = new ClaudeStreamParser(meter);
    p.accept(line({ type: 'system', subtype: 'init', session_id: 's1', model: 'claude-sonnet-4-5' }));
    p.accept(
      streamEvent(
        {
          type: 'message_start',
          message: { id: 'm1', model: 'claude-sonnet-4-5', usage: { input_tokens: 1000, cache_read_input_tokens: 10, output_tokens: 1 } },
        },
        'm1',
      ),
    );
    // the assistant message Claude Code prints per content block still carries message_start's output (1)
    p.accept(
      line({ type: 'assistant', message: { id: 'm1', model: 'claude-sonnet-4-5', usage: { input_tokens: 1000, output_tokens: 1 } } }),
    );
    expect(meter.snapshot()).toMatchObject({ inputTokens: 1000, cachedInputTokens: 10, outputTokens: 1, turns: 1 });
    p.accept(streamEvent({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'hi' } }, 'm1'));
    p.accept(streamEvent({ type: 'message_delta', delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 150 } }, 'm1'));
    // the next call is in flight: its input counts, its output not yet
    p.accept(streamEvent({ type: 'message_start', message: { id: 'm2', usage: { input_tokens: 2000, output_tokens: 1 } } }, 'm2'));
    expect(meter.snapshot()).toMatchObject({ inputTokens: 3000, outputTokens: 151, turns: 2, final: false, costStatus: 'priced' });
    // a sub-agent's call is its own
    p.accept(streamEvent({ type: 'message_start', message: { id: 'm1', usage: { input_tokens: 5, output_tokens: 1 } } }, 'm1', 'toolu_1'));
    expect(meter.snapshot()).toMatchObject({ inputTokens: 3005, turns: 3 });
  });

  it('the CLI’s result replaces the in-flight estimate (never added to it)', () => {
    const meter = new RunMeter('anthropic', 'anthropic', null);
    const p = new ClaudeStreamParser(meter);
    p.accept(streamEvent({ type: 'message_start', message: { id: 'm1', usage: { input_tokens: 1000, output_tokens: 1 } } }, 'm1'));
    p.accept(streamEvent({ type: 'message_delta', usage: { input_tokens: 1000, output_tokens: 150 } }, 'm1'));
    p.accept(
      line({
        type: 'result',
        subtype: 'success',
        usage: { input_tokens: 1000, output_tokens: 150 },
        model_usage_since_last_result: { 'claude-sonnet-4-5': { inputTokens: 1000, outputTokens: 150, costUSD: 0.00525 } },
      }),
    );
    expect(meter.snapshot()).toMatchObject({ inputTokens: 1000, outputTokens: 150, costUsd: 0.00525, costCentsExact: 0.525, final: true });
  });

  it('prices a resumed run as a fresh one: without the per-run ledger, the session totals less the previous run’s', () => {
    const meter = new RunMeter('anthropic', 'anthropic', 'claude-sonnet-4-5');
    const before = { costUsd: 0.004542, models: { 'claude-sonnet-4-5': { inputTokens: 1234, outputTokens: 56, costUSD: 0.004542 } } };
    const p = new ClaudeStreamParser(meter, 3, true, before);
    p.accept(
      line({
        type: 'result',
        total_cost_usd: 0.01,
        usage: { input_tokens: 2000, output_tokens: 20 },
        modelUsage: { 'claude-sonnet-4-5': { inputTokens: 3234, outputTokens: 76, costUSD: 0.01 } },
      }),
    );
    expect(meter.snapshot()).toMatchObject({ inputTokens: 2000, outputTokens: 20, costStatus: 'reported', costUsd: 0.01 - 0.004542 });
    expect(p.sessionTotals).toMatchObject({ costUsd: 0.01 });
  });
});

describe('Gemini CLI: metered from its chat record while the run goes', () => {
  it('meters each call as the CLI records it (thoughts as output), skips earlier runs’ calls, adds thoughts to the final stats', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gemini-home-'));
    const chats = path.join(dir, 'tmp', 'project', 'chats');
    fs.mkdirSync(chats, { recursive: true });
    const file = path.join(chats, 'session-2026-11-27T10-00-abcd1234.jsonl');
    const call = (id: string, at: Date, t: Record<string, number>) =>
      line({ id, timestamp: at.toISOString(), type: 'gemini', content: '', tokens: t, model: 'gemini-2.5-pro' }) + '\n';
    fs.writeFileSync(file, call('old', new Date(Date.now() - 60_000), { input: 999, output: 9, cached: 0, thoughts: 0, tool: 0 }));
    const meter = new RunMeter('google', 'google', null);
    const p = new GeminiStreamParser(meter, null, 3, dir);
    p.accept(line({ type: 'init', session_id: 'abcd1234-0000-4000-8000-000000000000', model: 'gemini-2.5-pro' }));
    fs.appendFileSync(file, call('c1', new Date(Date.now() + 5), { input: 1000, output: 10, cached: 100, thoughts: 40, tool: 5 }));
    p.accept(line({ type: 'tool_use', tool_name: 'run_shell_command' }));
    expect(meter.snapshot()).toMatchObject({ inputTokens: 905, cachedInputTokens: 100, outputTokens: 50, turns: 1, final: false });
    p.accept(line({ type: 'result', status: 'success', stats: { input_tokens: 1000, input: 900, cached: 100, output_tokens: 10 } }));
    expect(meter.snapshot()).toMatchObject({ inputTokens: 905, cachedInputTokens: 100, outputTokens: 50, final: true });
    fs.rmSync(dir, { recursive: true, force: true });
  });
});

describe('sessions keyed by what shapes them', () => {
  const shape: SessionShape & Record<string, unknown> = {
    adapterType: 'claude_local',
    model: 'claude-sonnet-4-5',
    instructions: 'aaaa',
    cwd: '/w',
  };
  it('names what changed; a session recorded without a shape is resumed', () => {
    expect(shapeChanges(shape, shape)).toEqual([]);
    expect(shapeChanges({ ...shape, model: 'claude-haiku-4-5', cwd: '/x' }, shape)).toEqual(['model', 'working folder']);
    expect(shapeChanges({ ...shape, instructions: null }, shape)).toEqual(['instructions']);
    expect(shapeChanges(null, shape)).toEqual([]);
  });
});

describe('the wake in the prompt', () => {
  const wake: WakeContext = {
    source: 'automation',
    triggerDetail: 'system',
    reason: 'mentioned',
    payload: { issueId: 'i1', commentId: 'c1' },
    issueId: 'i1',
    commentId: 'c1',
    forceFreshSession: false,
    wakeupRequestIds: ['w1'],
  };
  it('says why, quotes the comment with its author, and cuts long texts with a pointer to the API', () => {
    const text = wakeSection(wake, {
      issue: { id: 'i1', identifier: 'ACME-7', title: 'Fix it', status: 'todo', description: null, originKind: 'manual', originId: null },
      comments: [
        {
          id: 'c1',
          issueId: 'i1',
          body: `@Dev look\n${'y'.repeat(2_100)}`,
          author: { kind: 'agent', id: 'a1', name: 'Lead' },
          createdAt: '2026-11-27T10:00:00.000Z',
        },
      ],
    });
    expect(text).toContain('Reason: you were mentioned in a comment (source automation, system)');
    expect(text).toContain('Issue: ACME-7 "Fix it" (todo; id i1)');
    expect(text).toContain('Comment by Lead (agent a1), 2026-11-27T10:00:00.000Z (id c1):\n> @Dev look\n> yyy');
    expect(text).toContain('[cut at 2000 of 2110 characters; the whole text: GET /api/issues/i1/comments/c1]');
    expect(text).not.toContain('y'.repeat(2_001));
  });
});
