import { randomUUID } from 'node:crypto';
import { bearer, createCompany } from '../support/factories';
import { createIssue, insertAgent, insertRun } from '../support/issues';
import { createGoal, createProject, insertAgentWithKey } from '../support/projects';
import { createTestApp, TestApp } from '../support/test-app';
import { AUTHENTICATED, auth, ownedCompany } from '../support/users';

const PNG_1PX = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');

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

/**
 * Issue 45: every family of routes without `:companyId` (the route snapshot lists them) resolves its
 * company in the guard. A board member of another company gets, for a record of each family, the
 * same 404 as for an unknown id; the owner still reaches it.
 */
describe('route families without :companyId: another company’s record answers like an unknown id (issue 45)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: AUTHENTICATED });
  });
  afterAll(() => t.close());

  it('GET or PATCH of one record of each family: the 404 of an unknown id, with the family’s label', async () => {
    const { owner } = await ownedCompany(t);
    const company = (
      await t.http
        .post('/api/companies')
        .set(auth(owner.token))
        .send({ name: `Hires ${randomUUID().slice(0, 8)}`, requireBoardApprovalForNewAgents: true })
    ).body as { id: string };
    const { owner: outsider } = await ownedCompany(t);
    const as = auth(owner.token);
    const created = async (path: string, body: object): Promise<Record<string, any>> => {
      const res = await t.http.post(path).set(as).send(body);
      expect({ path, status: res.status, body: res.status === 201 ? undefined : res.body }).toEqual({ path, status: 201, body: undefined });
      return res.body;
    };
    const co = `/api/companies/${company.id}`;
    const agent = await insertAgent(t, company.id);
    const runId = await insertRun(t, agent, 'running');
    const issue = await createIssue(t, company.id, {}, owner.token);
    const comment = await created(`/api/issues/${issue.id}/comments`, { body: 'hello' });
    const goal = await created(`${co}/goals`, { title: 'G' });
    const project = await created(`${co}/projects`, { name: `P ${randomUUID().slice(0, 8)}` });
    const workspace = await created(`/api/projects/${project.id}/workspaces`, { name: 'w', repoUrl: 'https://example.invalid/r.git' });
    const hire = await created(`${co}/agent-hires`, {
      name: 'Hire',
      role: 'general',
      adapterType: 'process',
      adapterConfig: { command: 'true' },
    });
    const routine = await created(`${co}/routines`, { title: 'Daily', assigneeAgentId: agent.id });
    const trigger = await created(`/api/routines/${routine.id}/triggers`, { kind: 'schedule', cronExpression: '*/5 * * * *' });
    const secret = await created(`${co}/secrets`, { name: 'S1', value: 'v' });
    const upload = await t.http
      .post(`${co}/issues/${issue.id}/attachments`)
      .set(as)
      .attach('file', Buffer.from('hi'), { filename: 'a.txt', contentType: 'text/plain' });
    expect(upload.status).toBe(201);
    const logo = await t.http.post(`${co}/logo`).set(as).attach('file', PNG_1PX, { filename: 'a.png', contentType: 'image/png' });
    expect(logo.status).toBe(201);
    const connection = await created(`${co}/tools/connections`, {
      name: 'Memory',
      transport: 'local_stdio',
      transportConfig: { command: 'server-memory' },
    });
    const profile = await created(`${co}/tools/profiles`, { name: 'p' });
    const invite = await created(`${co}/invites`, {});
    const entry = await created(`/api/tool-profiles/${profile.id}/entries`, {
      selectorType: 'connection',
      connectionId: connection.id,
      policy: 'allow',
    });

    // [method, path with {id} for the record, the record's id, the 404's label]
    const families: Array<['get' | 'patch', string, string, string]> = [
      ['get', '/api/agents/{id}', agent.id, 'Agent'],
      ['get', '/api/issues/{id}', issue.id, 'Issue'],
      // the path's first record answers: an outsider learns nothing of the comment behind another company's issue
      ['get', `/api/issues/${issue.id}/comments/{id}`, comment.id, 'Issue'],
      ['get', '/api/heartbeat-runs/{id}', runId, 'Heartbeat run'],
      ['get', '/api/goals/{id}', goal.id, 'Goal'],
      ['get', '/api/projects/{id}', project.id, 'Project'],
      ['patch', `/api/projects/${project.id}/workspaces/{id}`, workspace.id, 'Project'],
      ['get', '/api/approvals/{id}', hire.approval.id, 'Approval'],
      ['get', '/api/routines/{id}', routine.id, 'Routine'],
      ['patch', '/api/routine-triggers/{id}', trigger.id, 'Routine trigger'],
      ['patch', '/api/secrets/{id}', secret.id, 'Secret'],
      ['get', '/api/attachments/{id}/content', upload.body.id, 'Attachment'],
      ['get', '/api/assets/{id}/content', logo.body.assetId, 'Asset'],
      ['get', '/api/tool-connections/{id}', connection.id, 'Tool connection'],
      ['patch', '/api/tool-profiles/{id}', profile.id, 'Tool profile'],
      ['patch', '/api/tool-profile-entries/{id}', entry.id, 'Tool profile entry'],
    ];
    // a write without a GET: revoking another company's invite is the 404 of an unknown one, and revokes nothing
    const revoke = (id: string) => t.http.post(`/api/invites/${id}/revoke`).set(auth(outsider.token)).send({});
    const [known, unknown] = [await revoke(invite.id), await revoke(randomUUID())];
    expect([known.status, known.body]).toEqual([404, unknown.body]);
    expect(known.body.error).toContain('Invite');
    const after = (await t.http.get(`${co}/invites`).set(as).expect(200)).body;
    expect((Array.isArray(after) ? after : after.invites).find((i: { id: string }) => i.id === invite.id)).toMatchObject({
      revokedAt: null,
    });
    const body = { name: 'x' };
    for (const [method, path, id, label] of families) {
      const known = await t.http[method](path.replace('{id}', id)).set(auth(outsider.token)).send(body);
      const unknownId = randomUUID();
      const unknown = await t.http[method](path.replace('{id}', unknownId)).set(auth(outsider.token)).send(body);
      expect({ path, status: known.status }).toEqual({ path, status: 404 });
      expect({ path, status: unknown.status }).toEqual({ path, status: 404 });
      expect({ path, body: known.text.split(id).join('<id>') }).toEqual({ path, body: unknown.text.split(unknownId).join('<id>') });
      expect({ path, error: known.body.error }).toEqual({ path, error: expect.stringContaining(label) });
      if (method === 'get') await t.http.get(path.replace('{id}', id)).set(as).expect(200);
    }
  });
});

