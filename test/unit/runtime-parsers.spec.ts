import { ClaudeStreamParser } from '../../src/modules/adapters/runtimes/claude-local.runtime';
import { CodexStreamParser } from '../../src/modules/adapters/runtimes/codex-local.runtime';
import { GeminiStreamParser } from '../../src/modules/adapters/runtimes/gemini-local.runtime';
import { OpenCodeStreamParser } from '../../src/modules/adapters/runtimes/opencode-local.runtime';
import { priceOf } from '../../src/modules/adapters/runtimes/model-prices';
import { centsOf, RunMeter } from '../../src/modules/adapters/runtimes/run-meter';

const line = (o: unknown) => JSON.stringify(o);
const assistant = (id: string, usage: Record<string, number>) =>
  line({ type: 'assistant', message: { id, model: 'claude-sonnet-4-5', usage, content: [] } });

describe('ClaudeStreamParser', () => {
  it('counts a message repeated per content block once, in flight', () => {
    const meter = new RunMeter('anthropic', 'anthropic', null);
    const p = new ClaudeStreamParser(meter);
    p.accept(line({ type: 'system', subtype: 'init', session_id: 's1', model: 'claude-sonnet-4-5' }));
    p.accept(assistant('m1', { input_tokens: 100, output_tokens: 1 }));
    p.accept(assistant('m1', { input_tokens: 100, output_tokens: 1 }));
    p.accept(assistant('m2', { input_tokens: 50, output_tokens: 1, cache_read_input_tokens: 10 }));
    expect(meter.snapshot()).toMatchObject({
      inputTokens: 150,
      cachedInputTokens: 10,
      outputTokens: 2,
      turns: 2,
      final: false,
      costStatus: 'priced',
    });
    expect(p.sessionId).toBe('s1');
  });

  it('books a resumed run’s own usage: the per-run ledger, never the session-cumulative modelUsage and total cost', () => {
    const meter = new RunMeter('anthropic', 'anthropic', null);
    const p = new ClaudeStreamParser(meter, 3, true);
    p.accept(assistant('m3', { input_tokens: 1234, output_tokens: 1 }));
    p.accept(
      line({
        type: 'result',
        subtype: 'success',
        session_id: 's1',
        total_cost_usd: 0.009084,
        usage: { input_tokens: 1234, output_tokens: 56 },
        modelUsage: { 'claude-sonnet-4-5': { inputTokens: 2468, outputTokens: 112, costUSD: 0.009084 } },
        model_usage_since_last_result: { 'claude-sonnet-4-5': { inputTokens: 1234, outputTokens: 56, costUSD: 0.004542 } },
        num_turns: 1,
        result: 'ok',
      }),
    );
    expect(meter.snapshot()).toMatchObject({
      inputTokens: 1234,
      outputTokens: 56,
      costUsd: 0.004542,
      costCents: 1,
      costStatus: 'reported',
      final: true,
    });
    // an older CLI without the per-run ledger: the resumed session's totals are not used, the run's usage is priced
    const m2 = new RunMeter('anthropic', 'anthropic', 'claude-sonnet-4-5');
    new ClaudeStreamParser(m2, 3, true).accept(
      line({
        type: 'result',
        total_cost_usd: 0.009084,
        usage: { input_tokens: 1234, output_tokens: 56 },
        modelUsage: { x: { inputTokens: 2468 } },
      }),
    );
    expect(m2.snapshot()).toMatchObject({ inputTokens: 1234, outputTokens: 56, costStatus: 'priced' });
  });

  it('recognises an unknown session, a missing login and an unreachable endpoint', () => {
    const p = new ClaudeStreamParser(new RunMeter('anthropic', 'anthropic', null));
    p.accept(
      line({ type: 'result', subtype: 'error_during_execution', is_error: true, errors: ['No conversation found with session ID: x'] }),
    );
    expect(p.failure?.code).toBe('runtime_session_unknown');
    const q = new ClaudeStreamParser(new RunMeter('anthropic', 'anthropic', null));
    q.accept(
      line({
        type: 'assistant',
        message: { model: '<synthetic>', content: [{ type: 'text', text: 'Not logged in · Please run /login' }] },
      }),
    );
    expect(q.failure?.code).toBe('runtime_auth_failed');
    const r = new ClaudeStreamParser(new RunMeter('anthropic', 'anthropic', null), 2);
    r.accept(line({ type: 'system', subtype: 'api_retry', error_status: null }));
    expect(r.failure).toBeNull();
    r.accept(line({ type: 'system', subtype: 'api_retry', error_status: null }));
    expect(r.failure?.code).toBe('runtime_endpoint_unreachable');
  });
});

