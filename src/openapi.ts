import { INestApplication } from '@nestjs/common';
import { DocumentBuilder, OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import { VERSION } from './version';

/** The security scheme of `GET /api/metrics` (its optional bearer token). */
export const METRICS_SECURITY = 'metrics_token';

const ERROR_SCHEMA = {
  type: 'object',
  required: ['error', 'code'],
  properties: {
    error: { type: 'string', description: 'human-readable message' },
    code: { type: 'string', description: 'stable machine-readable code' },
    reason: { type: 'string', description: 'authorization decision reason, when one applies' },
    fields: {
      type: 'array',
      description: 'validation failures',
      items: { type: 'object', properties: { field: { type: 'string' }, messages: { type: 'array', items: { type: 'string' } } } },
    },
  },
  additionalProperties: true,
};

const DEFAULT_ERRORS: Record<string, string> = {
  '400': 'Invalid input (validation failures name the fields)',
  '401': 'No valid credentials',
  '403': 'Caller not allowed, or no access to the company',
  '404': 'Unknown id',
};

/** Every operation documents the error body shape; the route's callers are shown as `x-callers`. */
function addErrorResponses(doc: OpenAPIObject): void {
  doc.components = doc.components ?? {};
  doc.components.schemas = { ...(doc.components.schemas ?? {}), ErrorResponse: ERROR_SCHEMA };
  for (const item of Object.values(doc.paths)) {
    for (const op of Object.values(item) as Array<{ responses?: Record<string, unknown>; 'x-callers'?: { public?: boolean } }>) {
      if (!op || typeof op !== 'object' || !('responses' in op)) continue;
      op.responses = op.responses ?? {};
      const errors = 'requestBody' in op ? { ...DEFAULT_ERRORS, '413': 'Body larger than 1 MiB' } : DEFAULT_ERRORS;
      for (const [status, description] of Object.entries(errors)) {
        if (op['x-callers']?.public && (status === '401' || status === '403')) continue;
        const existing = op.responses[status] as { description?: string } | undefined;
        op.responses[status] = {
          description: existing?.description ?? description,
          content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorResponse' } } },
        };
      }
    }
  }
}

/** Top-level tags, in the order Swagger UI shows them; every tag an operation uses is listed here (a test checks). */
export const OPENAPI_TAGS: ReadonlyArray<[name: string, description: string]> = [
  ['companies', 'Tenants: create, brand, archive; everything else lives inside a company'],
  ['members', 'Company memberships of users and agents, their roles and permission grants'],
  ['invites', 'Invitations to join a company'],
  ['join-requests', 'Join requests filed through invites, their approval and the agent key claim'],
  ['agents', 'The org chart: hire, configure, pause, terminate agents; API keys; wakeups; skills of an agent'],
  ['approvals', 'Board decisions on hires and suggested changes'],
  ['issues', 'Work items: list and search, checkout, comments, labels, relations, interactions, tree holds'],
  ['issue documents', 'Revisioned markdown documents of an issue, locks and annotation threads'],
  ['attachments', 'Files attached to issues'],
  ['work products', 'What an issue produced: pull requests, branches, previews, artifacts'],
  ['artifacts', 'Agent-authored documents, attachments and artifacts of a company, flattened or grouped'],
  ['documents', 'Plan decompositions: an issue plan document accepted as child issues'],
  ['assets', 'Uploaded files served by id (logos, images)'],
  ['goals', 'Company, team and task goals and their tree'],
  ['projects', 'Projects, their workspaces and workspace runtime services'],
  ['heartbeat', 'Wakeups and heartbeat runs: wake, list, read, cancel, run logs, live runs, completion callbacks, timers'],
  ['events', 'The live event stream of a company (Server-Sent Events and WebSocket)'],
  ['costs', 'Cost events, spend reports and finance events'],
  ['budgets', 'Budget policies, incidents and their resolution'],
  ['secrets', 'Company secrets (board) and the run-bound secrets of the calling agent'],
  ['routines', 'Recurring work: routines, triggers and their executions'],
  ['built-in agents', 'Agents shipped with the service (briefs, learning, reflection coach)'],
  ['skills', 'Company skills, the shipped catalog, imports, audits and updates'],
  ['portability', 'Company packages: export and import'],
  ['folders', 'Folders that group projects, routines and skills in the sidebar'],
  ['preferences', 'Per-user curation: resource memberships, sidebar preferences, inbox dismissals'],
  ['dashboard', 'Board views: dashboard, sidebar badges'],
  ['board', 'Board read models: what needs attention, the work timeline, decision queues'],
  ['activity', 'The append-only audit trail and the agent-actions audit'],
  ['feedback', 'Board votes on agent output and the sharing consent'],
  ['adapters', 'Adapter types and external adapter packages (instance admins)'],
  ['ai-connections', 'Model-provider connections (API key as a company secret, base URL, default model) agents are configured from'],
  ['environments', 'Where agents run: this service runs every agent on its own host (the local driver); no remote environments'],
  ['plugins', 'Plugins: install, configure, jobs, webhooks, tools, UI contributions'],
  ['mcp', 'The service as an MCP server (Streamable HTTP): its API as tools for agents in runs and for the board (docs/mcp.md)'],
  ['tools', 'Company tool connections (MCP servers), profiles with per-tool policies, the gateway’s action requests, the gallery'],
  ['auth', 'Sign-up, sign-in, sessions, board API tokens, the board claim'],
  ['instance', 'Instance settings, administration, database backups'],
  ['announcements', 'Instance announcements'],
  ['llms', 'Plain-text guides for agents and LLM tools (agent configuration, icons)'],
  ['system', 'Health and readiness probes, Prometheus metrics'],
];

/** The credentials of every caller kind are opaque bearer tokens (no format a client should parse). */
const BEARER_DESCRIPTION =
  'An opaque token: a board session or board API token (`svc_…`), an agent API key (`svc_ak_…`), or the run token a ' +
  'heartbeat run receives as `SERVICE_API_KEY`. In `local_trusted` mode board calls need none.';

export function buildOpenApi(app: INestApplication): OpenAPIObject {
  const builder = new DocumentBuilder()
    .setTitle('Agent Orchestration Service')
    .setDescription(
      'Multi-tenant service that runs organisations of autonomous software agents. ' +
        'Board callers: the implicit local board (local_trusted mode) or a user session/board token. ' +
        'Agent callers: `Authorization: Bearer <agent API key or run token>`, with `X-Service-Run-Id` naming the current run. ' +
        'Each operation lists its allowed callers under `x-callers`. Errors are JSON `{ error, code, ... }`. ' +
        'Input limits for every route: a JSON body of at most 1 MiB (413 `payload_too_large` above it), nested at most 32 levels ' +
        '(400 `body_too_deep`); no NUL character and no lone UTF-16 surrogate in any string, key, query value or path segment ' +
        '(400 `invalid_characters` / `invalid_unicode`, naming the field).',
    )
    .setVersion(VERSION)
    // addBearerAuth() would say `bearerFormat: JWT`
    .addSecurity('bearer', { type: 'http', scheme: 'bearer', description: BEARER_DESCRIPTION })
    .addSecurity(METRICS_SECURITY, { type: 'http', scheme: 'bearer', description: 'The value of `SERVICE_METRICS_TOKEN`, when set.' });
  for (const [name, description] of OPENAPI_TAGS) builder.addTag(name, description);
  const doc = SwaggerModule.createDocument(app, builder.build());
  addErrorResponses(doc);
  return doc;
}

export function setupOpenApi(app: INestApplication): void {
  let doc: OpenAPIObject | undefined;
  SwaggerModule.setup('api/docs', app, () => (doc ??= buildOpenApi(app)), {
    jsonDocumentUrl: 'api/openapi.json',
    yamlDocumentUrl: 'api/openapi.yaml',
    useGlobalPrefix: false,
    // keep the token entered under "Authorize" across reloads of the page
    swaggerOptions: { persistAuthorization: true },
  });
}
