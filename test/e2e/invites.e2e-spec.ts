import { randomUUID } from 'node:crypto';
import { generateToken } from '../../src/common/auth/tokens';
import { createCompany } from '../support/factories';
import { createTestApp, TestApp } from '../support/test-app';
import { auth, AUTHENTICATED, insertAgentWithKey, makeMember, ownedCompany, signUp } from '../support/users';

const PNG_1PX = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');

describe('invites and join requests (authenticated mode)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: AUTHENTICATED });
  });
  afterAll(() => t.close());

  const createInvite = async (companyId: string, token: string, body: Record<string, unknown> = {}) =>
    (await t.http.post(`/api/companies/${companyId}/invites`).set(auth(token)).send(body).expect(201)).body;

  /** an agent join request through an invite: { request, claimSecret } */
  const agentJoin = async (companyId: string, ownerToken: string) => {
    const invite = await createInvite(companyId, ownerToken, { allowedJoinTypes: 'agent' });
    const res = await t.http
      .post(`/api/invites/${invite.token}/accept`)
      .send({ agentName: 'Night Owl', adapterType: 'http', capabilities: 'reviews' })
      .expect(201);
    return { request: res.body, claimSecret: res.body.claimSecret as string };
  };

  describe('POST /api/companies/:companyId/invites', () => {
    it('creates an invite with the token and URL shown once; the list shows no token; activity has no token', async () => {
      const { company, owner } = await ownedCompany(t);
      const inv = await createInvite(company.id, owner.token, { role: 'admin', message: 'welcome' });
      expect(inv).toMatchObject({
        companyId: company.id,
        role: 'admin',
        allowedJoinTypes: 'both',
        status: 'active',
        message: 'welcome',
        createdByUserId: owner.id,
      });
      expect(inv.token).toMatch(/^svc_iv_/);
      expect(inv.inviteUrl).toBe(`${t.config.publicUrl}/api/invites/${inv.token}`);
      expect(new Date(inv.expiresAt).getTime() - Date.now()).toBeGreaterThan(167 * 3600_000);
      const list = await t.http.get(`/api/companies/${company.id}/invites`).set(auth(owner.token)).expect(200);
      expect(list.body.map((i: { id: string }) => i.id)).toEqual([inv.id]);
      expect(JSON.stringify(list.body)).not.toContain(inv.token);
      const logs = await t.dataSource.query(`SELECT details FROM activity_log WHERE company_id = $1 AND action = 'invite.created'`, [
        company.id,
      ]);
      expect(logs).toHaveLength(1);
      expect(JSON.stringify(logs)).not.toContain(inv.token);
    });

    it('needs users:invite (403 for a plain member), another company is 403, no credentials 401', async () => {
      const { company, owner } = await ownedCompany(t);
      const m = await makeMember(t, company.id);
      const denied = await t.http.post(`/api/companies/${company.id}/invites`).set(auth(m.token)).send({}).expect(403);
      expect(denied.body.reason).toBe('deny_missing_grant');
      await t.http.get(`/api/companies/${company.id}/invites`).set(auth(m.token)).expect(403);
      const other = await ownedCompany(t);
      await t.http.post(`/api/companies/${company.id}/invites`).set(auth(other.owner.token)).send({}).expect(403);
      await t.http.post(`/api/companies/${company.id}/invites`).send({}).expect(401);
      const admin = await makeMember(t, company.id, 'admin');
      await t.http.post(`/api/companies/${company.id}/invites`).set(auth(admin.token)).send({}).expect(201);
      // only owners hand out the owner role
      await t.http.post(`/api/companies/${company.id}/invites`).set(auth(admin.token)).send({ role: 'owner' }).expect(403);
      await t.http.post(`/api/companies/${company.id}/invites`).set(auth(owner.token)).send({ role: 'owner' }).expect(201);
    });

    it('lets an agent with a users:invite grant invite; others get 403', async () => {
      const { company } = await ownedCompany(t);
      const agent = await insertAgentWithKey(t, company.id);
      await t.http.post(`/api/companies/${company.id}/invites`).set(auth(agent.token)).send({}).expect(403);
      await t.dataSource.query(
        `INSERT INTO principal_permission_grants (company_id, principal_type, principal_id, permission_key) VALUES ($1, 'agent', $2, 'users:invite')`,
        [company.id, agent.agentId],
      );
      const res = await t.http.post(`/api/companies/${company.id}/invites`).set(auth(agent.token)).send({}).expect(201);
      expect(res.body.createdByAgentId).toBe(agent.agentId);
    });

    it('validates the body (400)', async () => {
      const { company, owner } = await ownedCompany(t);
      for (const body of [{ role: 'king' }, { allowedJoinTypes: 'robots' }, { expiresInHours: 0 }, { expiresInHours: 10_000 }]) {
        await t.http.post(`/api/companies/${company.id}/invites`).set(auth(owner.token)).send(body).expect(400);
      }
    });
  });

  describe('GET /api/invites/:token and onboarding material', () => {
    it('shows the invite to anyone with the token; 404 unknown; 410 revoked or expired', async () => {
      const { company, owner } = await ownedCompany(t);
      const inv = await createInvite(company.id, owner.token);
      const res = await t.http.get(`/api/invites/${inv.token}`).expect(200);
      expect(res.body).toMatchObject({
        id: inv.id,
        companyId: company.id,
        companyName: company.name,
        status: 'active',
        role: 'member',
        companyLogoUrl: null,
      });
      expect(res.body.token).toBeUndefined();
      await t.http.get(`/api/invites/${generateToken('iv')}`).expect(404);
      await t.http.get(`/api/invites/garbage`).expect(404);
      await t.dataSource.query(`UPDATE invites SET expires_at = now() - interval '1 second' WHERE id = $1`, [inv.id]);
      expect((await t.http.get(`/api/invites/${inv.token}`).expect(410)).body.code).toBe('invite_expired');
    });

    it('serves onboarding JSON, plain text, the skills index and one skill', async () => {
      const { company, owner } = await ownedCompany(t);
      const inv = await createInvite(company.id, owner.token);
      const json = await t.http.get(`/api/invites/${inv.token}/onboarding`).expect(200);
      expect(json.body).toMatchObject({
        company: { id: company.id, name: company.name },
        accept: { method: 'POST', url: `${inv.inviteUrl}/accept` },
      });
      const txt = await t.http.get(`/api/invites/${inv.token}/onboarding.txt`).expect(200);
      expect(txt.headers['content-type']).toMatch(/^text\/plain/);
      expect(txt.text).toContain(`POST ${inv.inviteUrl}/accept`);
      const index = await t.http.get(`/api/invites/${inv.token}/skills/index`).expect(200);
      // the bundled catalog skills (the agent protocol) are offered beside the onboarding ones
      expect(index.body.map((s: { name: string }) => s.name)).toEqual(['join-company', 'service-basics', 'agent-protocol']);
      expect((await t.http.get(`/api/invites/${inv.token}/skills/agent-protocol`).expect(200)).text).toContain('X-Service-Run-Id');
      const skill = await t.http.get(`/api/invites/${inv.token}/skills/join-company`).expect(200);
      expect(skill.headers['content-type']).toMatch(/^text\/markdown/);
      expect(skill.text).toMatch(/^---\nname: join-company/);
      await t.http.get(`/api/invites/${inv.token}/skills/constructor`).expect(404);
      await t.http.get(`/api/invites/${inv.token}/skills/nope`).expect(404);
      await t.http.post(`/api/invites/${inv.id}/revoke`).set(auth(owner.token)).expect(200);
      await t.http.get(`/api/invites/${inv.token}/onboarding.txt`).expect(410);
    });

    it('serves the company logo, 404 without one', async () => {
      const { company, owner } = await ownedCompany(t);
      const inv = await createInvite(company.id, owner.token);
      await t.http.get(`/api/invites/${inv.token}/logo`).expect(404);
      const asset = await t.http
        .post(`/api/companies/${company.id}/logo`)
        .set(auth(owner.token))
        .attach('file', PNG_1PX, { filename: 'l.png', contentType: 'image/png' })
        .expect(201);
      await t.http
        .patch(`/api/companies/${company.id}/branding`)
        .set(auth(owner.token))
        .send({ logoAssetId: asset.body.assetId })
        .expect(200);
      const logo = await t.http.get(`/api/invites/${inv.token}/logo`).expect(200);
      expect(logo.headers['content-type']).toBe('image/png');
      expect(Buffer.compare(logo.body as Buffer, PNG_1PX)).toBe(0);
      expect((await t.http.get(`/api/invites/${inv.token}`)).body.companyLogoUrl).toBe(`${inv.inviteUrl}/logo`);
    });
  });

  describe('GET /api/invites/:token/test-resolution', () => {
    it('requires url (400) and tells whether it leads to the invite', async () => {
      const { company, owner } = await ownedCompany(t);
      const inv = await createInvite(company.id, owner.token);
      await t.http.get(`/api/invites/${inv.token}/test-resolution`).expect(400);
      await t.http.get(`/api/invites/${inv.token}/test-resolution`).query({ url: 'not a url' }).expect(400);
      await t.http.get(`/api/invites/${inv.token}/test-resolution`).query({ url: 'ftp://host/x' }).expect(400);
      const ok = await t.http
        .get(`/api/invites/${inv.token}/test-resolution`)
        .query({ url: `${inv.inviteUrl}/onboarding.txt` })
        .expect(200);
      expect(ok.body).toMatchObject({ tokenMatches: true, originMatches: true, resolves: true, inviteStatus: 'active' });
      const elsewhere = await t.http
        .get(`/api/invites/${inv.token}/test-resolution`)
        .query({ url: `https://evil.example/api/invites/${inv.token}` })
        .expect(200);
      expect(elsewhere.body).toMatchObject({ tokenMatches: true, originMatches: false, resolves: false });
      await t.http
        .get(`/api/invites/${generateToken('iv')}/test-resolution`)
        .query({ url: inv.inviteUrl })
        .expect(404);
    });
  });

  describe('POST /api/invites/:inviteId/revoke', () => {
    it('revokes by id (idempotent); 404 unknown or of another company; 403 without users:invite', async () => {
      const { company, owner } = await ownedCompany(t);
      const inv = await createInvite(company.id, owner.token);
      const other = await ownedCompany(t);
      const m = await makeMember(t, company.id);
      await t.http.post(`/api/invites/${inv.id}/revoke`).set(auth(other.owner.token)).expect(404);
      await t.http.post(`/api/invites/${inv.id}/revoke`).set(auth(m.token)).expect(403);
      await t.http.post(`/api/invites/${randomUUID()}/revoke`).set(auth(owner.token)).expect(404);
      await t.http.post(`/api/invites/${inv.id}/revoke`).expect(401);
      const first = await t.http.post(`/api/invites/${inv.id}/revoke`).set(auth(owner.token)).expect(200);
      expect(first.body.status).toBe('revoked');
      const second = await t.http.post(`/api/invites/${inv.id}/revoke`).set(auth(owner.token)).expect(200);
      expect(second.body.revokedAt).toBe(first.body.revokedAt);
      const gone = await t.http.get(`/api/invites/${inv.token}`).expect(410);
      expect(gone.body).toMatchObject({ code: 'invite_revoked', error: 'Invite has been revoked' });
      await t.http.post(`/api/invites/${inv.token}/accept`).set(auth(m.token)).send({}).expect(410);
    });
  });

  describe('POST /api/invites/:token/accept', () => {
    it('makes a signed-in human a member with the invite role and its default grants; twice is 409', async () => {
      const { company, owner } = await ownedCompany(t);
      const inv = await createInvite(company.id, owner.token, { role: 'operator' });
      const u = await signUp(t);
      await t.http.get(`/api/companies/${company.id}`).set(auth(u.token)).expect(403);
      const res = await t.http.post(`/api/invites/${inv.token}/accept`).set(auth(u.token)).send({}).expect(201);
      expect(res.body).toMatchObject({
        companyId: company.id,
        principalType: 'user',
        principalId: u.id,
        membershipRole: 'operator',
        status: 'active',
        grants: [{ permissionKey: 'tasks:assign', scope: null }],
      });
      await t.http.get(`/api/companies/${company.id}`).set(auth(u.token)).expect(200);
      expect((await t.http.post(`/api/invites/${inv.token}/accept`).set(auth(u.token)).send({}).expect(409)).body.code).toBe(
        'already_member',
      );
    });

    it('makes a user a member once when the same invite is accepted concurrently', async () => {
      const { company, owner } = await ownedCompany(t);
      const inv = await createInvite(company.id, owner.token);
      const u = await signUp(t);
      const results = await Promise.all([1, 2, 3].map(() => t.http.post(`/api/invites/${inv.token}/accept`).set(auth(u.token)).send({})));
      expect(results.map((r) => r.status).sort()).toEqual([201, 409, 409]);
      const rows = await t.dataSource.query(`SELECT 1 FROM principal_permission_grants WHERE company_id = $1 AND principal_id = $2`, [
        company.id,
        u.id,
      ]);
      expect(rows).toHaveLength(0);
    });

    it('rejects a human without credentials (401) and a join type the invite does not admit (422)', async () => {
      const { company, owner } = await ownedCompany(t);
      const humans = await createInvite(company.id, owner.token, { allowedJoinTypes: 'human' });
      const agents = await createInvite(company.id, owner.token, { allowedJoinTypes: 'agent' });
      await t.http.post(`/api/invites/${humans.token}/accept`).send({ requestType: 'human' }).expect(401);
      const u = await signUp(t);
      expect((await t.http.post(`/api/invites/${agents.token}/accept`).set(auth(u.token)).send({}).expect(422)).body.code).toBe(
        'join_type_not_allowed',
      );
      await t.http.post(`/api/invites/${humans.token}/accept`).send({ agentName: 'Bot' }).expect(422);
    });

    it('files an agent join request with a claim secret shown once (stored hashed)', async () => {
      const { company, owner } = await ownedCompany(t);
      const { request, claimSecret } = await agentJoin(company.id, owner.token);
      expect(request).toMatchObject({
        companyId: company.id,
        requestType: 'agent',
        status: 'pending_approval',
        agentName: 'Night Owl',
        adapterType: 'http',
        capabilities: 'reviews',
        createdAgentId: null,
      });
      expect(claimSecret).toMatch(/^svc_cs_/);
      const [row] = await t.dataSource.query(`SELECT claim_secret_hash FROM join_requests WHERE id = $1`, [request.id]);
      expect(row.claim_secret_hash).not.toContain(claimSecret);
      const list = await t.http.get(`/api/companies/${company.id}/join-requests`).set(auth(owner.token)).expect(200);
      expect(JSON.stringify(list.body)).not.toContain(claimSecret);
      const logs = await t.dataSource.query(`SELECT * FROM activity_log WHERE company_id = $1 AND action = 'join_request.created'`, [
        company.id,
      ]);
      expect(logs).toHaveLength(1);
      expect(JSON.stringify(logs)).not.toContain(claimSecret);
    });

    it('requires agentName for an agent request (400)', async () => {
      const { company, owner } = await ownedCompany(t);
      const inv = await createInvite(company.id, owner.token);
      await t.http.post(`/api/invites/${inv.token}/accept`).send({}).expect(400);
      await t.http.post(`/api/invites/${inv.token}/accept`).send({ requestType: 'robot', agentName: 'x' }).expect(400);
    });
  });

  describe('join requests', () => {
    it('lists with status (pending alias) and request-type filters; needs joins:approve', async () => {
      const { company, owner } = await ownedCompany(t);
      const a = await agentJoin(company.id, owner.token);
      const b = await agentJoin(company.id, owner.token);
      await t.http.post(`/api/companies/${company.id}/join-requests/${b.request.id}/reject`).set(auth(owner.token)).send({}).expect(200);
      const get = (query: Record<string, string>) =>
        t.http.get(`/api/companies/${company.id}/join-requests`).query(query).set(auth(owner.token));
      const ids = (res: { body: Array<{ id: string }> }) => res.body.map((r) => r.id);
      expect(ids(await get({ status: 'pending' }).expect(200))).toEqual([a.request.id]);
      expect(ids(await get({ status: 'pending_approval' }).expect(200))).toEqual([a.request.id]);
      expect(ids(await get({ status: 'rejected' }).expect(200))).toEqual([b.request.id]);
      expect(ids(await get({ 'request-type': 'agent' }).expect(200))).toEqual([b.request.id, a.request.id]);
      expect(ids(await get({ 'request-type': 'human' }).expect(200))).toEqual([]);
      expect(ids(await get({ requestType: 'agent', status: 'pending' }).expect(200))).toEqual([a.request.id]);
      await get({ status: 'maybe' }).expect(400);
      const m = await makeMember(t, company.id);
      await t.http.get(`/api/companies/${company.id}/join-requests`).set(auth(m.token)).expect(403);
    });

    it('approve creates the agent and its membership; deciding twice is 409; reject leaves no agent', async () => {
      const { company, owner } = await ownedCompany(t);
      const { request } = await agentJoin(company.id, owner.token);
      const m = await makeMember(t, company.id);
      await t.http.post(`/api/companies/${company.id}/join-requests/${request.id}/approve`).set(auth(m.token)).send({}).expect(403);
      const res = await t.http
        .post(`/api/companies/${company.id}/join-requests/${request.id}/approve`)
        .set(auth(owner.token))
        .send({ note: 'ok' })
        .expect(200);
      expect(res.body).toMatchObject({
        status: 'approved',
        decidedByUserId: owner.id,
        decisionNote: 'ok',
        createdAgentId: expect.any(String),
      });
      const [agent] = await t.dataSource.query(`SELECT * FROM agents WHERE id = $1`, [res.body.createdAgentId]);
      expect(agent).toMatchObject({
        company_id: company.id,
        name: 'Night Owl',
        url_key: 'night-owl',
        adapter_type: 'http',
        status: 'idle',
        capabilities: 'reviews',
      });
      const members = await t.http.get(`/api/companies/${company.id}/members`).set(auth(owner.token)).expect(200);
      expect(members.body).toContainEqual(
        expect.objectContaining({
          principalType: 'agent',
          principalId: agent.id,
          membershipRole: 'member',
          agent: { id: agent.id, name: 'Night Owl', status: 'idle' },
        }),
      );
      const again = await t.http
        .post(`/api/companies/${company.id}/join-requests/${request.id}/reject`)
        .set(auth(owner.token))
        .send({})
        .expect(409);
      expect(again.body.code).toBe('join_request_not_pending');
      // a second agent of the same name gets its own URL key
      const second = await agentJoin(company.id, owner.token);
      const approved = await t.http
        .post(`/api/companies/${company.id}/join-requests/${second.request.id}/approve`)
        .set(auth(owner.token))
        .send({})
        .expect(200);
      const [agent2] = await t.dataSource.query(`SELECT url_key FROM agents WHERE id = $1`, [approved.body.createdAgentId]);
      expect(agent2.url_key).toBe('night-owl-2');
      const logs = await t.dataSource.query(
        `SELECT action FROM activity_log WHERE company_id = $1 AND action LIKE 'join_request.%' ORDER BY created_at`,
        [company.id],
      );
      expect(logs.map((l: { action: string }) => l.action)).toEqual([
        'join_request.created',
        'join_request.approved',
        'join_request.created',
        'join_request.approved',
      ]);
    });

    it('answers 404 for unknown requests and requests of another company', async () => {
      const { company, owner } = await ownedCompany(t);
      const other = await ownedCompany(t);
      const { request } = await agentJoin(other.company.id, other.owner.token);
      await t.http.post(`/api/companies/${company.id}/join-requests/${request.id}/approve`).set(auth(owner.token)).send({}).expect(404);
      await t.http.post(`/api/companies/${company.id}/join-requests/${randomUUID()}/reject`).set(auth(owner.token)).send({}).expect(404);
      await t.http.post(`/api/companies/${company.id}/join-requests/bad/reject`).set(auth(owner.token)).send({}).expect(404);
    });

    it('approving concurrently creates one agent', async () => {
      const { company, owner } = await ownedCompany(t);
      const { request } = await agentJoin(company.id, owner.token);
      const results = await Promise.all(
        [1, 2, 3].map(() =>
          t.http.post(`/api/companies/${company.id}/join-requests/${request.id}/approve`).set(auth(owner.token)).send({}),
        ),
      );
      expect(results.map((r) => r.status).sort()).toEqual([200, 409, 409]);
      const agents = await t.dataSource.query(`SELECT id FROM agents WHERE company_id = $1`, [company.id]);
      expect(agents).toHaveLength(1);
    });
  });

  describe('POST /api/join-requests/:requestId/claim-api-key', () => {
    it('exchanges the claim secret of an approved request for an agent key, once', async () => {
      const { company, owner } = await ownedCompany(t);
      const { request, claimSecret } = await agentJoin(company.id, owner.token);
      const url = `/api/join-requests/${request.id}/claim-api-key`;
      expect((await t.http.post(url).send({ claimSecret }).expect(409)).body.code).toBe('join_request_not_approved');
      await t.http.post(`/api/companies/${company.id}/join-requests/${request.id}/approve`).set(auth(owner.token)).send({}).expect(200);
      expect(
        (
          await t.http
            .post(url)
            .send({ claimSecret: generateToken('cs') })
            .expect(403)
        ).body.code,
      ).toBe('invalid_claim_secret');
      await t.http.post(url).send({}).expect(400);
      const res = await t.http.post(url).send({ claimSecret }).expect(201);
      expect(res.body).toMatchObject({ companyId: company.id, name: 'join-request', token: expect.stringMatching(/^svc_ak_/) });
      const me = await t.http.get('/api/cli-auth/me').set(auth(res.body.token)).expect(200);
      expect(me.body).toMatchObject({ persona: 'agent', agent: { id: res.body.agentId, companyId: company.id } });
      expect((await t.http.post(url).send({ claimSecret }).expect(409)).body.code).toBe('api_key_already_claimed');
      const [key] = await t.dataSource.query(`SELECT token_hash FROM agent_api_keys WHERE id = $1`, [res.body.id]);
      expect(key.token_hash).not.toBe(res.body.token);
      const logs = await t.dataSource.query(`SELECT details FROM activity_log WHERE company_id = $1`, [company.id]);
      expect(JSON.stringify(logs)).not.toContain(res.body.token);
      expect(JSON.stringify(logs)).not.toContain(claimSecret);
    });

    it('works once under concurrency; 404 unknown; rejected requests yield nothing', async () => {
      const { company, owner } = await ownedCompany(t);
      const { request, claimSecret } = await agentJoin(company.id, owner.token);
      await t.http.post(`/api/companies/${company.id}/join-requests/${request.id}/approve`).set(auth(owner.token)).send({}).expect(200);
      const results = await Promise.all(
        [1, 2, 3].map(() => t.http.post(`/api/join-requests/${request.id}/claim-api-key`).send({ claimSecret })),
      );
      expect(results.map((r) => r.status).sort()).toEqual([201, 409, 409]);
      await t.http.post(`/api/join-requests/${randomUUID()}/claim-api-key`).send({ claimSecret }).expect(404);
      const rejected = await agentJoin(company.id, owner.token);
      await t.http
        .post(`/api/companies/${company.id}/join-requests/${rejected.request.id}/reject`)
        .set(auth(owner.token))
        .send({})
        .expect(200);
      await t.http.post(`/api/join-requests/${rejected.request.id}/claim-api-key`).send({ claimSecret: rejected.claimSecret }).expect(409);
    });
  });

  describe('POST /api/companies/:companyId/openclaw/invite-prompt', () => {
    it('creates an agent-only invite and a prompt that leads through joining', async () => {
      const { company, owner } = await ownedCompany(t);
      const res = await t.http
        .post(`/api/companies/${company.id}/openclaw/invite-prompt`)
        .set(auth(owner.token))
        .send({ agentName: 'Scout', note: 'be nice' })
        .expect(201);
      expect(res.body.invite).toMatchObject({ companyId: company.id, allowedJoinTypes: 'agent', token: expect.stringMatching(/^svc_iv_/) });
      expect(res.body.prompt).toContain(`${res.body.invite.inviteUrl}/onboarding.txt`);
      expect(res.body.prompt).toContain('"agentName":"Scout"');
      expect(res.body.prompt).toContain('be nice');
      const m = await makeMember(t, company.id);
      await t.http.post(`/api/companies/${company.id}/openclaw/invite-prompt`).set(auth(m.token)).send({}).expect(403);
      await t.http
        .post(`/api/companies/${company.id}/openclaw/invite-prompt`)
        .set(auth(owner.token))
        .send({ expiresInHours: -1 })
        .expect(400);
    });
  });
});

describe('invites (local trusted mode)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it('the implicit board creates, lists and revokes invites; a human accept needs a signed-in user (422)', async () => {
    const c = await createCompany(t);
    const inv = (await t.http.post(`/api/companies/${c.id}/invites`).send({ role: 'member' }).expect(201)).body;
    expect((await t.http.get(`/api/companies/${c.id}/invites`).expect(200)).body).toHaveLength(1);
    expect((await t.http.post(`/api/invites/${inv.token}/accept`).send({ requestType: 'human' }).expect(422)).body.code).toBe(
      'user_required',
    );
    const joined = await t.http.post(`/api/invites/${inv.token}/accept`).send({ requestType: 'agent', agentName: 'Joiner' }).expect(201);
    const alias = await t.http.get(`/api/companies/${c.id}/join-requests`).query({ status: 'pending' }).expect(200);
    expect(alias.body.map((r: { id: string }) => r.id)).toEqual([joined.body.id]);
    await t.http.post(`/api/invites/${inv.id}/revoke`).expect(200);
    await t.http.get(`/api/invites/${inv.token}`).expect(410);
  });
});
