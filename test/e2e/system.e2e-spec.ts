import { createTestApp, TestApp } from '../support/test-app';

describe('system: health, identity, discovery, errors', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  describe('GET /api/health', () => {
    it('reports status, version, deployment mode and database reachability without credentials', async () => {
      const res = await t.http.get('/api/health').expect(200);
      expect(res.body).toMatchObject({ status: 'ok', deploymentMode: 'local_trusted', database: { reachable: true } });
      expect(typeof res.body.version).toBe('string');
    });

    it('answers with a request id header, echoing a valid given one', async () => {
      const res = await t.http.get('/api/health').set('X-Request-Id', 'abc-123');
      expect(res.headers['x-request-id']).toBe('abc-123');
    });
  });

  describe('GET /api/cli-auth/me', () => {
    it('describes the implicit local board', async () => {
      const res = await t.http.get('/api/cli-auth/me').expect(200);
      expect(res.body).toMatchObject({
        persona: 'board',
        scope: 'instance',
        credential: 'local_implicit',
        user: { isInstanceAdmin: true },
      });
    });

    it('rejects an unknown bearer token with 401', async () => {
      const res = await t.http.get('/api/cli-auth/me').set('Authorization', 'Bearer svc_ak_nope').expect(401);
      expect(res.body.code).toBe('unauthorized');
    });

    it('rejects a malformed Authorization header with 401', async () => {
      await t.http.get('/api/cli-auth/me').set('Authorization', 'Basic abc').expect(401);
    });
  });

  describe('GET /api/openapi.json and /api/docs', () => {
    it('describes every route with callers and the error body', async () => {
      const res = await t.http.get('/api/openapi.json').expect(200);
      expect(res.body.openapi).toMatch(/^3\./);
      expect(Object.keys(res.body.paths)).toEqual(expect.arrayContaining(['/api/health', '/api/companies', '/api/companies/{companyId}']));
      expect(res.body.components.schemas.ErrorResponse).toBeDefined();
      const op = res.body.paths['/api/companies'].post;
      expect(op['x-callers']).toEqual({ callers: ['board'], runBound: false });
      expect(op.responses['400']).toBeDefined();
    });

    it('serves Swagger UI', async () => {
      const res = await t.http.get('/api/docs/').redirects(1);
      expect(res.status).toBe(200);
      expect(res.text).toContain('swagger');
    });
  });

  describe('errors', () => {
    it('answers an unknown route with JSON 404', async () => {
      const res = await t.http.get('/api/no-such-route').expect(404);
      expect(res.body).toEqual({ error: 'Route not found: GET /api/no-such-route', code: 'route_not_found' });
    });

    it('answers malformed JSON with 400 malformed_json', async () => {
      const res = await t.http.post('/api/companies').set('Content-Type', 'application/json').send('{bad').expect(400);
      expect(res.body.code).toBe('malformed_json');
      expect(JSON.stringify(res.body)).not.toMatch(/at .*\.js/);
    });

    it('names the offending fields on validation failures', async () => {
      const res = await t.http.post('/api/companies').send({ name: 42, budgetMonthlyCents: -1 }).expect(400);
      expect(res.body.code).toBe('validation_failed');
      expect(res.body.fields.map((f: { field: string }) => f.field).sort()).toEqual(['budgetMonthlyCents', 'name']);
    });

    it('rejects a JSON body that is not an object', async () => {
      const res = await t.http.post('/api/companies').set('Content-Type', 'application/json').send('[1,2]');
      expect(res.status).toBe(400);
    });

    it('reads only objects and arrays as JSON bodies; an empty body is {}', async () => {
      for (const text of ['123', '"name"', 'null', 'true']) {
        const res = await t.http.post('/api/companies').set('Content-Type', 'application/json').send(text).expect(400);
        expect(res.body.code).toBe('malformed_json');
      }
      const empty = await t.http.post('/api/companies').set('Content-Type', 'application/json').send('').expect(400);
      expect(empty.body.code).toBe('validation_failed');
    });

    it('refuses prototype keys in JSON bodies', async () => {
      const res = await t.http
        .post('/api/companies')
        .set('Content-Type', 'application/json')
        .send('{"name":"P","__proto__":{"admin":true}}')
        .expect(400);
      expect(res.body.code).toBe('malformed_json');
    });

    it('answers a body over 1 MiB with 413 and writes nothing', async () => {
      const name = `Huge ${'x'.repeat(1024 * 1024)}`;
      const res = await t.http.post('/api/companies').send({ name }).expect(413);
      expect(res.body.code).toBe('payload_too_large');
      const list = await t.http.get('/api/companies').expect(200);
      expect(list.body.some((c: { name: string }) => c.name.startsWith('Huge'))).toBe(false);
    });

    it('answers a body of another media type with 415', async () => {
      const res = await t.http.post('/api/companies').set('Content-Type', 'text/plain').send('name=x').expect(415);
      expect(res.body.code).toBe('unsupported_media_type');
    });

    it('ignores a trailing slash and keeps the query string out of error messages', async () => {
      await t.http.get('/api/health/').expect(200);
      const res = await t.http.get('/api/no-such-route?token=secret').expect(404);
      expect(res.body.error).toBe('Route not found: GET /api/no-such-route');
    });

    it('answers malformed URLs in the error shape without echoing the path', async () => {
      const bad = await t.http.get('/api/issues/%E0%A4%A').expect(400);
      expect(bad.body).toEqual({ error: 'Malformed URL (invalid percent-encoding)', code: 'bad_request' });
      // a long parameter still reaches the route (its answer names what was wrong) ...
      const long = await t.http.get(`/api/issues/${'a'.repeat(300)}`).expect(404);
      expect(long.body.code).toBe('not_found');
      // ... up to 2 KiB
      const huge = await t.http.get(`/api/invites/svc_iv_${'a'.repeat(3000)}`).expect(414);
      expect(huge.body).toEqual({ error: 'A path parameter is too long', code: 'uri_too_long' });
    });

    it('gives each request a fresh id when the given one is not a plain token', async () => {
      const res = await t.http.get('/api/health').set('X-Request-Id', 'bad id with spaces').expect(200);
      expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    });
  });
});

describe('system: authenticated mode without credentials', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: { SERVICE_DEPLOYMENT_MODE: 'authenticated' } });
  });
  afterAll(() => t.close());

  it('refuses board routes with 401 and keeps health public', async () => {
    await t.http.get('/api/companies').expect(401);
    await t.http.get('/api/cli-auth/me').expect(401);
    await t.http.get('/api/health').expect(200);
  });
});
