import { randomUUID } from 'node:crypto';
import { createCompany } from '../support/factories';
import { createTestApp, TestApp } from '../support/test-app';
import { auth, AUTHENTICATED, insertAgentWithKey, instanceAdmin, makeMember, ownedCompany } from '../support/users';

const MANAGER_KEYS = [
  'agents:configure',
  'agents:create',
  'environments:manage',
  'joins:approve',
  'skills:create',
  'tasks:assign',
  'tasks:manage_active_checkouts',
  'users:invite',
  'users:manage_permissions',
];

const keysOf = (m: { grants: Array<{ permissionKey: string }> }) => m.grants.map((g) => g.permissionKey).sort();

describe('members (authenticated mode)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: AUTHENTICATED });
  });
  afterAll(() => t.close());

  describe('GET /api/companies/:companyId/members', () => {
    it('lists memberships with role, status, user and grants; role defaults on join', async () => {
      const { company, owner } = await ownedCompany(t);
      const admin = await makeMember(t, company.id, 'admin');
      const operator = await makeMember(t, company.id, 'operator');
      const viewer = await makeMember(t, company.id, 'viewer');
      const res = await t.http.get(`/api/companies/${company.id}/members`).set(auth(viewer.token)).expect(200);
      const by = (id: string) => res.body.find((m: { principalId: string }) => m.principalId === id);
      expect(by(owner.id)).toMatchObject({
        companyId: company.id,
        principalType: 'user',
        membershipRole: 'owner',
        status: 'active',
        user: { id: owner.id, slug: owner.slug },
      });
      expect(keysOf(by(owner.id))).toEqual(MANAGER_KEYS);
      expect(keysOf(by(admin.id))).toEqual(MANAGER_KEYS);
      expect(keysOf(by(operator.id))).toEqual(['tasks:assign']);
      expect(keysOf(by(viewer.id))).toEqual([]);
      expect(by(owner.id).grants[0].scope).toBeNull();
    });

    it('answers 401 without credentials and 403 for another company or an unknown one; agents read only with users:invite or users:manage_permissions', async () => {
      const { company } = await ownedCompany(t);
      const other = await ownedCompany(t);
      await t.http.get(`/api/companies/${company.id}/members`).expect(401);
      await t.http.get(`/api/companies/${company.id}/members`).set(auth(other.owner.token)).expect(403);
      const agent = await insertAgentWithKey(t, company.id);
      const refused = await t.http.get(`/api/companies/${company.id}/members`).set(auth(agent.token)).expect(403);
      expect(refused.body.permissionKey).toBeDefined();
      await t.dataSource.query(
        `INSERT INTO principal_permission_grants (company_id, principal_type, principal_id, permission_key) VALUES ($1, 'agent', $2, 'users:invite')`,
        [company.id, agent.agentId],
      );
      const seen = await t.http.get(`/api/companies/${company.id}/members`).set(auth(agent.token)).expect(200);
      expect(seen.body[0].user).toMatchObject({ email: null });
      await t.http
        .get(`/api/companies/${company.id}/members`)
        .set(auth((await insertAgentWithKey(t, other.company.id)).token))
        .expect(403);
      // an unknown company answers a member of others like another company (no existence oracle)
      await t.http.get(`/api/companies/${randomUUID()}/members`).set(auth(other.owner.token)).expect(403);
    });
  });

  describe('GET /api/companies/:companyId/user-directory', () => {
    it('lists the users of the company, active first', async () => {
      const { company, owner } = await ownedCompany(t);
      const m = await makeMember(t, company.id);
      await t.http.post(`/api/companies/${company.id}/members/${m.memberId}/archive`).set(auth(owner.token)).send({}).expect(200);
      const res = await t.http.get(`/api/companies/${company.id}/user-directory`).set(auth(owner.token)).expect(200);
      expect(res.body.map((u: { id: string; status: string }) => [u.id, u.status])).toEqual([
        [owner.id, 'active'],
        [m.id, 'inactive'],
      ]);
      expect(res.body[0]).toEqual({
        id: owner.id,
        name: expect.any(String),
        slug: owner.slug,
        image: null,
        membershipRole: 'owner',
        status: 'active',
      });
    });
  });

  describe('PATCH /api/companies/:companyId/members/:memberId', () => {
    it('changes role and status with users:manage_permissions; a member without it gets 403 deny_missing_grant', async () => {
      const { company, owner } = await ownedCompany(t);
      const m = await makeMember(t, company.id);
      const denied = await t.http
        .patch(`/api/companies/${company.id}/members/${m.memberId}`)
        .set(auth(m.token))
        .send({ membershipRole: 'admin' })
        .expect(403);
      expect(denied.body.reason).toBe('deny_missing_grant');
      const res = await t.http
        .patch(`/api/companies/${company.id}/members/${m.memberId}`)
        .set(auth(owner.token))
        .send({ membershipRole: 'viewer' })
        .expect(200);
      expect(res.body).toMatchObject({ id: m.memberId, membershipRole: 'viewer', status: 'active' });
      await t.http
        .patch(`/api/companies/${company.id}/members/${m.memberId}`)
        .set(auth(owner.token))
        .send({ membershipRole: 'boss' })
        .expect(400);
      await t.http
        .patch(`/api/companies/${company.id}/members/${m.memberId}`)
        .set(auth(owner.token))
        .send({ status: 'archived' })
        .expect(400);
      await t.http
        .patch(`/api/companies/${company.id}/members/${randomUUID()}`)
        .set(auth(owner.token))
        .send({ status: 'active' })
        .expect(404);
      await t.http.patch(`/api/companies/${company.id}/members/nope`).set(auth(owner.token)).send({ status: 'active' }).expect(404);
    });

    it('refuses to demote or deactivate the last active owner (409 last_owner)', async () => {
      const { company, owner } = await ownedCompany(t);
      const [me] = (await t.http.get(`/api/companies/${company.id}/members`).set(auth(owner.token))).body;
      const res = await t.http
        .patch(`/api/companies/${company.id}/members/${me.id}`)
        .set(auth(owner.token))
        .send({ membershipRole: 'admin' })
        .expect(409);
      expect(res.body.code).toBe('last_owner');
      await t.http.patch(`/api/companies/${company.id}/members/${me.id}`).set(auth(owner.token)).send({ status: 'inactive' }).expect(409);
      await t.http
        .patch(`/api/companies/${company.id}/members/${me.id}`)
        .set(auth(owner.token))
        .send({ membershipRole: 'owner' })
        .expect(200);
    });

    it('lets exactly one of two concurrent demotions of the last two owners succeed', async () => {
      const { company, owner } = await ownedCompany(t);
      const second = await makeMember(t, company.id, 'owner');
      const admin = await instanceAdmin(t);
      const [first] = (await t.http.get(`/api/companies/${company.id}/members`).set(auth(owner.token))).body;
      const results = await Promise.all(
        [first.id, second.memberId].map((id) =>
          t.http.patch(`/api/companies/${company.id}/members/${id}`).set(auth(admin.token)).send({ membershipRole: 'member' }),
        ),
      );
      expect(results.map((r) => r.status).sort()).toEqual([200, 409]);
      const owners = await t.dataSource.query(
        `SELECT id FROM company_memberships WHERE company_id = $1 AND membership_role = 'owner' AND status = 'active'`,
        [company.id],
      );
      expect(owners).toHaveLength(1);
    });

    it('only owners give or take the owner role (an admin cannot make itself owner)', async () => {
      const { company, owner } = await ownedCompany(t);
      const admin = await makeMember(t, company.id, 'admin');
      const [first] = (await t.http.get(`/api/companies/${company.id}/members`).set(auth(owner.token))).body;
      await t.http
        .patch(`/api/companies/${company.id}/members/${admin.memberId}`)
        .set(auth(admin.token))
        .send({ membershipRole: 'owner' })
        .expect(403);
      await t.http
        .patch(`/api/companies/${company.id}/members/${first.id}/role-and-grants`)
        .set(auth(admin.token))
        .send({ membershipRole: 'owner', grants: [] })
        .expect(403);
      await t.http.post(`/api/companies/${company.id}/members/${first.id}/archive`).set(auth(admin.token)).send({}).expect(403);
      await t.http
        .patch(`/api/companies/${company.id}/members/${admin.memberId}`)
        .set(auth(owner.token))
        .send({ membershipRole: 'owner' })
        .expect(200);
      await t.http
        .patch(`/api/companies/${company.id}/members/${first.id}`)
        .set(auth(admin.token))
        .send({ membershipRole: 'admin' })
        .expect(200);
    });

    it('rejects agents (403)', async () => {
      const { company, owner } = await ownedCompany(t);
      const agent = await insertAgentWithKey(t, company.id);
      const [me] = (await t.http.get(`/api/companies/${company.id}/members`).set(auth(owner.token))).body;
      await t.http
        .patch(`/api/companies/${company.id}/members/${me.id}`)
        .set(auth(agent.token))
        .send({ membershipRole: 'admin' })
        .expect(403);
    });
  });

  describe('PATCH /api/companies/:companyId/members/:memberId/permissions', () => {
    it('replaces the grants, normalising scope shorthands', async () => {
      const { company, owner } = await ownedCompany(t);
      const m = await makeMember(t, company.id, 'operator');
      const projectId = randomUUID();
      const agentId = randomUUID();
      const res = await t.http
        .patch(`/api/companies/${company.id}/members/${m.memberId}/permissions`)
        .set(auth(owner.token))
        .send({
          grants: [
            { permissionKey: 'tasks:assign_scope', scope: `project:${projectId}` },
            { permissionKey: 'tasks:assign_scope', scope: { assigneeAgentIds: [agentId, agentId] } },
            { permissionKey: 'users:invite' },
            { permissionKey: 'users:invite', scope: null },
          ],
        })
        .expect(200);
      expect(res.body.grants).toEqual([
        { permissionKey: 'tasks:assign_scope', scope: { projectId } },
        { permissionKey: 'tasks:assign_scope', scope: { assigneeAgentIds: [agentId] } },
        { permissionKey: 'users:invite', scope: null },
      ]);
      expect(res.body.membershipRole).toBe('operator');
      const empty = await t.http
        .patch(`/api/companies/${company.id}/members/${m.memberId}/permissions`)
        .set(auth(owner.token))
        .send({ grants: [] })
        .expect(200);
      expect(empty.body.grants).toEqual([]);
    });

    it('rejects unknown keys, bad scopes and an unscoped tasks:assign_scope with 400', async () => {
      const { company, owner } = await ownedCompany(t);
      const m = await makeMember(t, company.id);
      const url = `/api/companies/${company.id}/members/${m.memberId}/permissions`;
      for (const grants of [
        [{ permissionKey: 'users:everything' }],
        [{ permissionKey: 'tasks:assign_scope' }],
        [{ permissionKey: 'tasks:assign_scope', scope: {} }],
        [{ permissionKey: 'tasks:assign', scope: 'team:1' }],
        [{ permissionKey: 'tasks:assign', scope: { projectId: 'not-a-uuid' } }],
        [{ permissionKey: 'tasks:assign', scope: { colour: 'red' } }],
        'users:invite',
      ]) {
        await t.http.patch(url).set(auth(owner.token)).send({ grants }).expect(400);
      }
      await t.http.patch(url).set(auth(owner.token)).send({}).expect(400);
    });
  });

  describe('PATCH /api/companies/:companyId/members/:memberId/role-and-grants', () => {
    it('sets role and grants together and logs company_member.updated', async () => {
      const { company, owner } = await ownedCompany(t);
      const m = await makeMember(t, company.id);
      const res = await t.http
        .patch(`/api/companies/${company.id}/members/${m.memberId}/role-and-grants`)
        .set(auth(owner.token))
        .send({ membershipRole: 'admin', grants: [{ permissionKey: 'joins:approve' }] })
        .expect(200);
      expect(res.body).toMatchObject({ membershipRole: 'admin', grants: [{ permissionKey: 'joins:approve', scope: null }] });
      const [log] = await t.dataSource.query(`SELECT * FROM activity_log WHERE company_id = $1 AND action = 'company_member.updated'`, [
        company.id,
      ]);
      expect(log).toMatchObject({ entity_type: 'company_member', entity_id: m.memberId, actor_type: 'user', actor_id: owner.id });
      expect(log.details).toMatchObject({ membershipRole: 'admin' });
    });

    it('needs users:manage_permissions, and the granted key then works', async () => {
      const { company, owner } = await ownedCompany(t);
      const a = await makeMember(t, company.id);
      const b = await makeMember(t, company.id);
      const url = `/api/companies/${company.id}/members/${b.memberId}/role-and-grants`;
      await t.http.patch(url).set(auth(a.token)).send({ membershipRole: 'viewer', grants: [] }).expect(403);
      await t.http
        .patch(`/api/companies/${company.id}/members/${a.memberId}/permissions`)
        .set(auth(owner.token))
        .send({ grants: [{ permissionKey: 'users:manage_permissions' }] })
        .expect(200);
      await t.http.patch(url).set(auth(a.token)).send({ membershipRole: 'viewer', grants: [] }).expect(200);
    });

    it('keeps grants unchanged when the role change is refused (one transaction)', async () => {
      const { company, owner } = await ownedCompany(t);
      const [me] = (await t.http.get(`/api/companies/${company.id}/members`).set(auth(owner.token))).body;
      await t.http
        .patch(`/api/companies/${company.id}/members/${me.id}/role-and-grants`)
        .set(auth(owner.token))
        .send({ membershipRole: 'member', grants: [] })
        .expect(409);
      const [after] = (await t.http.get(`/api/companies/${company.id}/members`).set(auth(owner.token))).body;
      expect(keysOf(after)).toEqual(MANAGER_KEYS);
      expect(after.membershipRole).toBe('owner');
    });

    it('changes only what is given: role, status or grants (omitted keeps them); null or a bad value is 400', async () => {
      const { company, owner } = await ownedCompany(t);
      const m = await makeMember(t, company.id, 'operator');
      const url = `/api/companies/${company.id}/members/${m.memberId}/role-and-grants`;
      let res = await t.http
        .patch(url)
        .set(auth(owner.token))
        .send({ grants: [{ permissionKey: 'joins:approve' }] })
        .expect(200);
      expect(res.body).toMatchObject({ membershipRole: 'operator', status: 'active' });
      expect(keysOf(res.body)).toEqual(['joins:approve']);
      res = await t.http.patch(url).set(auth(owner.token)).send({ membershipRole: 'admin' }).expect(200);
      expect(res.body.membershipRole).toBe('admin');
      expect(keysOf(res.body)).toEqual(['joins:approve']);
      res = await t.http.patch(url).set(auth(owner.token)).send({ status: 'inactive' }).expect(200);
      expect(res.body).toMatchObject({ membershipRole: 'admin', status: 'inactive' });
      for (const body of [{ membershipRole: null }, { grants: null }, { status: 'gone' }, { membershipRole: 'emperor' }]) {
        await t.http.patch(url).set(auth(owner.token)).send(body).expect(400);
      }
    });
  });

  describe('agents as members', () => {
    const createAgentAs = async (token: string, companyId: string, path: 'agents' | 'agent-hires', extra: Record<string, unknown> = {}) => {
      const res = await t.http
        .post(`/api/companies/${companyId}/${path}`)
        .set(auth(token))
        .send({
          name: `A-${randomUUID().slice(0, 6)}`,
          role: 'engineer',
          adapterType: 'process',
          adapterConfig: { command: 'true' },
          ...extra,
        })
        .expect(201);
      return (path === 'agents' ? res.body : res.body.agent) as { id: string };
    };
    const memberOf = async (token: string, companyId: string, agentId: string) =>
      (await t.http.get(`/api/companies/${companyId}/members`).set(auth(token)).expect(200)).body.find(
        (m: { principalType: string; principalId: string }) => m.principalType === 'agent' && m.principalId === agentId,
      );

    it('an agent created or hired gets an active membership without grants', async () => {
      const { company, owner } = await ownedCompany(t);
      const created = await createAgentAs(owner.token, company.id, 'agents');
      const hired = await createAgentAs(owner.token, company.id, 'agent-hires');
      for (const a of [created, hired]) {
        expect(await memberOf(owner.token, company.id, a.id)).toMatchObject({
          companyId: company.id,
          principalType: 'agent',
          membershipRole: 'member',
          status: 'active',
          agent: { id: a.id },
          grants: [],
        });
      }
      const detail = (await t.http.get(`/api/agents/${created.id}`).set(auth(owner.token)).expect(200)).body;
      expect(detail.access.membership).toMatchObject({ principalId: created.id, status: 'active' });
    });

    it("role-and-grants replaces an agent's grants and logs company_member.updated; a project-scoped tasks:assign_scope assigns there only", async () => {
      const { company, owner } = await ownedCompany(t);
      const lead = await createAgentAs(owner.token, company.id, 'agents');
      const worker = await createAgentAs(owner.token, company.id, 'agents');
      const key = (await t.http.post(`/api/agents/${lead.id}/keys`).set(auth(owner.token)).send({ name: 'k' }).expect(201)).body.token;
      const project = async () =>
        (
          await t.http
            .post(`/api/companies/${company.id}/projects`)
            .set(auth(owner.token))
            .send({ name: `P-${randomUUID().slice(0, 6)}` })
            .expect(201)
        ).body.id;
      const [p1, p2] = [await project(), await project()];
      const assign = (projectId?: string) =>
        t.http
          .post(`/api/companies/${company.id}/issues`)
          .set(auth(key))
          .send({ title: 'x', assigneeAgentId: worker.id, ...(projectId ? { projectId } : {}) });
      expect((await assign(p1)).body.reason).toBe('deny_missing_grant');

      const member = await memberOf(owner.token, company.id, lead.id);
      const url = `/api/companies/${company.id}/members/${member.id}/role-and-grants`;
      await t.http
        .patch(url)
        .set(auth(owner.token))
        .send({ grants: [{ permissionKey: 'joins:approve' }] })
        .expect(200);
      const res = await t.http
        .patch(url)
        .set(auth(owner.token))
        .send({ grants: [{ permissionKey: 'tasks:assign_scope', scope: { projectId: p1 } }] })
        .expect(200);
      expect(res.body.grants).toEqual([expect.objectContaining({ permissionKey: 'tasks:assign_scope', scope: { projectId: p1 } })]);
      const logs = await t.dataSource.query(
        `SELECT entity_type, entity_id FROM activity_log WHERE company_id = $1 AND action = 'company_member.updated' ORDER BY created_at`,
        [company.id],
      );
      expect(logs).toEqual([
        { entity_type: 'company_member', entity_id: member.id },
        { entity_type: 'company_member', entity_id: member.id },
      ]);

      expect((await assign(p1)).status).toBe(201);
      const elsewhere = await assign(p2);
      expect([elsewhere.status, elsewhere.body.reason]).toEqual([403, 'deny_scope']);
      const unplaced = await assign();
      expect([unplaced.status, unplaced.body.reason]).toEqual([403, 'deny_scope']);
      const access = (await t.http.get(`/api/agents/${lead.id}`).set(auth(owner.token)).expect(200)).body.access;
      expect(access).toMatchObject({ canAssignTasks: true, taskAssignSource: 'explicit_grant' });
    });
  });

  describe('POST /api/companies/:companyId/members/:memberId/archive', () => {
    it('deactivates the member, who then loses access; logs company_member.archived', async () => {
      const { company, owner } = await ownedCompany(t);
      const m = await makeMember(t, company.id);
      await t.http.get(`/api/companies/${company.id}`).set(auth(m.token)).expect(200);
      await t.http.post(`/api/companies/${company.id}/members/${m.memberId}/archive`).set(auth(m.token)).send({}).expect(403);
      const res = await t.http
        .post(`/api/companies/${company.id}/members/${m.memberId}/archive`)
        .set(auth(owner.token))
        .send({})
        .expect(200);
      expect(res.body).toMatchObject({ id: m.memberId, status: 'inactive' });
      await t.http.get(`/api/companies/${company.id}`).set(auth(m.token)).expect(403);
      const logs = await t.dataSource.query(`SELECT 1 FROM activity_log WHERE company_id = $1 AND action = 'company_member.archived'`, [
        company.id,
      ]);
      expect(logs).toHaveLength(1);
    });

    it('refuses the last owner (409) and another company (403)', async () => {
      const { company, owner } = await ownedCompany(t);
      const other = await ownedCompany(t);
      const [me] = (await t.http.get(`/api/companies/${company.id}/members`).set(auth(owner.token))).body;
      await t.http.post(`/api/companies/${company.id}/members/${me.id}/archive`).set(auth(owner.token)).send({}).expect(409);
      await t.http.post(`/api/companies/${company.id}/members/${me.id}/archive`).set(auth(other.owner.token)).send({}).expect(403);
    });

    it('an instance admin may manage any company', async () => {
      const { company } = await ownedCompany(t);
      const m = await makeMember(t, company.id);
      const admin = await instanceAdmin(t);
      await t.http.post(`/api/companies/${company.id}/members/${m.memberId}/archive`).set(auth(admin.token)).send({}).expect(200);
    });
  });
});

describe('members (local trusted mode)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it('the implicit board reads and manages members of every company', async () => {
    const c = await createCompany(t);
    expect((await t.http.get(`/api/companies/${c.id}/members`).expect(200)).body).toEqual([]);
    expect((await t.http.get(`/api/companies/${c.id}/user-directory`).expect(200)).body).toEqual([]);
    const [m] = await t.dataSource.query(
      `INSERT INTO company_memberships (company_id, principal_type, principal_id, membership_role) VALUES ($1, 'user', 'someone', 'member') RETURNING id`,
      [c.id],
    );
    const res = await t.http
      .patch(`/api/companies/${c.id}/members/${m.id}/role-and-grants`)
      .send({ membershipRole: 'operator', grants: [{ permissionKey: 'tasks:assign' }] })
      .expect(200);
    expect(res.body).toMatchObject({ membershipRole: 'operator', grants: [{ permissionKey: 'tasks:assign', scope: null }], user: null });
  });
});
