import { CliContext, CliError } from './cli-context';

export interface ApiResponse<T> {
  status: number;
  body: T;
  headers: Headers;
}

/**
 * The running service's HTTP API as the CLI uses it: base URL and board token from the context,
 * JSON in and out, and one clear error for "not reachable" and for every non-2xx answer (the
 * service's `error` and `code`).
 */
export class ApiClient {
  readonly baseUrl: string;
  private readonly token?: string;

  /** `token`: a credential other than the context's (e.g. a fresh session) */
  constructor(ctx: CliContext, token?: string) {
    this.baseUrl = ctx.baseUrl();
    this.token = token ?? ctx.token();
  }

  async request<T>(method: string, path: string, body?: unknown, opts: { allow?: number[] } = {}): Promise<ApiResponse<T>> {
    const res = await this.send(method, path, body);
    const text = await res.text();
    let parsed: unknown = undefined;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = text;
    }
    if (!res.ok && !opts.allow?.includes(res.status)) throw apiError(method, path, res.status, parsed);
    return { status: res.status, body: parsed as T, headers: res.headers };
  }

  get<T>(path: string): Promise<T> {
    return this.request<T>('GET', path).then((r) => r.body);
  }

  post<T>(path: string, body: unknown = {}): Promise<T> {
    return this.request<T>('POST', path, body).then((r) => r.body);
  }

  /** The raw response (a download), after the status check. */
  async stream(method: string, path: string, body?: unknown): Promise<Response> {
    const res = await this.send(method, path, body);
    if (!res.ok) {
      const text = await res.text();
      let parsed: unknown = text;
      try {
        parsed = JSON.parse(text);
      } catch {
        /* not JSON */
      }
      throw apiError(method, path, res.status, parsed);
    }
    return res;
  }

  private async send(method: string, path: string, body?: unknown): Promise<Response> {
    const headers: Record<string, string> = { accept: 'application/json', 'user-agent': 'aos-cli' };
    if (this.token) headers.authorization = `Bearer ${this.token}`;
    if (body !== undefined) headers['content-type'] = 'application/json';
    try {
      return await fetch(this.baseUrl + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    } catch (err) {
      const cause = (err as { cause?: { code?: string; message?: string } }).cause;
      throw new CliError(
        `the service is not reachable at ${this.baseUrl} (${cause?.code ?? cause?.message ?? (err as Error).message}); start it, or pass --url / SERVICE_URL`,
        'service_unreachable',
      );
    }
  }
}

function apiError(method: string, path: string, status: number, body: unknown): CliError {
  const b = body && typeof body === 'object' ? (body as { error?: string; code?: string }) : {};
  const hint =
    status === 401 ? ' (pass a board token with --token or SERVICE_TOKEN)' : status === 403 ? ' (the token lacks the access needed)' : '';
  return new CliError(
    `${method} ${path} answered ${status}${b.code ? ` ${b.code}` : ''}: ${b.error ?? (typeof body === 'string' ? body.slice(0, 200) : 'no message')}${hint}`,
    b.code ?? `http_${status}`,
  );
}
