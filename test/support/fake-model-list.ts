import type * as http from 'node:http';

/** The key the loopback fakes refuse, on their model list and their model calls (a wrong key, answered as the vendor answers it). */
export const REJECTED_KEY = 'sk-rejected-by-fake';

const LISTS = {
  anthropic: { path: '/v1/models', models: ['claude-sonnet-4-5', 'claude-haiku-4-5', 'claude-opus-4-5'] },
  openai: { path: '/v1/models', models: ['gpt-5-codex', 'gpt-5', 'gpt-5-mini'] },
  gemini: { path: '/v1beta/models', models: ['gemini-2.5-pro', 'gemini-2.5-flash'] },
} as const;

/**
 * The vendors' model-list route (what an AI connection test and detect-model ask: it checks a key
 * without a model turn). Answers a GET of it and returns true; false for any other request.
 */
export function answerModelList(api: keyof typeof LISTS, req: http.IncomingMessage, res: http.ServerResponse): boolean {
  const list = LISTS[api];
  if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== list.path) return false;
  const key = keyOf(req);
  if (!key || key === REJECTED_KEY) {
    res.writeHead(401, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { type: 'authentication_error', message: 'invalid x-api-key' } }));
    return true;
  }
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(
    JSON.stringify(
      api === 'gemini'
        ? { models: list.models.map((m) => ({ name: `models/${m}`, displayName: m })) }
        : { data: list.models.map((id) => ({ id, type: 'model', object: 'model' })) },
    ),
  );
  return true;
}

const keyOf = (req: http.IncomingMessage): string =>
  String(req.headers['x-api-key'] ?? req.headers['x-goog-api-key'] ?? req.headers.authorization ?? '').replace(/^Bearer /, '') ||
  (new URL(req.url ?? '/', 'http://fake').searchParams.get('key') ?? '');

/** The vendors' answers to a model call with a wrong key. */
const REFUSALS = {
  anthropic: { status: 401, body: { type: 'error', error: { type: 'authentication_error', message: 'invalid x-api-key' } } },
  openai: {
    status: 401,
    body: { error: { message: 'Incorrect API key provided.', type: 'invalid_request_error', param: null, code: 'invalid_api_key' } },
  },
  gemini: {
    status: 400,
    body: {
      error: {
        code: 400,
        message: 'API key not valid. Please pass a valid API key.',
        status: 'INVALID_ARGUMENT',
        details: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'API_KEY_INVALID', domain: 'googleapis.com' }],
      },
    },
  },
} as const;

/** A model call with REJECTED_KEY: answered as the vendor refuses a wrong key, and true; false otherwise. */
export function refuseRejectedKey(api: keyof typeof REFUSALS, req: http.IncomingMessage, res: http.ServerResponse): boolean {
  if (keyOf(req) !== REJECTED_KEY) return false;
  const r = REFUSALS[api];
  res.writeHead(r.status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(r.body));
  return true;
}
