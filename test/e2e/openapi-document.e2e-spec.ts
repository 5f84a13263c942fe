import * as fs from 'node:fs';
import * as path from 'node:path';
import { createTestApp, TestApp } from '../support/test-app';

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

/**
 * The OpenAPI document is committed (docs/openapi.json) so that every interface change shows in
 * review. This fails when the served document differs; `UPDATE_OPENAPI=1 npx jest
 * test/e2e/openapi-document` writes the new one.
 */
describe('the committed OpenAPI document', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it('is the one the service serves', async () => {
    const served = JSON.stringify((await t.http.get('/api/openapi.json').expect(200)).body, null, 2) + '\n';
    if (process.env.UPDATE_OPENAPI === '1') fs.writeFileSync(COMMITTED, served);
    const committed = fs.existsSync(COMMITTED) ? fs.readFileSync(COMMITTED, 'utf8') : '';
    if (committed !== served) {
      const a = committed.split('\n');
      const b = served.split('\n');
      const at = a.findIndex((line, i) => line !== b[i]);
      throw new Error(
        `docs/openapi.json differs from the served document (first at line ${at + 1}: ${JSON.stringify(a[at])} vs ${JSON.stringify(b[at])}). ` +
          'If the interface change is intended: UPDATE_OPENAPI=1 npx jest test/e2e/openapi-document',
      );
    }
  });

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
