import { randomUUID } from 'node:crypto';
import { bearer, createCompany } from '../support/factories';
import { createIssue, insertAgent, insertRun } from '../support/issues';
import { createGoal, createProject, insertAgentWithKey } from '../support/projects';
import { createTestApp, TestApp } from '../support/test-app';
import { AUTHENTICATED, auth, ownedCompany } from '../support/users';

/**
 * Issue 41: a tenant cannot tell another company's record from an unknown one by its id in a path.
 * Routes without `:companyId` resolve their company in the guard and answer both with the same 404;
 * a company id in the path answers a caller who cannot see every company with the same 403.
 */
describe('ids in paths: another company answers like an unknown id (issue 41)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  const same = async (known: string, unknown: string, token: string, status: number) => {
    const a = await t.http.get(known).set(bearer(token));
    const b = await t.http.get(unknown).set(bearer(token));
    expect({ path: known, status: a.status }).toEqual({ path: known, status });
    expect(b.status).toBe(status);
    // the same body, apart from the id the caller sent itself
    expect(a.text.split(known.split('/').pop()!).join('<id>')).toBe(b.text.split(unknown.split('/').pop()!).join('<id>'));
  };

  it('GET of issues, agents, heartbeat runs, goals and projects of another company: the 404 of an unknown id', async () => {
    const a = await createCompany(t);
    const b = await createCompany(t);
    const outsider = await insertAgentWithKey(t, b.id);
    const issue = await createIssue(t, a.id);
    const agent = await insertAgent(t, a.id);
    const runId = await insertRun(t, agent, 'running');
    const goal = await createGoal(t, a.id);
    const project = await createProject(t, a.id);
    for (const [collection, id] of [
      ['issues', issue.id],
      ['agents', agent.id],
      ['heartbeat-runs', runId],
      ['goals', goal.id],
      ['projects', project.id],
    ]) {
      await same(`/api/${collection}/${id}`, `/api/${collection}/${randomUUID()}`, outsider.token, 404);
    }
    // deeper routes and writes too
    await same(`/api/issues/${issue.id}/comments`, `/api/issues/${randomUUID()}/comments`, outsider.token, 404);
    await same(`/api/heartbeat-runs/${runId}/log`, `/api/heartbeat-runs/${randomUUID()}/log`, outsider.token, 404);
    const patch = await t.http.patch(`/api/issues/${issue.id}`).set(bearer(outsider.token)).send({ title: 'x' });
    expect(patch.status).toBe(404);
    // the owner's callers still reach them
    const insider = await insertAgentWithKey(t, a.id);
    await t.http.get(`/api/issues/${issue.id}`).set(bearer(insider.token)).expect(200);
    await t.http.get(`/api/heartbeat-runs/${runId}`).set(bearer(insider.token)).expect(200);
  });

  it('a company id in the path: another company and an unknown one are the same 403 to a tenant; the board still gets 404 for an unknown one', async () => {
    const a = await createCompany(t);
    const b = await createCompany(t);
    const outsider = await insertAgentWithKey(t, b.id);
    await same(`/api/companies/${a.id}`, `/api/companies/${randomUUID()}`, outsider.token, 403);
    await same(`/api/companies/${a.id}/issues`, `/api/companies/${randomUUID()}/issues`, outsider.token, 403);
    await t.http.get(`/api/companies/${randomUUID()}`).expect(404);
  });
});

describe('tool connections and profiles: a board member of another company gets the 404 of an unknown id (issue 41)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: AUTHENTICATED });
  });
  afterAll(() => t.close());

  it('GET and PATCH of another company’s tool connection and profile answer like unknown ids; the owner reaches them', async () => {
    const { company, owner } = await ownedCompany(t);
    const { owner: outsider } = await ownedCompany(t);
    const conn = await t.http
      .post(`/api/companies/${company.id}/tools/connections`)
      .set(auth(owner.token))
      .send({ name: 'Memory', transport: 'local_stdio', transportConfig: { command: 'server-memory' } })
      .expect(201);
    const profile = await t.http.post(`/api/companies/${company.id}/tools/profiles`).set(auth(owner.token)).send({ name: 'p' }).expect(201);
    for (const [base, id, label] of [
      ['/api/tool-connections', conn.body.id as string, 'Tool connection'],
      ['/api/tool-profiles', profile.body.id as string, 'Tool profile'],
    ]) {
      const unknown = randomUUID();
      for (const method of ['get', 'patch'] as const) {
        if (base === '/api/tool-profiles' && method === 'get') continue;
        const a = await t.http[method](`${base}/${id}`).set(auth(outsider.token)).send({ name: 'x' });
        const b = await t.http[method](`${base}/${unknown}`).set(auth(outsider.token)).send({ name: 'x' });
        expect([method, base, a.status, a.body]).toEqual([method, base, 404, b.body]);
        expect(b.status).toBe(404);
        expect(a.body.error).toContain(label);
      }
    }
    await t.http.get(`/api/tool-connections/${conn.body.id}`).set(auth(owner.token)).expect(200);
  });
});
