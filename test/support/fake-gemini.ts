import * as http from 'node:http';
import { listenLoopback } from './loopback';
import { answerModelList } from './fake-model-list';
import * as path from 'node:path';
import { readableForAgents } from './readable-for-agents';

/**
 * A loopback fake of the Gemini API (`POST /v1beta/models/{model}:streamGenerateContent?alt=sse`),
 * scripted per test: each answer is two SSE chunks of text, the last with the usage metadata.
 */
export interface GeminiTurn {
  text?: string;
  /** a function call (the CLI's shell tool); the CLI answers it with a functionResponse and asks again */
  toolCall?: { name: string; args: Record<string, unknown> };
  /** prompt tokens include the cached part, as the API reports them */
  usage: { prompt: number; cached?: number; output: number };
}

export interface GeminiRequest {
  url: string;
  body: { contents?: unknown[]; systemInstruction?: unknown; [k: string]: unknown };
}

export interface FakeGemini {
  url: string;
  requests: GeminiRequest[];
  sent: { prompt: number; cached: number; output: number; responses: number };
  setScript(script: (req: GeminiRequest, index: number) => GeminiTurn): void;
  close(): Promise<void>;
}

export async function startFakeGemini(initial: (req: GeminiRequest, index: number) => GeminiTurn): Promise<FakeGemini> {
  let script = initial;
  const requests: GeminiRequest[] = [];
  const sent = { prompt: 0, cached: 0, output: 0, responses: 0 };
  const server = http.createServer((req, res) => {
    let data = '';
    req.on('data', (d) => (data += d));
    req.on('end', () => {
      if (answerModelList('gemini', req, res)) return;
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
      const turn = script(r, requests.length - 1);
      const u = turn.usage;
      const usageMetadata = {
        promptTokenCount: u.prompt,
        candidatesTokenCount: u.output,
        totalTokenCount: u.prompt + u.output,
        cachedContentTokenCount: u.cached ?? 0,
      };
      const text = turn.text ?? '';
      const half = Math.ceil(text.length / 2);
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const chunk = (o: unknown) => res.write(`data: ${JSON.stringify(o)}\r\n\r\n`);
      chunk({
        candidates: [{ content: { role: 'model', parts: [{ text: text.slice(0, half) }] } }],
        usageMetadata: { promptTokenCount: u.prompt },
      });
      const last = turn.toolCall ? [{ functionCall: turn.toolCall }] : [{ text: text.slice(half) }];
      chunk({ candidates: [{ content: { role: 'model', parts: last }, finishReason: 'STOP' }], usageMetadata });
      res.end();
      sent.prompt += u.prompt;
      sent.cached += u.cached ?? 0;
      sent.output += u.output;
      sent.responses++;
    });
  });
  const { port, close } = await listenLoopback(server);
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    sent,
    setScript: (s) => (script = s),
    close,
  };
}

/** The installed Gemini CLI (devDependency): a Node script, run with this Node. */
export const geminiBinary = (): string => {
  const pkg = path.resolve(__dirname, '..', '..', 'node_modules', '@google', 'gemini-cli');
  return readableForAgents(path.join(pkg, 'bundle', 'gemini.js'), pkg);
};
