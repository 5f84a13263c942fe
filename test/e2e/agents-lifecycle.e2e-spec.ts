import { randomUUID } from 'node:crypto';
import { generateToken, sha256Hex } from '../../src/common/auth/tokens';
import { CancellationScope, WorkCancellation } from '../../src/common/events/work-cancellation.port';
import {
  agentBody,
  createAgent,
  createAgentKey,
  createAgentWithKey,
  createPendingHire,
  createRestrictedAgentWithKey,
} from '../support/agents';
import { bearer, createCompany } from '../support/factories';
import { waitFor } from '../support/heartbeat';
import { createTestApp, TestApp } from '../support/test-app';

describe('agent lifecycle, keys, permissions', () => {
  let t: TestApp;
  const cancelled: Array<{ scope: CancellationScope; reason: string }> = [];
  beforeAll(async () => {
    t = await createTestApp();
    t.app.get(WorkCancellation).register(async (scope, reason) => {
      cancelled.push({ scope, reason });
    });
  });
  afterAll(() => t.close());

  const status = async (id: string) => (await t.http.get(`/api/agents/${id}`).expect(200)).body.status as string;
  const cancelledFor = (agentId: string) => cancelled.filter((c) => c.scope.agentIds?.includes(agentId)).map((c) => c.reason);

  describe('POST /api/agents/:agentId/pause and /resume', () => {
    it('pauses (cancelling work) and resumes to idle', async () => {
      const co = await createCompany(t);
      const a = await createAgent(t, co.id);
      const p = await t.http.post(`/api/agents/${a.id}/pause`).expect(200);
      expect(p.body).toMatchObject({ status: 'paused', pauseReason: 'manual' });
      expect(cancelledFor(a.id)).toEqual(['agent_paused']);
      await t.http.post(`/api/agents/${a.id}/pause`).expect(200);
      const r = await t.http.post(`/api/agents/${a.id}/resume`).expect(200);
      expect(r.body).toMatchObject({ status: 'idle', pauseReason: null });
      const acts = await t.dataSource.query(`SELECT action FROM activity_log WHERE entity_id = $1 ORDER BY created_at`, [a.id]);
      expect(acts.map((x: { action: string }) => x.action)).toEqual(['agent.created', 'agent.paused', 'agent.paused', 'agent.resumed']);
    });

    it('pauses a pending_approval agent but never resumes it', async () => {
      const co = await createCompany(t, { requireBoardApprovalForNewAgents: true });
      const { agent } = await createPendingHire(t, co.id);
      const res = await t.http.post(`/api/agents/${agent.id}/resume`).expect(409);
      expect(res.body.code).toBe('invalid_agent_status');
      expect(await status(agent.id)).toBe('pending_approval');
      await t.http.post(`/api/agents/${agent.id}/pause`).expect(200);
      expect(await status(agent.id)).toBe('paused');
      // paused while waiting for approval: still no resume and no keys until the board decides
      expect((await t.http.post(`/api/agents/${agent.id}/resume`).expect(409)).body.code).toBe('hire_approval_pending');
      await t.http.post(`/api/agents/${agent.id}/keys`).send({ name: 'k' }).expect(409);
      const [approval] = await t.dataSource.query(`SELECT id FROM approvals WHERE agent_id = $1`, [agent.id]);
      await t.http.post(`/api/approvals/${approval.id}/approve`).send({}).expect(200);
      expect(await status(agent.id)).toBe('paused');
      await t.http.post(`/api/agents/${agent.id}/resume`).expect(200);
      expect(await status(agent.id)).toBe('idle');
    });

    it('refuses to pause or resume a terminated agent', async () => {
      const co = await createCompany(t);
      const a = await createAgent(t, co.id);
      await t.http.post(`/api/agents/${a.id}/terminate`).expect(200);
      await t.http.post(`/api/agents/${a.id}/pause`).expect(409);
      await t.http.post(`/api/agents/${a.id}/resume`).expect(409);
      expect(await status(a.id)).toBe('terminated');
    });

    it('needs lifecycle authority: an agent cannot pause a peer or itself; its manager and the board can', async () => {
      const co = await createCompany(t);
      const boss = await createRestrictedAgentWithKey(t, co.id);
      const worker = await createRestrictedAgentWithKey(t, co.id, { reportsTo: boss.agent.id });
      expect((await t.http.post(`/api/agents/${boss.agent.id}/pause`).set(bearer(worker.token)).expect(403)).body.reason).toBe(
        'deny_missing_grant',
      );
      await t.http.post(`/api/agents/${worker.agent.id}/pause`).set(bearer(worker.token)).expect(403);
      const paused = await t.http.post(`/api/agents/${worker.agent.id}/pause`).set(bearer(boss.token)).expect(200);
      // the manager may run the lifecycle but, without agents:create, not read the configuration
      expect(paused.body).toMatchObject({ status: 'paused', configRedacted: true, adapterConfig: {} });
      const other = await createCompany(t);
      const outsider = await createAgentWithKey(t, other.id, { role: 'ceo' });
      await t.http.post(`/api/agents/${worker.agent.id}/resume`).set(bearer(outsider.token)).expect(404);
      await t.http.post(`/api/agents/${randomUUID()}/pause`).expect(404);
    });
  });

  describe('POST /api/agents/:agentId/terminate', () => {
    it('terminates, revokes every key at once and cancels work', async () => {
      const co = await createCompany(t);
      const a = await createAgent(t, co.id);
      const k1 = await createAgentKey(t, a.id, 'one');
      const k2 = await createAgentKey(t, a.id, 'two');
      await t.http.get('/api/agents/me').set(bearer(k1.token)).expect(200);
      const res = await t.http.post(`/api/agents/${a.id}/terminate`).expect(200);
      expect(res.body.status).toBe('terminated');
      expect(cancelledFor(a.id)).toEqual(['agent_terminated']);
      await t.http.get('/api/agents/me').set(bearer(k1.token)).expect(401);
      await t.http.get('/api/agents/me').set(bearer(k2.token)).expect(401);
      const keys = (await t.http.get(`/api/agents/${a.id}/keys`).expect(200)).body;
      expect(keys).toHaveLength(2);
      expect(keys.every((k: { revoked: boolean; revokedAt: string }) => k.revoked && k.revokedAt)).toBe(true);
      await t.http.post(`/api/agents/${a.id}/terminate`).expect(200);
      await t.http.patch(`/api/agents/${a.id}`).send({ status: 'idle' }).expect(409);
    });
  });

  describe('DELETE /api/agents/:agentId', () => {
    it('hard-deletes the agent with its keys, wakeups and runs', async () => {
      const co = await createCompany(t);
      const boss = await createAgent(t, co.id);
      const a = await createAgent(t, co.id, { reportsTo: boss.id });
      const sub = await createAgent(t, co.id, { reportsTo: a.id });
      const key = await createAgentKey(t, a.id);
      await t.http.patch(`/api/agents/${a.id}/permissions`).send({ canAssignTasks: true }).expect(200);
      const [w] = await t.dataSource.query(
        `INSERT INTO agent_wakeup_requests (company_id, agent_id, source) VALUES ($1, $2, 'on_demand') RETURNING id`,
        [co.id, a.id],
      );
      await t.dataSource.query(
        `INSERT INTO heartbeat_runs (company_id, agent_id, wakeup_request_id, invocation_source, adapter_type) VALUES ($1, $2, $3, 'on_demand', 'process')`,
        [co.id, a.id, w.id],
      );
      const res = await t.http.delete(`/api/agents/${a.id}`).expect(200);
      expect(res.body.id).toBe(a.id);
      await t.http.get(`/api/agents/${a.id}`).expect(404);
      await t.http.get('/api/agents/me').set(bearer(key.token)).expect(401);
      for (const table of ['agent_api_keys', 'agent_wakeup_requests', 'heartbeat_runs']) {
        expect(await t.dataSource.query(`SELECT 1 FROM ${table} WHERE agent_id = $1`, [a.id])).toHaveLength(0);
      }
      expect(await t.dataSource.query(`SELECT 1 FROM principal_permission_grants WHERE principal_id = $1`, [a.id])).toHaveLength(0);
      expect((await t.http.get(`/api/agents/${sub.id}`)).body.reportsTo).toBeNull();
      expect(cancelledFor(a.id)).toEqual(['agent_deleted']);
      const roster = (await t.http.get(`/api/companies/${co.id}/agents`)).body;
      expect(roster.map((x: { id: string }) => x.id).sort()).toEqual([boss.id, sub.id].sort());
      await t.http.delete(`/api/agents/${a.id}`).expect(404);
    });

    it('cancels the pending hire approval of a deleted agent', async () => {
      const co = await createCompany(t, { requireBoardApprovalForNewAgents: true });
      const { agent, approval } = await createPendingHire(t, co.id);
      await t.http.delete(`/api/agents/${agent.id}`).expect(200);
      expect((await t.http.get(`/api/approvals/${approval.id}`).expect(200)).body).toMatchObject({ status: 'cancelled', agentId: null });
    });

    it('refuses agents without lifecycle authority', async () => {
      const co = await createCompany(t);
      const a = await createAgent(t, co.id);
      const peer = await createRestrictedAgentWithKey(t, co.id);
      await t.http.delete(`/api/agents/${a.id}`).set(bearer(peer.token)).expect(403);
      expect(await status(a.id)).toBe('idle');
    });
  });

  describe('/api/agents/:agentId/keys', () => {
    it('returns the token once, lists keys without it, revokes and keeps the record', async () => {
      const co = await createCompany(t);
      const a = await createAgent(t, co.id);
      const created = await t.http.post(`/api/agents/${a.id}/keys`).send({ name: 'ci' }).expect(201);
      expect(created.body).toMatchObject({ agentId: a.id, companyId: co.id, name: 'ci', revoked: false, revokedAt: null });
      expect(created.body.token).toMatch(/^svc_ak_[A-Za-z0-9_-]{43}$/);
      const [row] = await t.dataSource.query(`SELECT token_hash FROM agent_api_keys WHERE id = $1`, [created.body.id]);
      expect(row.token_hash).toBe(sha256Hex(created.body.token));
      const list = await t.http.get(`/api/agents/${a.id}/keys`).expect(200);
      expect(list.text).not.toContain(created.body.token);
      expect(list.body[0]).not.toHaveProperty('tokenHash');
      await t.http.get('/api/agents/me').set(bearer(created.body.token)).expect(200);
      // the key is marked used (the agents module's resolver, registered with the guard)
      await waitFor(async () => (await t.http.get(`/api/agents/${a.id}/keys`)).body[0].lastUsedAt !== null, 'key marked used');
      const revoked = await t.http.delete(`/api/agents/${a.id}/keys/${created.body.id}`).expect(200);
      expect(revoked.body.revoked).toBe(true);
      await t.http.get('/api/agents/me').set(bearer(created.body.token)).expect(401);
      await t.http.delete(`/api/agents/${a.id}/keys/${created.body.id}`).expect(200);
      expect((await t.http.get(`/api/agents/${a.id}/keys`)).body).toHaveLength(1);
    });

    it('refuses keys for pending_approval and terminated agents', async () => {
      const co = await createCompany(t, { requireBoardApprovalForNewAgents: true });
      const { agent } = await createPendingHire(t, co.id);
      const res = await t.http.post(`/api/agents/${agent.id}/keys`).send({ name: 'k' }).expect(409);
      expect(res.text).not.toContain('"token"');
      const plain = await createCompany(t);
      const a = await createAgent(t, plain.id);
      await t.http.post(`/api/agents/${a.id}/terminate`).expect(200);
      await t.http.post(`/api/agents/${a.id}/keys`).send({ name: 'k' }).expect(409);
    });

    it('validates input and ids', async () => {
      const co = await createCompany(t);
      const a = await createAgent(t, co.id);
      const b = await createAgent(t, co.id);
      await t.http.post(`/api/agents/${a.id}/keys`).send({}).expect(400);
      const key = await createAgentKey(t, b.id);
      await t.http.delete(`/api/agents/${a.id}/keys/${key.id}`).expect(404);
      await t.http.delete(`/api/agents/${a.id}/keys/not-a-uuid`).expect(404);
      await t.http.get(`/api/agents/${randomUUID()}/keys`).expect(404);
    });

    it('lets an agent manage neither its own nor a peer’s keys without authority', async () => {
      const co = await createCompany(t);
      const peer = await createRestrictedAgentWithKey(t, co.id);
      const a = await createAgent(t, co.id);
      await t.http.get(`/api/agents/${a.id}/keys`).set(bearer(peer.token)).expect(403);
      await t.http.post(`/api/agents/${peer.agent.id}/keys`).set(bearer(peer.token)).send({ name: 'x' }).expect(403);
    });
  });

  describe('PATCH /api/agents/:agentId/permissions', () => {
    it('stores canCreateAgents; canAssignTasks writes and clears the tasks:assign grant and keeps the membership', async () => {
      const co = await createCompany(t);
      const a = await createAgent(t, co.id, { role: 'engineer' });
      await t.http.patch(`/api/agents/${a.id}/permissions`).send({ canCreateAgents: true, canAssignTasks: true }).expect(200);
      let g = (await t.http.get(`/api/agents/${a.id}`)).body;
      expect(g.permissions).toEqual({ canCreateAgents: true });
      expect(g.access).toMatchObject({
        canAssignTasks: true,
        taskAssignSource: 'explicit_grant',
        membership: { principalType: 'agent', principalId: a.id, status: 'active', membershipRole: 'member' },
        grants: [{ permissionKey: 'tasks:assign', scope: null, grantedBy: 'user:local-board' }],
      });
      await t.http.patch(`/api/agents/${a.id}/permissions`).send({ canAssignTasks: true }).expect(200);
      expect(await t.dataSource.query(`SELECT 1 FROM principal_permission_grants WHERE principal_id = $1`, [a.id])).toHaveLength(1);
      await t.http.patch(`/api/agents/${a.id}/permissions`).send({ canAssignTasks: false }).expect(200);
      g = (await t.http.get(`/api/agents/${a.id}`)).body;
      expect(g.access).toMatchObject({ canAssignTasks: true, taskAssignSource: 'agent_creator', grants: [] });
      expect(g.access.membership.status).toBe('active');
      await t.http.patch(`/api/agents/${a.id}/permissions`).send({ canCreateAgents: false }).expect(200);
      g = (await t.http.get(`/api/agents/${a.id}`)).body;
      expect(g.permissions).toEqual({ canCreateAgents: false });
      expect(g.access).toMatchObject({ canAssignTasks: false, taskAssignSource: 'none' });
    });

    it('reactivates an inactive membership when canAssignTasks is granted', async () => {
      const co = await createCompany(t);
      const a = await createAgent(t, co.id);
      await t.dataSource.query(
        `UPDATE company_memberships SET status = 'inactive' WHERE company_id = $1 AND principal_type = 'agent' AND principal_id = $2`,
        [co.id, a.id],
      );
      expect((await t.http.get(`/api/agents/${a.id}`)).body.access.taskAssignSource).toBe('none');
      await t.http.patch(`/api/agents/${a.id}/permissions`).send({ canAssignTasks: true }).expect(200);
      expect((await t.http.get(`/api/agents/${a.id}`)).body.access).toMatchObject({
        canAssignTasks: true,
        membership: { status: 'active' },
      });
    });

    it('accepts board callers and the company CEO agent; other agents get 403', async () => {
      const co = await createCompany(t);
      const target = await createAgent(t, co.id, { role: 'engineer' });
      const eng = await createAgentWithKey(t, co.id, { role: 'engineer' });
      await t.http.patch(`/api/agents/${eng.agent.id}/permissions`).send({ canCreateAgents: true }).expect(200);
      const ceo = await createAgentWithKey(t, co.id, { role: 'ceo' });
      const denied = await t.http
        .patch(`/api/agents/${target.id}/permissions`)
        .set(bearer(eng.token))
        .send({ canCreateAgents: true })
        .expect(403);
      expect(denied.body).toMatchObject({ code: 'forbidden', reason: 'deny_missing_grant' });
      expect((await t.http.get(`/api/agents/${target.id}`)).body.permissions).toEqual({});
      await t.http
        .patch(`/api/agents/${target.id}/permissions`)
        .set(bearer(ceo.token))
        .send({ canCreateAgents: true, canAssignTasks: true })
        .expect(200);
      const g = (await t.http.get(`/api/agents/${target.id}`)).body;
      expect(g.permissions).toEqual({ canCreateAgents: true });
      expect(g.access.grants[0].grantedBy).toBe(`agent:${ceo.agent.id}`);
      const other = await createCompany(t);
      const foreignCeo = await createAgentWithKey(t, other.id, { role: 'ceo' });
      await t.http.patch(`/api/agents/${target.id}/permissions`).set(bearer(foreignCeo.token)).send({ canCreateAgents: false }).expect(404);
    });

    it('stores an authorization policy block and refuses unclassifiable ones', async () => {
      const co = await createCompany(t);
      const a = await createAgent(t, co.id);
      const policy = { assignmentPolicy: { mode: 'protected' } };
      const res = await t.http.patch(`/api/agents/${a.id}/permissions`).send({ authorizationPolicy: policy }).expect(200);
      expect(res.body.permissions).toEqual({ authorizationPolicy: policy });
      const bad = await t.http
        .patch(`/api/agents/${a.id}/permissions`)
        .send({ authorizationPolicy: { weird: true } })
        .expect(422);
      expect(bad.body.field).toBe('authorizationPolicy');
      expect(
        (await t.http.patch(`/api/agents/${a.id}/permissions`).send({ authorizationPolicy: null }).expect(200)).body.permissions,
      ).toEqual({});
    });

    it('validates the body', async () => {
      const co = await createCompany(t);
      const a = await createAgent(t, co.id);
      await t.http.patch(`/api/agents/${a.id}/permissions`).send({ canAssignTasks: 'yes' }).expect(400);
      await t.http.patch(`/api/agents/${randomUUID()}/permissions`).send({ canAssignTasks: true }).expect(404);
    });
  });

  describe('PATCH /api/agents/:agentId/budgets', () => {
    it('sets budgetMonthlyCents and keeps one synced policy', async () => {
      const co = await createCompany(t);
      const a = await createAgent(t, co.id);
      expect(
        (await t.http.patch(`/api/agents/${a.id}/budgets`).send({ budgetMonthlyCents: 2500 }).expect(200)).body.budgetMonthlyCents,
      ).toBe(2500);
      await t.http.patch(`/api/agents/${a.id}/budgets`).send({ budgetMonthlyCents: 3100 }).expect(200);
      const rows = await t.dataSource.query(`SELECT amount, is_active FROM budget_policies WHERE scope_id = $1`, [a.id]);
      expect(rows).toEqual([{ amount: 3100, is_active: true }]);
      await t.http.patch(`/api/agents/${a.id}/budgets`).send({ budgetMonthlyCents: 0 }).expect(200);
      expect(await t.dataSource.query(`SELECT amount, is_active FROM budget_policies WHERE scope_id = $1`, [a.id])).toEqual([
        { amount: 0, is_active: false },
      ]);
    });

    it('rejects bad input and callers without authority', async () => {
      const co = await createCompany(t);
      const a = await createAgent(t, co.id);
      await t.http.patch(`/api/agents/${a.id}/budgets`).send({ budgetMonthlyCents: -5 }).expect(400);
      await t.http.patch(`/api/agents/${a.id}/budgets`).send({}).expect(400);
      const peer = await createRestrictedAgentWithKey(t, co.id);
      await t.http.patch(`/api/agents/${a.id}/budgets`).set(bearer(peer.token)).send({ budgetMonthlyCents: 5 }).expect(403);
      await t.http.patch(`/api/agents/${peer.agent.id}/budgets`).set(bearer(peer.token)).send({ budgetMonthlyCents: 5 }).expect(403);
    });
  });

  describe('GET /api/agents/:agentId/skills', () => {
    it('returns the snapshot with the desired skills (process agents: ephemeral)', async () => {
      const co = await createCompany(t);
      const a = await createAgent(t, co.id, { desiredSkills: ['service/catalog/agent-protocol'] });
      const res = await t.http.get(`/api/agents/${a.id}/skills`).expect(200);
      expect(res.body).toMatchObject({
        adapterType: 'process',
        supported: true,
        mode: 'ephemeral',
        desiredSkills: ['service/catalog/agent-protocol'],
        warnings: [],
      });
      const peer = await createRestrictedAgentWithKey(t, co.id);
      await t.http.get(`/api/agents/${a.id}/skills`).set(bearer(peer.token)).expect(403);
      await t.http.get(`/api/agents/${peer.agent.id}/skills`).set(bearer(peer.token)).expect(200);
    });
  });

  describe('agent API keys as credentials on company routes', () => {
    it('reads its own company, gets 403 on another company and on board-only routes', async () => {
      const co = await createCompany(t);
      const other = await createCompany(t);
      const { token } = await createAgentWithKey(t, co.id);
      expect((await t.http.get(`/api/companies/${co.id}`).set(bearer(token)).expect(200)).body.id).toBe(co.id);
      await t.http.get(`/api/companies/${other.id}`).set(bearer(token)).expect(403);
      await t.http.post('/api/companies').set(bearer(token)).send({ name: 'Nope Co' }).expect(403);
      await t.http.get('/api/companies').set(bearer(token)).expect(403);
      await t.http
        .get(`/api/companies/${co.id}`)
        .set(bearer(generateToken('ak')))
        .expect(401);
    });
  });
});

