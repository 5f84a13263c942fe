import * as fs from 'node:fs';
import * as path from 'node:path';
import { createTestApp, TestApp } from '../support/test-app';

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
});
