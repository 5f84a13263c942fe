import { createTestApp, TestApp } from '../support/test-app';

/** `GET /`: the page a newcomer sees opening the service in a browser (it used to be a 404 JSON). */
describe('GET / (the front page)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  const linksOf = (html: string): string[] => [...html.matchAll(/href="([^"]+)"/g)].map((m) => m[1]);

  it('answers a small HTML page without credentials: what this is, Swagger UI, the OpenAPI document, health, the docs, the board UI', async () => {
    const res = await t.http.get('/').expect(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.headers['content-security-policy']).toContain("default-src 'none'");
    expect(res.text).toContain('<title>Agent Orchestration Service</title>');
    expect(res.text).toContain('local_trusted');
    expect(linksOf(res.text)).toEqual(
      expect.arrayContaining(['/api/docs', '/api/openapi.json', '/api/openapi.yaml', '/api/health', '/api/health/ready', '/api/metrics']),
    );
    expect(res.text).toContain('docs/');
    // how a board UI reaches the API: its base URL
    expect(res.text).toContain(`${t.config.publicUrl}/api`);
  });

  it('links only to pages that answer', async () => {
    const res = await t.http.get('/').expect(200);
    for (const href of linksOf(res.text)) {
      const page = await t.http.get(href);
      expect({ href, status: page.status }).toEqual({ href, status: 200 });
    }
  });

  it('answers HEAD, and stays outside the API: /api itself and unknown paths are still JSON 404s, the OpenAPI document does not list it', async () => {
    await t.http.head('/').expect(200);
    for (const p of ['/api', '/index.html', '/x']) {
      const res = await t.http.get(p).expect(404);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
    }
    const doc = (await t.http.get('/api/openapi.json').expect(200)).body;
    expect(Object.keys(doc.paths)).not.toContain('/');
    expect(Object.keys(doc.paths).every((p) => p.startsWith('/api/'))).toBe(true);
  });

  it('is public in authenticated mode too, and tells how to sign in', async () => {
    const auth = await createTestApp({ env: { SERVICE_DEPLOYMENT_MODE: 'authenticated' } });
    try {
      const res = await auth.http.get('/').expect(200);
      expect(res.text).toContain('<code>authenticated</code> mode');
      expect(res.text).toContain('aos token create');
      await auth.http.get('/api/companies').expect(401);
    } finally {
      await auth.close();
    }
  });
});