describe('agent routes in authenticated mode', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: { SERVICE_DEPLOYMENT_MODE: 'authenticated' } });
  });
  afterAll(() => t.close());

  it('answers 401 without credentials', async () => {
    const id = randomUUID();
    await t.http.get(`/api/companies/${id}/agents`).expect(401);
    await t.http.post(`/api/companies/${id}/agents`).send(agentBody()).expect(401);
    await t.http.post(`/api/companies/${id}/agent-hires`).send(agentBody()).expect(401);
    await t.http.get(`/api/agents/${id}`).expect(401);
    await t.http.get('/api/agents/me').expect(401);
    await t.http.patch(`/api/agents/${id}`).send({ name: 'x' }).expect(401);
    await t.http.post(`/api/agents/${id}/keys`).send({ name: 'x' }).expect(401);
    await t.http.get(`/api/approvals/${id}`).expect(401);
  });

  it('accepts an agent API key', async () => {
    const [co] = await t.dataSource.query(`INSERT INTO companies (name, issue_prefix) VALUES ('Auth Co', 'AUT') RETURNING id`);
    const [agent] = await t.dataSource.query(
      `INSERT INTO agents (company_id, name, url_key, adapter_type) VALUES ($1, 'A', 'a', 'process') RETURNING id`,
      [co.id],
    );
    const token = generateToken('ak');
    await t.dataSource.query(
      `INSERT INTO agent_api_keys (company_id, agent_id, name, token_hash, token_prefix) VALUES ($1, $2, 'k', $3, 'svc_ak')`,
      [co.id, agent.id, sha256Hex(token)],
    );
    expect((await t.http.get('/api/agents/me').set(bearer(token)).expect(200)).body.id).toBe(agent.id);
    await t.http.get(`/api/companies/${co.id}/agents`).set(bearer(token)).expect(200);
  });
});
