import { INestApplication } from '@nestjs/common';
import { DocumentBuilder, OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import { VERSION } from './version';

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

export function buildOpenApi(app: INestApplication): OpenAPIObject {
  const config = new DocumentBuilder()
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
    .addBearerAuth()
    .build();
  const doc = SwaggerModule.createDocument(app, config);
  addErrorResponses(doc);
  return doc;
}

export function setupOpenApi(app: INestApplication): void {
  let doc: OpenAPIObject | undefined;
  SwaggerModule.setup('api/docs', app, () => (doc ??= buildOpenApi(app)), {
    jsonDocumentUrl: 'api/openapi.json',
    yamlDocumentUrl: 'api/openapi.yaml',
    useGlobalPrefix: false,
  });
}
