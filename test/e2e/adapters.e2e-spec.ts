import { createAgentWithKey } from '../support/agents';
import { createCompany } from '../support/factories';
import { createTestApp, TestApp } from '../support/test-app';

describe('adapters registry routes', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  describe('GET /api/adapters', () => {
    it('lists the built-in types with their schemas and whether they can execute', async () => {
      const res = await t.http.get('/api/adapters').expect(200);
      const types = res.body.map((a: { type: string }) => a.type);
      expect(types).toEqual(expect.arrayContaining(['process', 'http', 'runtime_a_local', 'runtime_g', 'gateway_a']));
      expect(res.body.find((a: { type: string }) => a.type === 'process')).toMatchObject({
        builtIn: true,
        executable: true,
        configSchema: expect.any(Object),
      });
    });

    it('refuses agent callers', async () => {
      const c = await createCompany(t);
      const { token } = await createAgentWithKey(t, c.id);
      await t.http.get('/api/adapters').set('Authorization', `Bearer ${token}`).expect(403);
    });
  });

  describe('GET /api/adapters/:type/config-schema', () => {
    it('returns the schema, 404 for an unknown type', async () => {
      const res = await t.http.get('/api/adapters/http/config-schema').expect(200);
      expect(res.body).toHaveProperty('properties');
      await t.http.get('/api/adapters/nope/config-schema').expect(404);
    });
  });

  describe('DELETE /api/adapters/:type', () => {
    it('refuses to delete a built-in type (409) and keeps it registered; unknown types 404', async () => {
      const res = await t.http.delete('/api/adapters/process').expect(409);
      expect(res.body.code).toBe('adapter_builtin');
      expect((await t.http.get('/api/adapters')).body.some((a: { type: string }) => a.type === 'process')).toBe(true);
      await t.http.delete('/api/adapters/nope').expect(404);
    });
  });
});
