import * as http from 'node:http';
import { listenLoopback } from './loopback';
import { answerModelList, refuseRejectedKey } from './fake-model-list';
import { testCliBinary } from './clis';
import { Markers, runIdOf, type ServedCall } from './fake-model';

/**
 * A loopback fake of the Anthropic Messages API (`POST /v1/messages`, streaming): each request is
 * answered with the SSE events of one assistant message as the API streams them (message_start with
 * the input usage and output 1, a ping, content_block_start / several deltas / stop per block,
 * message_delta with the cumulative usage, message_stop), scripted per test. It records every
 * request and the usage it sent (`served`: per call, with its run), so a test can compare what the
 * service booked with what the "model" billed.
 */
export interface FakeUsage {
  input: number;
  output: number;
  cacheRead?: number;
  cacheCreation?: number;
}

export interface FakeTurn {
  text?: string;
  /** a tool call (e.g. the Bash tool with `{ command }`) */
  toolUse?: { name: string; input: Record<string, unknown> };
  usage: FakeUsage;
  /** send message_start and then nothing (a stalled stream) */
  stall?: boolean;
  /** answer only once this settles (a test holds the model while it looks at the running run) */
  hold?: Promise<unknown>;
  /** send message_start (the input is billed), then the rest once this settles (a call in flight) */
  holdAfterStart?: Promise<unknown>;
}

export interface FakeRequest {
  url: string;
  headers: http.IncomingHttpHeaders;
  body: { model?: string; messages?: Array<{ role: string; content: unknown }>; system?: unknown; [k: string]: unknown };
}

export type FakeScript = (req: FakeRequest, index: number) => FakeTurn;

export interface FakeAnthropic {
  url: string;
  requests: FakeRequest[];
  /** the sum of the usage the fake sent (completed messages only) */
  sent: { input: number; output: number; cacheRead: number; cacheCreation: number; messages: number };
  /** every call answered or being answered, with its run and whether it completed */
  served: ServedCall[];
  markers: Markers;
  setScript(script: FakeScript): void;
  close(): Promise<void>;
}

/** The text of every message of a request (tool results and system reminders included). */
export const transcript = (r: FakeRequest): string => JSON.stringify(r.body.messages ?? []);

export async function startFakeAnthropic(initial: FakeScript): Promise<FakeAnthropic> {
  let script = initial;
  const requests: FakeRequest[] = [];
  const sent = { input: 0, output: 0, cacheRead: 0, cacheCreation: 0, messages: 0 };
  const served: ServedCall[] = [];
  const markers = new Markers();
  const server = http.createServer((req, res) => {
    if (markers.handle(req, res)) return;
    let data = '';
    req.on('data', (d) => (data += d));
    req.on('end', () => {
      if (answerModelList('anthropic', req, res)) return;
      if (refuseRejectedKey('anthropic', req, res)) return;
      if (req.method !== 'POST' || !(req.url ?? '').startsWith('/v1/messages') || (req.url ?? '').includes('count_tokens')) {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ type: 'error', error: { type: 'not_found_error', message: 'not here' } }));
        return;
      }
      let body: FakeRequest['body'] = {};
      try {
        body = JSON.parse(data);
      } catch {
        /* keep empty */
      }
      const r: FakeRequest = { url: req.url ?? '', headers: req.headers, body };
      requests.push(r);
      const index = requests.length - 1;
      const turn = script(r, index);
      void Promise.resolve(turn.hold).then(() => respond(res, r, index, turn));
    });
    req.on('error', () => undefined);
    res.on('error', () => undefined);
  });
  const respond = async (res: http.ServerResponse, r: FakeRequest, index: number, turn: FakeTurn) => {
    const body = r.body;
    const u = turn.usage;
    if (res.destroyed) return; // the client gave up while the answer was held
    const call: ServedCall = {
      index,
      runId: runIdOf(body),
      booked: { input: u.input + (u.cacheCreation ?? 0), cached: u.cacheRead ?? 0, output: u.output },
      complete: false,
      inputAtStart: true,
    };
    served.push(call);
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const ev = (type: string, payload: Record<string, unknown>) =>
      res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...payload })}\n\n`);
    const usage = {
      input_tokens: u.input,
      cache_creation_input_tokens: u.cacheCreation ?? 0,
      cache_read_input_tokens: u.cacheRead ?? 0,
    };
    ev('message_start', {
      message: {
        id: `msg_fake_${index + 1}`,
        type: 'message',
        role: 'assistant',
        model: body.model ?? 'claude-sonnet-4-5',
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { ...usage, output_tokens: 1 },
      },
    });
    ev('ping', {});
    if (turn.stall) return; // never finishes: the client sees a silent stream
    if (turn.holdAfterStart) await turn.holdAfterStart;
    if (res.destroyed) return;
    let i = 0;
    if (turn.text) {
      ev('content_block_start', { index: i, content_block: { type: 'text', text: '' } });
      // the API streams text in small pieces
      for (const piece of turn.text.match(/[\s\S]{1,8}/g) ?? [])
        ev('content_block_delta', { index: i, delta: { type: 'text_delta', text: piece } });
      ev('content_block_stop', { index: i });
      i++;
    }
    if (turn.toolUse) {
      ev('content_block_start', {
        index: i,
        content_block: { type: 'tool_use', id: `toolu_fake_${index + 1}`, name: turn.toolUse.name, input: {} },
      });
      ev('content_block_delta', { index: i, delta: { type: 'input_json_delta', partial_json: JSON.stringify(turn.toolUse.input) } });
      ev('content_block_stop', { index: i });
    }
    // cumulative usage of the whole message, as the API reports it at the end
    ev('message_delta', {
      delta: { stop_reason: turn.toolUse ? 'tool_use' : 'end_turn', stop_sequence: null },
      usage: { ...usage, output_tokens: u.output },
    });
    ev('message_stop', {});
    res.end();
    call.complete = true;
    sent.input += u.input;
    sent.output += u.output;
    sent.cacheRead += u.cacheRead ?? 0;
    sent.cacheCreation += u.cacheCreation ?? 0;
    sent.messages++;
  };
  const { port, close } = await listenLoopback(server);
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    sent,
    served,
    markers,
    setScript: (s) => (script = s),
    close,
  };
}

/** The pinned Claude Code binary (its native build, from the test CLI cache: test/support/clis.ts). */
export const claudeBinary = (): string => testCliBinary('claude');

/** The env of a Claude Code agent pointed at the fake: a dummy key and no traffic elsewhere. */
export const claudeEnv = (fake: { url: string }, extra: Record<string, string> = {}) => ({
  ANTHROPIC_BASE_URL: fake.url,
  ANTHROPIC_API_KEY: 'sk-ant-test-dummy',
  DISABLE_TELEMETRY: '1',
  DISABLE_AUTOUPDATER: '1',
  CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
  ...extra,
});
