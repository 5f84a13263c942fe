import * as http from 'node:http';
import { listenLoopback } from './loopback';
import { answerModelList, refuseRejectedKey } from './fake-model-list';
import { testCliBinary } from './clis';
import { Markers, runIdOf, type ServedCall } from './fake-model';

/**
 * A loopback fake of the OpenAI Responses API (`POST /v1/responses`, streaming SSE as the API sends
 * it: response.created, response.in_progress, response.output_item.added, content parts, text in
 * several response.output_text.delta events or the function call's arguments, response.output_item.done,
 * response.completed with the usage), scripted per test, recording requests and the usage it sent
 * (`served`: per call, with its run).
 */
export interface OpenAiTurn {
  text?: string;
  /**
   * a function call (the CLI's shell tool); the CLI answers it with a function_call_output and asks
   * again. `namespace`: the tool's namespace, for tools offered in one (Codex offers an MCP server's
   * tools as a `namespace` tool, e.g. `mcp__aos`)
   */
  toolCall?: { name: string; arguments: Record<string, unknown>; namespace?: string };
  /** input includes cached, as the API reports it */
  usage: { input: number; cached?: number; output: number };
  /** answer only once this settles (a call in flight: nothing is billed before the answer) */
  hold?: Promise<unknown>;
}

export interface OpenAiRequest {
  url: string;
  body: { model?: string; input?: unknown; instructions?: unknown; [k: string]: unknown };
}

export interface FakeOpenAi {
  url: string;
  requests: OpenAiRequest[];
  sent: { input: number; cached: number; output: number; responses: number };
  served: ServedCall[];
  markers: Markers;
  setScript(script: (req: OpenAiRequest, index: number) => OpenAiTurn): void;
  close(): Promise<void>;
}

export async function startFakeOpenAi(initial: (req: OpenAiRequest, index: number) => OpenAiTurn): Promise<FakeOpenAi> {
  let script = initial;
  const requests: OpenAiRequest[] = [];
  const sent = { input: 0, cached: 0, output: 0, responses: 0 };
  const served: ServedCall[] = [];
  const markers = new Markers();
  const server = http.createServer((req, res) => {
    if (markers.handle(req, res)) return;
    req.on('error', () => undefined);
    res.on('error', () => undefined);
    let data = '';
    req.on('data', (d) => (data += d));
    req.on('end', () => {
      if (answerModelList('openai', req, res)) return;
      if (refuseRejectedKey('openai', req, res)) return;
      if (req.method !== 'POST' || !(req.url ?? '').endsWith('/responses')) {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: 'not here', type: 'invalid_request_error' } }));
        return;
      }
      let body: OpenAiRequest['body'] = {};
      try {
        body = JSON.parse(data);
      } catch {
        /* keep empty */
      }
      const r = { url: req.url ?? '', body };
      requests.push(r);
      const index = requests.length - 1;
      const turn = script(r, index);
      void Promise.resolve(turn.hold).then(() => respond(res, r, index, turn));
    });
  });
  const respond = (res: http.ServerResponse, r: OpenAiRequest, index: number, turn: OpenAiTurn) => {
    const body = r.body;
    if (res.destroyed) return;
    const call: ServedCall = {
      index,
      runId: runIdOf(body),
      booked: { input: turn.usage.input - (turn.usage.cached ?? 0), cached: turn.usage.cached ?? 0, output: turn.usage.output },
      complete: false,
      inputAtStart: false,
    };
    served.push(call);
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const ev = (type: string, payload: Record<string, unknown>) =>
      res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...payload })}\n\n`);
    const response = {
      id: `resp_fake_${index + 1}`,
      object: 'response',
      created_at: Math.floor(Date.now() / 1000),
      status: 'in_progress',
      model: body.model,
      output: [],
    };
    const item: Record<string, unknown> = turn.toolCall
      ? {
          id: `fc_fake_${index + 1}`,
          type: 'function_call',
          status: 'completed',
          call_id: `call_fake_${index + 1}`,
          name: turn.toolCall.name,
          ...(turn.toolCall.namespace ? { namespace: turn.toolCall.namespace } : {}),
          arguments: JSON.stringify(turn.toolCall.arguments),
        }
      : {
          id: `msg_fake_${index + 1}`,
          type: 'message',
          role: 'assistant',
          status: 'completed',
          content: [{ type: 'output_text', text: turn.text ?? '', annotations: [] }],
        };
    ev('response.created', { response });
    ev('response.in_progress', { response });
    if (turn.toolCall) {
      ev('response.output_item.added', { output_index: 0, item: { ...item, status: 'in_progress', arguments: '' } });
      ev('response.function_call_arguments.delta', { output_index: 0, item_id: item.id, delta: item.arguments });
      ev('response.function_call_arguments.done', { output_index: 0, item_id: item.id, arguments: item.arguments });
    } else {
      const text = turn.text ?? '';
      const part = { type: 'output_text', text: '', annotations: [] };
      ev('response.output_item.added', { output_index: 0, item: { ...item, status: 'in_progress', content: [] } });
      ev('response.content_part.added', { output_index: 0, item_id: item.id, content_index: 0, part });
      // the API streams text in small pieces
      for (const piece of text.match(/[\s\S]{1,8}/g) ?? [''])
        ev('response.output_text.delta', { output_index: 0, item_id: item.id, content_index: 0, delta: piece });
      ev('response.output_text.done', { output_index: 0, item_id: item.id, content_index: 0, text });
      ev('response.content_part.done', { output_index: 0, item_id: item.id, content_index: 0, part: { ...part, text } });
    }
    ev('response.output_item.done', { output_index: 0, item });
    const u = turn.usage;
    ev('response.completed', {
      response: {
        ...response,
        status: 'completed',
        output: [item],
        usage: {
          input_tokens: u.input,
          input_tokens_details: { cached_tokens: u.cached ?? 0 },
          output_tokens: u.output,
          output_tokens_details: { reasoning_tokens: 0 },
          total_tokens: u.input + u.output,
        },
      },
    });
    res.end();
    call.complete = true;
    sent.input += u.input;
    sent.cached += u.cached ?? 0;
    sent.output += u.output;
    sent.responses++;
  };
  const { port, close } = await listenLoopback(server);
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    sent,
    served,
    markers,
    setScript: (s) => (script = s),
    close,
  };
}

/** The pinned Codex CLI (its native build, from the test CLI cache: test/support/clis.ts). */
export const codexBinary = (): string => testCliBinary('codex');

/** The pinned OpenCode CLI (opencode-ai's platform build, from the test CLI cache: test/support/clis.ts). */
export const opencodeBinary = (): string => testCliBinary('opencode');
