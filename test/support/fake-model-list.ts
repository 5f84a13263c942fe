import type * as http from 'node:http';

/** The key the loopback fakes refuse on their model list (a wrong key, as the vendor would answer it: 401). */
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
  const key = String(req.headers['x-api-key'] ?? req.headers['x-goog-api-key'] ?? req.headers.authorization ?? '').replace(/^Bearer /, '');
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