describe('other CLIs', () => {
  it('Codex: an unreachable endpoint after maxConnectRetries reconnect events, not before; a missing key at once', () => {
    const reconnect = line({ type: 'error', message: 'Reconnecting... waiting for network (Connection failed: error sending request)' });
    const p = new CodexStreamParser(
      new RunMeter('openai', 'openai', 'gpt-5'),
      { inputTokens: 0, cachedInputTokens: 0, cacheCreationInputTokens: 0, outputTokens: 0 },
      2,
    );
    p.accept(reconnect);
    expect(p.failure).toBeNull();
    p.accept(reconnect);
    expect(p.failure?.code).toBe('runtime_endpoint_unreachable');
    const q = new CodexStreamParser(new RunMeter('openai', 'openai', 'gpt-5'), {
      inputTokens: 0,
      cachedInputTokens: 0,
      cacheCreationInputTokens: 0,
      outputTokens: 0,
    });
    q.accept(line({ type: 'error', message: 'unexpected status 401 Unauthorized' }));
    expect(q.failure?.code).toBe('runtime_auth_failed');
  });

  it('Codex: the run’s part of a resumed thread’s cumulative usage', () => {
    const meter = new RunMeter('openai', 'openai', 'gpt-5');
    const baseline = { inputTokens: 1034, cachedInputTokens: 200, cacheCreationInputTokens: 0, outputTokens: 56 };
    const p = new CodexStreamParser(meter, baseline);
    p.accept(line({ type: 'thread.started', thread_id: 't1' }));
    p.accept(line({ type: 'turn.completed', usage: { input_tokens: 2468, cached_input_tokens: 400, output_tokens: 112 } }));
    expect(meter.snapshot()).toMatchObject({ inputTokens: 1034, cachedInputTokens: 200, outputTokens: 56, final: true });
    expect(p).toMatchObject({ sessionId: 't1', finished: true });
  });

  it('Gemini: per-run stats, uncached input', () => {
    const meter = new RunMeter('google', 'google', null);
    const p = new GeminiStreamParser(meter);
    p.accept(line({ type: 'init', session_id: 'g1', model: 'gemini-2.5-pro' }));
    p.accept(
      line({
        type: 'result',
        status: 'success',
        stats: { input_tokens: 1234, cached: 200, input: 1034, output_tokens: 56, models: { 'gemini-2.5-pro': { total_tokens: 1290 } } },
      }),
    );
    expect(meter.snapshot()).toMatchObject({
      inputTokens: 1034,
      cachedInputTokens: 200,
      outputTokens: 56,
      model: 'gemini-2.5-pro',
      costStatus: 'priced',
    });
  });

  it('OpenCode: per-step usage and cost as they arrive; reasoning is output', () => {
    const meter = new RunMeter('opencode', 'opencode', 'openai/gpt-5');
    const p = new OpenCodeStreamParser(meter);
    const step = (id: string, reason: string) =>
      line({
        type: 'step_finish',
        sessionID: 'ses_1',
        part: { id, reason, tokens: { input: 100, output: 5, reasoning: 2, cache: { read: 10, write: 0 } }, cost: 0.001 },
      });
    p.accept(step('a', 'tool-calls'));
    expect(p.finished).toBe(false);
    p.accept(step('b', 'stop'));
    expect(meter.snapshot()).toMatchObject({
      inputTokens: 200,
      cachedInputTokens: 20,
      outputTokens: 14,
      costUsd: 0.002,
      costStatus: 'reported',
      turns: 2,
    });
    expect(p).toMatchObject({ sessionId: 'ses_1', finished: true });
  });
});

describe('prices', () => {
  it('prices known models (longest prefix wins), books unknown ones as unpriced and rounds cents up', () => {
    expect(priceOf('claude-opus-4-5-20251101')?.input).toBe(5);
    expect(priceOf('openai/gpt-5-mini')?.input).toBe(0.25);
    expect(priceOf('mystery-model')).toBeNull();
    const m = new RunMeter('x', 'x', 'mystery-model');
    m.turn('1', { inputTokens: 10, cachedInputTokens: 0, cacheCreationInputTokens: 0, outputTokens: 1 });
    expect(m.snapshot()).toMatchObject({ costStatus: 'unpriced', costCents: null, costUsd: null });
    expect(centsOf(0.004542)).toBe(1);
    expect(centsOf(0.5)).toBe(50);
    expect(centsOf(0)).toBe(0);
  });

  it('takes agent prices over the built-in table', () => {
    expect(priceOf('claude-sonnet-4-5', { 'claude-sonnet-4-5': { input: 1, output: 2 } })).toEqual({ input: 1, output: 2 });
  });
});

describe('Codex session file', () => {
  it('meters each model call from the session file while the turn runs; a resumed session’s earlier calls are not the run’s', () => {
    const fs = require('node:fs') as typeof import('node:fs');
    const os = require('node:os') as typeof import('node:os');
    const path = require('node:path') as typeof import('node:path');
    const home = fs.mkdtempSync(path.join(os.tmpdir(), 'codex-home-'));
    const dir = path.join(home, 'sessions', '2026', '11', '25');
    fs.mkdirSync(dir, { recursive: true });
    const file = path.join(dir, 'rollout-2026-11-25T00-00-00-t9.jsonl');
    const call = (input: number, output: number) =>
      line({
        type: 'event_msg',
        payload: {
          type: 'token_count',
          info: { last_token_usage: { input_tokens: input, cached_input_tokens: 0, output_tokens: output } },
        },
      }) + '\n';
    fs.writeFileSync(file, call(1000, 10));
    const meter = new RunMeter('openai', 'openai', 'gpt-5');
    const p = new CodexStreamParser(
      meter,
      { inputTokens: 1000, cachedInputTokens: 0, cacheCreationInputTokens: 0, outputTokens: 10 },
      3,
      home,
      't9',
    );
    p.accept(line({ type: 'thread.started', thread_id: 't9' }));
    fs.appendFileSync(file, call(300, 5) + call(400, 6));
    p.poll();
    expect(meter.snapshot()).toMatchObject({ inputTokens: 700, outputTokens: 11, turns: 2, final: false });
    fs.rmSync(home, { recursive: true, force: true });
  });
});
