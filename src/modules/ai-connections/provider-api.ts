import { OutboundRefusedError, refusalIn, type OutboundTarget } from '../../common/net/outbound-guard';
import type { ModelProvider } from '../adapters/runtimes/model-providers';

/** What asking a provider for its model list told about a key and an endpoint. */
export interface ProviderProbe {
  status: 'pass' | 'fail';
  /** the endpoint asked (never with the key) */
  endpoint: string;
  httpStatus: number | null;
  message: string;
  /** the model ids the key may use, as the provider listed them */
  models: string[];
  /** the destination policy refused the endpoint: nothing was sent */
  refused?: string;
}

const TIMEOUT_MS = 10_000;

/** The model-list request of a provider's API (free: it checks the key without a model turn). */
function listRequest(p: ModelProvider, baseUrl: string, key: string): { url: string; headers: Record<string, string> } {
  const base = baseUrl.replace(/\/+$/, '');
  switch (p.api) {
    case 'anthropic':
      return { url: `${base}/v1/models?limit=100`, headers: { 'x-api-key': key, 'anthropic-version': '2023-06-01' } };
    case 'gemini':
      return { url: `${base}/v1beta/models?pageSize=100`, headers: { 'x-goog-api-key': key } };
    default:
      return { url: `${base}/models`, headers: { authorization: `Bearer ${key}` } };
  }
}

/** Model ids of a list answer: Anthropic and OpenAI `{ data: [{ id }] }`, Gemini `{ models: [{ name: "models/…" }] }`. */
function modelIds(body: unknown): string[] {
  const o = body && typeof body === 'object' ? (body as Record<string, unknown>) : {};
  const items = Array.isArray(o.data) ? o.data : Array.isArray(o.models) ? o.models : [];
  return items
    .map((m) => (m && typeof m === 'object' ? ((m as { id?: unknown; name?: unknown }).id ?? (m as { name?: unknown }).name) : null))
    .filter((id): id is string => typeof id === 'string')
    .map((id) => id.replace(/^models\//, ''))
    .slice(0, 200);
}

/**
 * Asks the provider at `baseUrl` which models `key` may use, through the outbound guard. The answer
 * says pass or fail, the HTTP status and the model ids; never the key nor anything else the
 * endpoint sent (the endpoint is a tenant's choice: the answer must not serve as a window on it).
 */
export async function probeProvider(p: ModelProvider, baseUrl: string, key: string, outbound: OutboundTarget): Promise<ProviderProbe> {
  const { url, headers } = listRequest(p, baseUrl, key);
  const endpoint = url.replace(/\?.*$/, '');
  try {
    const res = await outbound.guard.fetch(
      url,
      { headers: { accept: 'application/json', ...headers }, signal: AbortSignal.timeout(TIMEOUT_MS) },
      outbound.options,
    );
    const text = await res.text();
    if (res.status === 401 || res.status === 403)
      return { status: 'fail', endpoint, httpStatus: res.status, message: `${p.label} refused the key (HTTP ${res.status})`, models: [] };
    if (!res.ok) return { status: 'fail', endpoint, httpStatus: res.status, message: `${p.label} answered HTTP ${res.status}`, models: [] };
    let models: string[] = [];
    try {
      models = modelIds(JSON.parse(text));
    } catch {
      return { status: 'fail', endpoint, httpStatus: res.status, message: `the endpoint did not answer like the ${p.label} API`, models };
    }
    return { status: 'pass', endpoint, httpStatus: res.status, message: `${p.label} accepted the key (${models.length} models)`, models };
  } catch (err) {
    const refusal = err instanceof OutboundRefusedError ? err : refusalIn(err);
    if (refusal) return { status: 'fail', endpoint, httpStatus: null, message: refusal.message, models: [], refused: refusal.reason };
    const e = err as Error & { cause?: { code?: string } };
    const why = e.name === 'TimeoutError' ? `no answer within ${TIMEOUT_MS / 1000} s` : (e.cause?.code ?? e.message);
    return { status: 'fail', endpoint, httpStatus: null, message: `${endpoint} is not reachable (${why})`, models: [] };
  }
}
