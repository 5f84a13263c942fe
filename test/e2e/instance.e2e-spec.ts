import { randomUUID } from 'node:crypto';
import { createCompany } from '../support/factories';
import { createTestApp, TestApp } from '../support/test-app';
import { auth, AUTHENTICATED, insertAgentWithKey, instanceAdmin, makeMember, ownedCompany, signUp } from '../support/users';

const BACKUP_DEFAULTS = {
  databaseBackupEnabled: false,
  databaseBackupIntervalMinutes: 1440,
  databaseBackupRetentionDaily: 7,
  databaseBackupRetentionWeekly: 4,
  databaseBackupRetentionMonthly: 6,
};

describe('instance administration (authenticated mode)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: AUTHENTICATED });
  });
  afterAll(() => t.close());

  describe('GET/PATCH /api/instance/settings/general', () => {
    it('returns defaults and persists a partial PATCH', async () => {
      const admin = await instanceAdmin(t);
      const before = await t.http.get('/api/instance/settings/general').set(auth(admin.token)).expect(200);
      expect(before.body).toEqual({
        instanceName: 'Agent Orchestration Service',
        allowSignUp: true,
        sessionTtlHours: 720,
        ...BACKUP_DEFAULTS,
      });
      const res = await t.http
        .patch('/api/instance/settings/general')
        .set(auth(admin.token))
        .send({ instanceName: 'Acme', sessionTtlHours: 2 })
        .expect(200);
      expect(res.body).toEqual({ instanceName: 'Acme', allowSignUp: true, sessionTtlHours: 2, ...BACKUP_DEFAULTS });
      expect((await t.http.get('/api/instance/settings/general').set(auth(admin.token)).expect(200)).body).toEqual(res.body);
      // a new session now lives 2 hours
      const u = await signUp(t);
      const s = await t.http.get('/api/auth/get-session').set(auth(u.token)).expect(200);
      expect(new Date(s.body.session.expiresAt).getTime() - Date.now()).toBeLessThan(2 * 3600_000 + 60_000);
      await t.http.patch('/api/instance/settings/general').set(auth(admin.token)).send({ sessionTtlHours: 720 }).expect(200);
    });

    it('rejects unknown fields, nulls and wrong types with 400', async () => {
      const admin = await instanceAdmin(t);
      for (const body of [
        { colour: 'red' },
        { instanceName: null },
        { allowSignUp: 'yes' },
        { sessionTtlHours: 0 },
        { instanceName: '' },
      ]) {
        const res = await t.http.patch('/api/instance/settings/general').set(auth(admin.token)).send(body).expect(400);
        expect(res.body.code).toBe('validation_failed');
      }
    });

    it('allowSignUp=false closes sign-up', async () => {
      const admin = await instanceAdmin(t);
      await t.http.patch('/api/instance/settings/general').set(auth(admin.token)).send({ allowSignUp: false }).expect(200);
      try {
        const res = await t.http
          .post('/api/auth/sign-up/email')
          .send({ email: `${randomUUID()}@example.test`, password: 'long enough' })
          .expect(403);
        expect(res.body.code).toBe('sign_up_disabled');
      } finally {
        await t.http.patch('/api/instance/settings/general').set(auth(admin.token)).send({ allowSignUp: true }).expect(200);
      }
    });

    it('needs an instance admin: 401 without credentials, 403 for other users and agents', async () => {
      await t.http.get('/api/instance/settings/general').expect(401);
      const { company, owner } = await ownedCompany(t);
      await t.http.get('/api/instance/settings/general').set(auth(owner.token)).expect(403);
      await t.http.patch('/api/instance/settings/general').set(auth(owner.token)).send({ instanceName: 'x' }).expect(403);
      const agent = await insertAgentWithKey(t, company.id);
      await t.http.get('/api/instance/settings/general').set(auth(agent.token)).expect(403);
    });
  });

  describe('GET/PATCH /api/instance/settings/experimental', () => {
    it('holds feature flags: builtInAgents off by default, persisted, validated', async () => {
      const admin = await instanceAdmin(t);
      expect((await t.http.get('/api/instance/settings/experimental').set(auth(admin.token)).expect(200)).body).toMatchObject({
        builtInAgents: false,
        enableBuiltInAgents: false,
      });
      const res = await t.http
        .patch('/api/instance/settings/experimental')
        .set(auth(admin.token))
        .send({ builtInAgents: true })
        .expect(200);
      expect(res.body).toMatchObject({ builtInAgents: true, enableBuiltInAgents: true });
      expect((await t.http.get('/api/instance/settings/experimental').set(auth(admin.token)).expect(200)).body).toMatchObject({
        builtInAgents: true,
      });
      await t.http.patch('/api/instance/settings/experimental').set(auth(admin.token)).send({ builtInAgents: 1 }).expect(400);
      await t.http.patch('/api/instance/settings/experimental').set(auth(admin.token)).send({ warpDrive: true }).expect(400);
      const u = await signUp(t);
      await t.http.get('/api/instance/settings/experimental').set(auth(u.token)).expect(403);
    });

    it('a PATCH of the current values round-trips unchanged, and the service reads the flag (built-in agents answer by it)', async () => {
      const admin = await instanceAdmin(t);
      const url = '/api/instance/settings/experimental';
      for (const value of [false, true]) {
        await t.http.patch(url).set(auth(admin.token)).send({ builtInAgents: value }).expect(200);
        const current = (await t.http.get(url).set(auth(admin.token)).expect(200)).body;
        expect((await t.http.patch(url).set(auth(admin.token)).send(current).expect(200)).body).toEqual(current);
        expect((await t.http.get(url).set(auth(admin.token)).expect(200)).body).toEqual(current);
        const { company } = await ownedCompany(t);
        const res = await t.http.get(`/api/companies/${company.id}/built-in-agents`).set(auth(admin.token));
        expect(res.status).toBe(value ? 200 : 404);
      }
    });
  });

  describe('the board UI switches (experimental settings)', () => {
    const UI_FLAGS = [
      'enableIsolatedWorkspaces',
      'autoRestartDevServerWhenIdle',
      'enableDecisions',
      'enableStreamlinedUi',
      'enableIssuePlanDecompositions',
    ];

    it('exposes every switch the board UI knows as a boolean; each round-trips through PATCH; enableBuiltInAgents is builtInAgents', async () => {
      const admin = await instanceAdmin(t);
      const url = '/api/instance/settings/experimental';
      const flags = (await t.http.get(url).set(auth(admin.token)).expect(200)).body;
      expect(Object.keys(flags).length).toBeGreaterThanOrEqual(30);
      for (const [k, v] of Object.entries(flags)) expect([k, typeof v]).toEqual([k, 'boolean']);
      for (const k of UI_FLAGS) expect(k in flags).toBe(true);
      for (const k of Object.keys(flags)) {
        if (k === 'builtInAgents' || k === 'enableBuiltInAgents') continue;
        const flipped = !flags[k];
        expect(
          (
            await t.http
              .patch(url)
              .set(auth(admin.token))
              .send({ [k]: flipped })
              .expect(200)
          ).body[k],
        ).toBe(flipped);
        expect((await t.http.get(url).set(auth(admin.token)).expect(200)).body[k]).toBe(flipped);
        await t.http
          .patch(url)
          .set(auth(admin.token))
          .send({ [k]: flags[k] })
          .expect(200);
      }
      expect((await t.http.get(url).set(auth(admin.token)).expect(200)).body).toEqual(flags);
      // the alias writes the flag it names; both given and different: 400
      const on = (await t.http.patch(url).set(auth(admin.token)).send({ enableBuiltInAgents: !flags.builtInAgents }).expect(200)).body;
      expect([on.builtInAgents, on.enableBuiltInAgents]).toEqual([!flags.builtInAgents, !flags.builtInAgents]);
      await t.http.patch(url).set(auth(admin.token)).send({ builtInAgents: true, enableBuiltInAgents: false }).expect(400);
      await t.http.patch(url).set(auth(admin.token)).send({ enableDecisions: 'yes' }).expect(400);
      await t.http.patch(url).set(auth(admin.token)).send({ enableDecisions: null }).expect(400);
      await t.http.patch(url).set(auth(admin.token)).send({ builtInAgents: flags.builtInAgents }).expect(200);
      // in the one-object settings too
      expect((await t.http.get('/api/instance/settings').set(auth(admin.token)).expect(200)).body.experimental).toEqual(flags);
    });

    it('enableIssuePlanDecompositions is honoured: off refuses accepting a plan (409), on again accepts it', async () => {
      const admin = await instanceAdmin(t);
      const { company, owner } = await ownedCompany(t);
      const issue = (await t.http.post(`/api/companies/${company.id}/issues`).set(auth(owner.token)).send({ title: 'Planned' }).expect(201))
        .body;
      await t.http
        .put(`/api/issues/${issue.id}/documents/plan`)
        .set(auth(owner.token))
        .send({ title: 'Plan', format: 'markdown', body: '- first step\n- second step\n' })
        .expect((r) => expect([200, 201]).toContain(r.status));
      const url = '/api/instance/settings/experimental';
      await t.http.patch(url).set(auth(admin.token)).send({ enableIssuePlanDecompositions: false }).expect(200);
      const refused = await t.http.post(`/api/issues/${issue.id}/plan/accept`).set(auth(owner.token)).send({}).expect(409);
      expect(refused.body.code).toBe('plan_decompositions_disabled');
      await t.http.patch(url).set(auth(admin.token)).send({ enableIssuePlanDecompositions: true }).expect(200);
      const accepted = await t.http.post(`/api/issues/${issue.id}/plan/accept`).set(auth(owner.token)).send({}).expect(201);
      expect(accepted.body.childIssues).toHaveLength(2);
    });
  });

  describe('GET /api/admin/users', () => {
    it('lists users, searches email, name and slug; never a password hash', async () => {
      const admin = await instanceAdmin(t);
      const u = await signUp(t, { name: 'Zed Searchable' });
      const all = await t.http.get('/api/admin/users').set(auth(admin.token)).expect(200);
      expect(all.body.map((x: { id: string }) => x.id)).toEqual(expect.arrayContaining([admin.id, u.id]));
      expect(JSON.stringify(all.body)).not.toMatch(/scrypt|password/i);
      const hit = await t.http.get('/api/admin/users').query({ query: 'zed search' }).set(auth(admin.token)).expect(200);
      expect(hit.body.map((x: { id: string }) => x.id)).toEqual([u.id]);
      expect((await t.http.get('/api/admin/users').query({ query: u.email.toUpperCase() }).set(auth(admin.token))).body).toHaveLength(1);
      expect((await t.http.get('/api/admin/users').query({ query: '%' }).set(auth(admin.token))).body).toEqual([]);
      await t.http.get('/api/admin/users').set(auth(u.token)).expect(403);
    });
  });

  describe('POST /api/admin/users/:userId/promote-instance-admin, /demote-instance-admin', () => {
    it('promotes and demotes; the promoted user reaches every company; the last admin stays (409)', async () => {
      const admin = await instanceAdmin(t);
      const u = await signUp(t);
      const { company } = await ownedCompany(t);
      await t.http.get(`/api/companies/${company.id}`).set(auth(u.token)).expect(403);
      await t.http.post(`/api/admin/users/${u.id}/promote-instance-admin`).set(auth(u.token)).expect(403);
      const p = await t.http.post(`/api/admin/users/${u.id}/promote-instance-admin`).set(auth(admin.token)).expect(200);
      expect(p.body).toMatchObject({ id: u.id, isInstanceAdmin: true, instanceRole: 'admin' });
      await t.http.get(`/api/companies/${company.id}`).set(auth(u.token)).expect(200);
      const d = await t.http.post(`/api/admin/users/${u.id}/demote-instance-admin`).set(auth(admin.token)).expect(200);
      expect(d.body).toMatchObject({ isInstanceAdmin: false, instanceRole: null });
      await t.http.get(`/api/companies/${company.id}`).set(auth(u.token)).expect(403);
      const last = await t.http.post(`/api/admin/users/${admin.id}/demote-instance-admin`).set(auth(admin.token)).expect(409);
      expect(last.body.code).toBe('last_instance_admin');
      await t.http.post(`/api/admin/users/${randomUUID()}/promote-instance-admin`).set(auth(admin.token)).expect(404);
    });
  });

  describe('GET/PUT /api/admin/users/:userId/company-access', () => {
    it('replaces the company access: listed companies active, others inactive', async () => {
      const admin = await instanceAdmin(t);
      const a = await ownedCompany(t);
      const b = await ownedCompany(t);
      const u = await makeMember(t, a.company.id, 'viewer');
      const put = await t.http
        .put(`/api/admin/users/${u.id}/company-access`)
        .set(auth(admin.token))
        .send({ companies: [{ companyId: b.company.id, membershipRole: 'admin' }] })
        .expect(200);
      expect(put.body.userId).toBe(u.id);
      const byCompany = Object.fromEntries(put.body.companies.map((c: { companyId: string }) => [c.companyId, c]));
      expect(byCompany[a.company.id]).toMatchObject({ membershipRole: 'viewer', status: 'inactive' });
      expect(byCompany[b.company.id]).toMatchObject({ membershipRole: 'admin', status: 'active', companyName: b.company.name });
      await t.http.get(`/api/companies/${a.company.id}`).set(auth(u.token)).expect(403);
      await t.http.get(`/api/companies/${b.company.id}`).set(auth(u.token)).expect(200);
      const got = await t.http.get(`/api/admin/users/${u.id}/company-access`).set(auth(admin.token)).expect(200);
      expect(got.body).toEqual(put.body);
      // reactivating keeps the existing role unless one is given
      const back = await t.http
        .put(`/api/admin/users/${u.id}/company-access`)
        .set(auth(admin.token))
        .send({ companies: [{ companyId: a.company.id }] })
        .expect(200);
      expect(back.body.companies.find((c: { companyId: string }) => c.companyId === a.company.id)).toMatchObject({
        membershipRole: 'viewer',
        status: 'active',
      });
    });

    it('keeps the last owner of a company (409), rejects unknown companies (422), bad bodies (400), unknown users (404)', async () => {
      const admin = await instanceAdmin(t);
      const { company, owner } = await ownedCompany(t);
      const res = await t.http
        .put(`/api/admin/users/${owner.id}/company-access`)
        .set(auth(admin.token))
        .send({ companies: [] })
        .expect(409);
      expect(res.body.code).toBe('last_owner');
      await t.http.get(`/api/companies/${company.id}`).set(auth(owner.token)).expect(200);
      await t.http
        .put(`/api/admin/users/${owner.id}/company-access`)
        .set(auth(admin.token))
        .send({ companies: [{ companyId: randomUUID() }] })
        .expect(422);
      await t.http
        .put(`/api/admin/users/${owner.id}/company-access`)
        .set(auth(admin.token))
        .send({ companies: [{ companyId: 'x' }] })
        .expect(400);
      await t.http.put(`/api/admin/users/${owner.id}/company-access`).set(auth(admin.token)).send({}).expect(400);
      await t.http.get(`/api/admin/users/${randomUUID()}/company-access`).set(auth(admin.token)).expect(404);
      await t.http.get(`/api/admin/users/${owner.id}/company-access`).set(auth(owner.token)).expect(403);
    });
  });

  describe('GET /api/instance/scheduler-heartbeats', () => {
    it('lists agents with an enabled timer heartbeat, interval and last run, limited to the companies of the caller', async () => {
      const admin = await instanceAdmin(t);
      const { company } = await ownedCompany(t);
      const on = await insertAgentWithKey(t, company.id, { runtimeConfig: { heartbeat: { enabled: true, intervalSec: 600 } } });
      const fresh = await insertAgentWithKey(t, company.id, { runtimeConfig: { heartbeat: { enabled: true } } });
      await insertAgentWithKey(t, company.id, { runtimeConfig: { heartbeat: { enabled: false, intervalSec: 60 } } });
      await insertAgentWithKey(t, company.id, { runtimeConfig: { heartbeat: { enabled: true } }, status: 'terminated' });
      const started = new Date(Date.now() - 60_000);
      const [run] = await t.dataSource.query(
        `INSERT INTO heartbeat_runs (company_id, agent_id, status, invocation_source, adapter_type, started_at) VALUES ($1, $2, 'succeeded', 'timer', 'process', $3) RETURNING id`,
        [company.id, on.agentId, started],
      );
      const res = await t.http.get('/api/instance/scheduler-heartbeats').set(auth(admin.token)).expect(200);
      const mine = res.body.filter((h: { companyId: string }) => h.companyId === company.id);
      expect(mine).toHaveLength(2);
      const a = mine.find((h: { agentId: string }) => h.agentId === on.agentId);
      expect(a).toMatchObject({ enabled: true, intervalSec: 600, lastRun: { id: run.id, status: 'succeeded' } });
      const b = mine.find((h: { agentId: string }) => h.agentId === fresh.agentId);
      expect(b).toMatchObject({ enabled: true, lastRun: null });
      // a user without membership in the company sees none of its agents
      const u = await signUp(t);
      const theirs = (await t.http.get('/api/instance/scheduler-heartbeats').set(auth(u.token)).expect(200)).body;
      expect(theirs.filter((h: { companyId: string }) => h.companyId === company.id)).toEqual([]);
    });
  });
});

