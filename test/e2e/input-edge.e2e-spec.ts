import { createCompany } from '../support/factories';
import { createTestApp, TestApp } from '../support/test-app';
import { AUTHENTICATED } from '../support/users';

/** Input that Postgres or validation cannot take is refused at the edge, once, for every route: 400 naming the field. */
describe('input at the edge', () => {
  let t: TestApp;
  let companyId: string;
  beforeAll(async () => {
    t = await createTestApp();
    companyId = (await createCompany(t)).id;
  });
  afterAll(() => t.close());

  it('refuses a NUL character in a body string, naming the field', async () => {
    const res = await t.http.post(`/api/companies/${companyId}/issues`).send({ title: 'a\u0000b' }).expect(400);
    expect(res.body).toMatchObject({ code: 'invalid_characters', field: 'title' });
  });

  it('refuses a NUL character in a nested key, a query value and a path segment', async () => {
    const nested = await t.http
      .post(`/api/companies/${companyId}/agents`)
      .send({ name: 'n', adapterType: 'process', adapterConfig: { ['k\u0000']: 1 } })
      .expect(400);
    expect(nested.body.field).toBe('adapterConfig.k\u0000');
    const query = await t.http.get(`/api/companies/${companyId}/activity?entityId=%00`).expect(400);
    expect(query.body).toMatchObject({ code: 'invalid_characters', field: 'entityId' });
    const path = await t.http.get('/api/agents/%00').expect(400);
    expect(path.body).toMatchObject({ code: 'invalid_characters', field: 'agentId' });
    await t.http.get(`/api/companies/${companyId}/users/%00/profile`).expect(400);
  });

  it('refuses JSON nested deeper than 32 levels before validation (a 3,000-level body is a 400, not a stack overflow)', async () => {
    const deep = '{"title":"x","labels":' + '['.repeat(3000) + ']'.repeat(3000) + '}';
    const res = await t.http.post(`/api/companies/${companyId}/issues`).set('content-type', 'application/json').send(deep).expect(400);
    expect(res.body.code).toBe('body_too_deep');
  });

  it('answers 413 in the error shape above the 1 MiB body limit', async () => {
    const res = await t.http
      .post('/api/companies')
      .send({ name: 'x'.repeat(1_100_000) })
      .expect(413);
    expect(res.body).toEqual({ error: expect.any(String), code: 'payload_too_large' });
  });

  it('null is 400 for a required field and clears a nullable one', async () => {
    await t.http.patch(`/api/companies/${companyId}`).send({ name: null }).expect(400);
    const goal = (await t.http.post(`/api/companies/${companyId}/goals`).send({ title: 'g', description: 'd' }).expect(201)).body;
    await t.http.patch(`/api/goals/${goal.id}`).send({ title: null }).expect(400);
    const level = await t.http.patch(`/api/goals/${goal.id}`).send({ level: null }).expect(400);
    expect(level.body.fields[0].field).toBe('level');
    const cleared = await t.http.patch(`/api/goals/${goal.id}`).send({ description: null }).expect(200);
    expect(cleared.body.description).toBeNull();
    const project = (
      await t.http
        .post(`/api/companies/${companyId}/projects`)
        .send({ name: 'p', env: { A: 'b' } })
        .expect(201)
    ).body;
    const noEnv = await t.http.patch(`/api/projects/${project.id}`).send({ env: null }).expect(200);
    expect(noEnv.body.env).toEqual({});
    await t.http.patch(`/api/projects/${project.id}`).send({ name: null }).expect(400);
  });

  describe('sign-up and sign-in (authenticated mode)', () => {
    let a: TestApp;
    beforeAll(async () => {
      a = await createTestApp({ env: AUTHENTICATED, databaseUrl: t.databaseUrl });
    });
    afterAll(() => a.close());

    it('refuses a lone surrogate in the email at sign-up', async () => {
      const res = await a.http
        .post('/api/auth/sign-up/email')
        .set('content-type', 'application/json')
        .send('{"email":"x\\ud800@example.com","password":"secret-secret","name":"x"}')
        .expect(400);
      expect(res.body).toMatchObject({ code: 'invalid_unicode', field: 'email' });
    });

    it('refuses a 3,000-character email at sign-in before the rate limiter stores anything', async () => {
      const res = await a.http
        .post('/api/auth/sign-in/email')
        .send({ email: `${'a'.repeat(3000)}@example.com`, password: 'x' })
        .expect(400);
      expect(res.body.code).toBe('validation_failed');
    });
  });
});