/**
 * Issue 45.1, the last two families: an issue named by its identifier (`ABC-12`) and an action
 * request of an "ask" tool (`/api/tool-gateway/action-requests/:requestId`, where `:requestId`
 * names a tool action request, not a join request) resolve their company in the guard too.
 */
describe('issue identifiers and tool action requests in paths: another company’s answer like unknown ones (issue 45.1)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: AUTHENTICATED });
  });
  afterAll(() => t.close());

  /** Both answers, and their bodies with the ref the caller sent replaced. */
  const pair = async (send: (ref: string) => Promise<{ status: number; text: string; body: any }>, known: string, unknown: string) => {
    const [a, b] = [await send(known), await send(unknown)];
    return { a, b, same: a.text.split(known).join('<ref>') === b.text.split(unknown).join('<ref>') };
  };

  it('an issue by identifier: another company’s is the 404 of an unknown identifier, reads and writes; the owner reaches it in any case', async () => {
    const { company, owner } = await ownedCompany(t);
    const { owner: outsider } = await ownedCompany(t);
    const issue = await createIssue(t, company.id, {}, owner.token);
    const comment = (await t.http.post(`/api/issues/${issue.id}/comments`).set(auth(owner.token)).send({ body: 'hi' }).expect(201)).body;
    const ident = issue.identifier as string;
    const unknownIdent = `${ident.split('-')[0]}-${987654}`;
    for (const path of [
      '/api/issues/{ref}',
      '/api/issues/{ref}/comments',
      `/api/issues/{ref}/comments/${comment.id}`,
      '/api/issues/{ref}/documents',
    ]) {
      const { a, b, same } = await pair((ref) => t.http.get(path.replace('{ref}', ref)).set(auth(outsider.token)), ident, unknownIdent);
      expect({ path, known: a.status, unknown: b.status, same }).toEqual({ path, known: 404, unknown: 404, same: true });
      expect({ path, error: a.body.error }).toEqual({ path, error: 'Issue not found' });
      // lower case names the same issue
      const lower = await t.http.get(path.replace('{ref}', ident.toLowerCase())).set(auth(outsider.token));
      expect({ path, status: lower.status, body: lower.body }).toEqual({ path, status: 404, body: a.body });
    }
    const patch = await pair(
      (ref) => t.http.patch(`/api/issues/${ref}`).set(auth(outsider.token)).send({ title: 'Taken over' }),
      ident,
      unknownIdent,
    );
    expect({ known: patch.a.status, same: patch.same }).toEqual({ known: 404, same: true });
    // an agent of another company alike
    const agent = await insertAgent(t, (await ownedCompany(t)).company.id);
    const byAgent = await pair((ref) => t.http.get(`/api/issues/${ref}`).set(bearer(agent.token)), ident, unknownIdent);
    expect({ known: byAgent.a.status, same: byAgent.same }).toEqual({ known: 404, same: true });

    for (const ref of [ident, ident.toLowerCase()]) {
      const own = await t.http.get(`/api/issues/${ref}`).set(auth(owner.token)).expect(200);
      expect({ id: own.body.id, title: own.body.title }).toEqual({ id: issue.id, title: issue.title });
      await t.http.get(`/api/issues/${ref}/comments/${comment.id}`).set(auth(owner.token)).expect(200);
    }
    // the route's company is the identifier's: a body naming another company's project is refused as on the UUID route
    const otherProject = (
      await t.http
        .post(`/api/companies/${(await createCompany(t, {}, owner.token)).id}/projects`)
        .set(auth(owner.token))
        .send({ name: `P ${randomUUID().slice(0, 8)}` })
        .expect(201)
    ).body;
    for (const ref of [issue.id, ident]) {
      const res = await t.http.patch(`/api/issues/${ref}`).set(auth(owner.token)).send({ projectId: otherProject.id });
      expect({ ref, status: res.status, code: res.body.code, field: res.body.field }).toEqual({
        ref,
        status: 422,
        code: 'invalid_reference',
        field: 'projectId',
      });
    }
    // a body the route refuses: still the 404 first for another company's identifier, as for an unknown one
    const invalid = await pair(
      (ref) => t.http.patch(`/api/issues/${ref}`).set(auth(outsider.token)).send({ status: 'no-such-status' }),
      ident,
      unknownIdent,
    );
    expect({ known: invalid.a.status, same: invalid.same }).toEqual({ known: 404, same: true });
    const renamed = await t.http.patch(`/api/issues/${ident.toLowerCase()}`).set(auth(owner.token)).send({ title: 'Renamed' }).expect(200);
    expect(renamed.body).toMatchObject({ id: issue.id, title: 'Renamed' });
    // the owner's unknown identifier, and a ref of neither form, are the same 404
    for (const ref of [unknownIdent, 'not-an-issue']) {
      const res = await t.http.get(`/api/issues/${ref}`).set(auth(owner.token));
      expect({ ref, status: res.status, error: res.body.error }).toEqual({ ref, status: 404, error: 'Issue not found' });
    }
  });

  it('identifiers are unique across the instance, so one names at most one company’s issue (what the guard relies on)', async () => {
    const { owner } = await ownedCompany(t);
    const name = `Same ${randomUUID().slice(0, 8)}`;
    const [a, b] = [await createCompany(t, { name }, owner.token), await createCompany(t, { name }, owner.token)];
    expect(a.issuePrefix).not.toBe(b.issuePrefix);
    const [ia, ib] = [await createIssue(t, a.id, {}, owner.token), await createIssue(t, b.id, {}, owner.token)];
    await expect(t.dataSource.query(`UPDATE issues SET identifier = $1 WHERE id = $2`, [ia.identifier, ib.id])).rejects.toThrow(
      /issues_identifier_key/,
    );
  });

  it('approving or declining another company’s tool action request is the 404 of an unknown one and decides nothing', async () => {
    const { company, owner } = await ownedCompany(t);
    const { owner: outsider } = await ownedCompany(t);
    const agent = await insertAgent(t, company.id);
    const connection = (
      await t.http
        .post(`/api/companies/${company.id}/tools/connections`)
        .set(auth(owner.token))
        .send({ name: 'Memory', transport: 'local_stdio', transportConfig: { command: 'server-memory' } })
        .expect(201)
    ).body;
    const [request] = await t.dataSource.query(
      `INSERT INTO tool_action_requests (company_id, agent_id, connection_id, tool_name, arguments_digest, expires_at)
       VALUES ($1, $2, $3, 'create_entities', 'digest', now() + interval '1 hour') RETURNING id`,
      [company.id, agent.id, connection.id],
    );
    for (const verb of ['approve', 'decline']) {
      for (const body of [{}, { companyId: company.id }]) {
        const decide = (id: string) => t.http.post(`/api/tool-gateway/action-requests/${id}/${verb}`).set(auth(outsider.token)).send(body);
        const { a, b, same } = await pair(decide, request.id, randomUUID());
        expect({ verb, body, known: a.status, unknown: b.status, same }).toEqual({ verb, body, known: 404, unknown: 404, same: true });
        expect(a.body.error).toBe('Action request not found');
      }
    }
    // the company is checked first, as on every route: a body the route refuses changes nothing
    for (const body of [{ rememberAction: true }, { companyId: 'not-a-uuid' }]) {
      const decide = (id: string) => t.http.post(`/api/tool-gateway/action-requests/${id}/approve`).set(auth(outsider.token)).send(body);
      const { a, b, same } = await pair(decide, request.id, randomUUID());
      expect({ body, known: a.status, unknown: b.status, same }).toEqual({ body, known: 404, unknown: 404, same: true });
    }
    const pending = (await t.http.get(`/api/companies/${company.id}/tools/action-requests`).set(auth(owner.token)).expect(200)).body;
    expect(pending.actionRequests.map((r: { request: { id: string; status: string } }) => [r.request.id, r.request.status])).toEqual([
      [request.id, 'pending'],
    ]);
    // the owner naming another company in the body: the same 404
    const { company: other } = await ownedCompany(t);
    const wrongBody = await t.http
      .post(`/api/tool-gateway/action-requests/${request.id}/approve`)
      .set(auth(owner.token))
      .send({ companyId: other.id });
    expect([wrongBody.status, wrongBody.body.error]).toEqual([404, 'Action request not found']);
  });
});