describe('instance administration (local trusted mode)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it('the implicit board is an instance admin', async () => {
    const before = (await t.http.get('/api/instance/settings/general').expect(200)).body;
    const same = await t.http.patch('/api/instance/settings/general').send({ instanceName: before.instanceName }).expect(200);
    expect(same.body).toEqual(before);
    expect((await t.http.get('/api/instance/settings/general').expect(200)).body).toEqual(before);
    expect(Array.isArray((await t.http.get('/api/instance/scheduler-heartbeats').expect(200)).body)).toBe(true);
    expect((await t.http.get('/api/admin/users').expect(200)).body).toEqual([]);
  });

  it('company access can be granted to a signed-up user', async () => {
    const c = await createCompany(t);
    const u = await signUp(t);
    await t.http
      .put(`/api/admin/users/${u.id}/company-access`)
      .send({ companies: [{ companyId: c.id, membershipRole: 'owner' }] })
      .expect(200);
    const members = (await t.http.get(`/api/companies/${c.id}/members`).expect(200)).body;
    expect(members).toEqual([expect.objectContaining({ principalId: u.id, membershipRole: 'owner' })]);
    await t.http.post(`/api/admin/users/${u.id}/promote-instance-admin`).expect(200);
    await t.http.get('/api/instance/settings/general').set(auth(u.token)).expect(200);
  });

  it('agents are refused (403)', async () => {
    const c = await createCompany(t);
    const agent = await insertAgentWithKey(t, c.id);
    await t.http.get('/api/admin/users').set(auth(agent.token)).expect(403);
  });
});
