import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ServiceProcess, startService } from '../support/service-process';
import { createTestApp, createTestDatabase, TestApp } from '../support/test-app';

/** Every domain's error table (src/modules/<module>/<domain>.errors.ts), loaded by name. */
function errorTables(): Record<string, Record<string, number>> {
  const root = path.join(__dirname, '..', '..', 'src', 'modules');
  const tables: Record<string, Record<string, number>> = {};
  for (const dir of fs.readdirSync(root)) {
    for (const f of fs.readdirSync(path.join(root, dir)).filter((x) => x.endsWith('.errors.ts'))) {
      const mod = require(path.join(root, dir, f)) as Record<string, unknown>;
      for (const [name, value] of Object.entries(mod)) if (name.endsWith('_ERRORS')) tables[name] = value as Record<string, number>;
    }
  }
  return tables;
}

const COMMITTED = path.join(__dirname, '..', '..', 'docs', 'openapi.json');

jest.setTimeout(420_000); // may build the service first (see ensureBuiltDir)

type Operation = Record<string, any>;
function operations(doc: any): Array<{ path: string; method: string; op: Operation }> {
  return Object.entries(doc.paths as Record<string, Record<string, Operation>>).flatMap(([p, item]) =>
    Object.entries(item).map(([method, op]) => ({ path: p, method, op })),
  );
}

/**
 * The OpenAPI document is committed (docs/openapi.json) so that every interface change shows in
 * review, and made from the built service (scripts/build.js output: the swagger compiler plugin adds the
 * DTO and response schemas there). This starts the built service and fails when its document
 * differs; `npm run openapi` writes the new one (`UPDATE_OPENAPI=1` here does the same).
 */
describe('the committed OpenAPI document', () => {
  let svc: ServiceProcess;
  let served: any;
  beforeAll(async () => {
    svc = await startService({
      DATABASE_URL: await createTestDatabase(),
      SERVICE_DATA_DIR: fs.mkdtempSync(path.join(os.tmpdir(), 'svc-oa-')),
    });
    served = (await svc.api('GET', '/api/openapi.json')).body;
  });
  afterAll(() => svc?.stop());

  it('is the one the built service serves', () => {
    const text = JSON.stringify(served, null, 2) + '\n';
    if (process.env.UPDATE_OPENAPI === '1') fs.writeFileSync(COMMITTED, text);
    const committed = fs.existsSync(COMMITTED) ? fs.readFileSync(COMMITTED, 'utf8') : '';
    if (committed !== text) {
      const a = committed.split('\n');
      const b = text.split('\n');
      const at = a.findIndex((line, i) => line !== b[i]);
      throw new Error(
        `docs/openapi.json differs from the built service's document (first at line ${at + 1}: ${JSON.stringify(a[at])} vs ${JSON.stringify(b[at])}). ` +
          'If the interface change is intended: npm run openapi',
      );
    }
  });

  it('has the response and DTO schemas of the compiler plugin', () => {
    const ops = operations(served);
    const withSuccessSchema = ops.filter(({ op }) =>
      Object.entries(op.responses ?? {}).some(
        ([status, r]: [string, any]) => status.startsWith('2') && Object.values(r.content ?? {}).some((c: any) => c.schema),
      ),
    );
    expect(withSuccessSchema.length).toBeGreaterThan(ops.length * 0.8);
    expect(served.components.schemas.CreateCompanyDto.properties.brandColor).toMatchObject({ type: 'string' });
    expect(served.paths['/api/companies'].post.responses['201'].content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/CompanyResponseDto',
    });
  });

  it('describes bearer tokens as opaque, and the optional metrics token', () => {
    const schemes = served.components.securitySchemes;
    expect(schemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(schemes.bearer.bearerFormat).toBeUndefined();
    expect(schemes.bearer.description).toContain('svc_');
    expect(served.paths['/api/metrics'].get.security).toEqual(expect.arrayContaining([{ metrics_token: [] }, {}]));
    expect(served.paths['/api/metrics'].get.security).toHaveLength(2);
  });

  it('declares X-Service-Run-Id on every operation agents call, run-bound ones included', () => {
    const runHeader = (op: Operation) => (op.parameters ?? []).filter((p: any) => p.in === 'header' && p.name === 'X-Service-Run-Id');
    const agentOps = operations(served).filter(({ op }) => op['x-callers']?.callers?.includes('agent'));
    expect(agentOps.length).toBeGreaterThan(100);
    const missing = agentOps.filter(({ op }) => runHeader(op).length !== 1).map(({ method, path: p }) => `${method} ${p}`);
    expect(missing).toEqual([]);
    const runBound = agentOps.filter(({ op }) => op['x-callers'].runBound);
    expect(runBound.map(({ method, path: p }) => `${method} ${p}`)).toEqual(
      expect.arrayContaining(['get /api/agents/me/secrets', 'post /api/agents/me/secrets/{key}/value']),
    );
    for (const { op } of runBound) expect(runHeader(op)[0].description).toMatch(/live heartbeat run/);
    const boardOnly = operations(served).filter(({ op }) => op['x-callers']?.callers && !op['x-callers'].callers.includes('agent'));
    expect(boardOnly.length).toBeGreaterThan(10);
    for (const { op } of boardOnly) expect(runHeader(op)).toEqual([]);
  });

  it('lists its tags at the top, each with a description, and every operation is tagged with one of them', () => {
    const declared = new Map<string, string>(
      (served.tags as Array<{ name: string; description: string }>).map((t) => [t.name, t.description]),
    );
    for (const description of declared.values()) expect(description).toMatch(/\w{3}/);
    const used = new Set(operations(served).flatMap(({ op }) => (op.tags ?? []) as string[]));
    expect([...used].filter((t) => !declared.has(t))).toEqual([]);
    expect(
      operations(served)
        .filter(({ op }) => !op.tags?.length)
        .map(({ method, path: p }) => `${method} ${p}`),
    ).toEqual([]);
  });

  it('Swagger UI keeps the entered token across reloads', async () => {
    const res = await fetch(`${svc.baseUrl}/api/docs/swagger-ui-init.js`);
    expect(res.status).toBe(200);
    expect(await res.text()).toMatch(/"persistAuthorization":\s*true/);
  });
});

describe('the OpenAPI document of the in-process app', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it('lists on the routes of each domain the error codes it may answer, each with its one status', async () => {
    const doc = (await t.http.get('/api/openapi.json').expect(200)).body;
    const listed = new Map<string, number>();
    for (const ops of Object.values(doc.paths as Record<string, Record<string, any>>)) {
      for (const op of Object.values(ops)) {
        for (const [code, status] of Object.entries((op['x-error-codes'] ?? {}) as Record<string, number>)) {
          listed.set(code, status);
          expect(String(op.responses[String(status)]?.description ?? '')).toMatch(/./);
        }
      }
    }
    const tables = errorTables();
    expect(Object.keys(tables).length).toBeGreaterThan(20);
    const missing: string[] = [];
    for (const [name, table] of Object.entries(tables)) {
      for (const [code, status] of Object.entries(table)) if (!listed.has(code)) missing.push(`${name}.${code} (${status})`);
    }
    expect(missing).toEqual([]);
    const create = doc.paths['/api/companies/{companyId}/folders'].post;
    expect(create['x-error-codes']).toMatchObject({ folder_name_taken: 409, folder_cycle: 422 });
    expect(create.responses['409'].description).toContain('`folder_name_taken`');
  });
});
