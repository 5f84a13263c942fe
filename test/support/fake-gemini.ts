import * as http from 'node:http';
import { listenLoopback } from './loopback';
import { answerModelList, refuseRejectedKey } from './fake-model-list';
import { testCliBinary } from './clis';
import { Markers, runIdOf, type ServedCall } from './fake-model';

/**
 * A loopback fake of the Gemini API (`POST /v1beta/models/{model}:streamGenerateContent?alt=sse`),
 * scripted per test: each answer is SSE chunks as the API sends them (every chunk with usage
 * metadata, the prompt count first, the candidates and thoughts counts in the last), recording
 * requests and the usage it sent (`served`: per call, with its run).
 */
export interface GeminiTurn {
  text?: string;
  /** a function call (the CLI's shell tool); the CLI answers it with a functionResponse and asks again */
  toolCall?: { name: string; args: Record<string, unknown> };
  /** prompt tokens include the cached part, as the API reports them; thoughts are billed as output */
  usage: { prompt: number; cached?: number; output: number; thoughts?: number };
  /** answer only once this settles (a call in flight: nothing is billed before the answer) */
  hold?: Promise<unknown>;
}

export interface GeminiRequest {
  url: string;
  body: { contents?: unknown[]; systemInstruction?: unknown; [k: string]: unknown };
}

export interface FakeGemini {
  url: string;
  requests: GeminiRequest[];
  sent: { prompt: number; cached: number; output: number; responses: number };
  served: ServedCall[];
  markers: Markers;
  setScript(script: (req: GeminiRequest, index: number) => GeminiTurn): void;
  close(): Promise<void>;
}

export async function startFakeGemini(initial: (req: GeminiRequest, index: number) => GeminiTurn): Promise<FakeGemini> {
  let script = initial;
  const requests: GeminiRequest[] = [];
  const sent = { prompt: 0, cached: 0, output: 0, responses: 0 };
  const served: ServedCall[] = [];
  const markers = new Markers();
  const server = http.createServer((req, res) => {
    if (markers.handle(req, res)) return;
    req.on('error', () => undefined);
    res.on('error', () => undefined);
    let data = '';
    req.on('data', (d) => (data += d));
    req.on('end', () => {
      if (answerModelList('gemini', req, res)) return;
      if (refuseRejectedKey('gemini', req, res)) return;
      const url = req.url ?? '';
      if (req.method !== 'POST' || !url.includes(':streamGenerateContent')) {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { code: 404, message: 'not here', status: 'NOT_FOUND' } }));
        return;
      }
      let body: GeminiRequest['body'] = {};
      try {
        body = JSON.parse(data);
      } catch {
        /* keep empty */
      }
      const r = { url, body };
      requests.push(r);
      const index = requests.length - 1;
      const turn = script(r, index);
      void Promise.resolve(turn.hold).then(() => respond(res, r, index, turn));
    });
  });
  const respond = (res: http.ServerResponse, r: GeminiRequest, index: number, turn: GeminiTurn) => {
    if (res.destroyed) return;
    const u = turn.usage;
    const call: ServedCall = {
      index,
      runId: runIdOf(r.body),
      booked: { input: u.prompt - (u.cached ?? 0), cached: u.cached ?? 0, output: u.output + (u.thoughts ?? 0) },
      complete: false,
      inputAtStart: false,
    };
    served.push(call);
    const usageMetadata = {
      promptTokenCount: u.prompt,
      candidatesTokenCount: u.output,
      totalTokenCount: u.prompt + u.output + (u.thoughts ?? 0),
      cachedContentTokenCount: u.cached ?? 0,
      ...(u.thoughts ? { thoughtsTokenCount: u.thoughts } : {}),
    };
    const text = turn.text ?? '';
    const half = Math.ceil(text.length / 2);
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    // the API names the model version that answered: the one asked for
    const meta = { modelVersion: /models\/([^:]+):/.exec(r.url)?.[1] ?? 'gemini-2.5-pro', responseId: `resp_fake_${index + 1}` };
    const chunk = (o: unknown) => res.write(`data: ${JSON.stringify(o)}\r\n\r\n`);
    chunk({
      candidates: [{ content: { role: 'model', parts: [{ text: text.slice(0, half) }] } }],
      usageMetadata: { promptTokenCount: u.prompt, totalTokenCount: u.prompt },
      ...meta,
    });
    const last = turn.toolCall ? [{ functionCall: turn.toolCall }] : [{ text: text.slice(half) }];
    chunk({ candidates: [{ content: { role: 'model', parts: last }, finishReason: 'STOP' }], usageMetadata, ...meta });
    res.end();
    call.complete = true;
    sent.prompt += u.prompt;
    sent.cached += u.cached ?? 0;
    sent.output += u.output;
    sent.responses++;
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

/** The pinned Gemini CLI (a Node script, run with the Node on PATH; from the test CLI cache: test/support/clis.ts). */
export const geminiBinary = (): string => testCliBinary('gemini');
