import { randomUUID } from 'node:crypto';
import { agentBody, createAgentKey, createAgentWithKey, createPendingHire } from '../support/agents';
import { bearer, createCompany } from '../support/factories';
import { sqlAgentKey } from '../support/sql';
import { createTestApp, TestApp } from '../support/test-app';

describe('approvals', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  const approvalCompany = () => createCompany(t, { requireBoardApprovalForNewAgents: true });
  const agentStatus = async (id: string) => (await t.http.get(`/api/agents/${id}`).expect(200)).body.status;

  describe('GET /api/companies/:companyId/approvals', () => {
    it('lists approvals newest first with a status filter', async () => {
      const co = await approvalCompany();
      const first = await createPendingHire(t, co.id);
      const second = await createPendingHire(t, co.id);
      await t.http.post(`/api/approvals/${first.approval.id}/approve`).send({}).expect(200);
      const all = await t.http.get(`/api/companies/${co.id}/approvals`).expect(200);
      expect(all.body.map((a: { id: string }) => a.id)).toEqual([second.approval.id, first.approval.id]);
      const pending = await t.http.get(`/api/companies/${co.id}/approvals`).query({ status: 'pending' }).expect(200);
      expect(pending.body.map((a: { id: string }) => a.id)).toEqual([second.approval.id]);
      const approved = await t.http.get(`/api/companies/${co.id}/approvals`).query({ status: 'approved', type: 'hire_agent' }).expect(200);
      expect(approved.body.map((a: { id: string }) => a.id)).toEqual([first.approval.id]);
      await t.http.get(`/api/companies/${co.id}/approvals`).query({ status: 'maybe' }).expect(400);
    });

    it('lets agents of the company read, and refuses other companies', async () => {
      const co = await approvalCompany();
      await createPendingHire(t, co.id);
      const other = await createCompany(t);
      const { token } = await createAgentWithKey(t, other.id);
      await t.http.get(`/api/companies/${co.id}/approvals`).set(bearer(token)).expect(403);
      await t.http.get(`/api/companies/${other.id}/approvals`).set(bearer(token)).expect(200);
      await t.http.get(`/api/companies/${randomUUID()}/approvals`).expect(404);
    });
  });

  describe('GET /api/approvals/:approvalId', () => {
    it('returns the approval with its requested configuration snapshot', async () => {
      const co = await approvalCompany();
      const { agent, approval } = await createPendingHire(t, co.id, { adapterConfig: { command: 'snap' }, budgetMonthlyCents: 700 });
      const res = await t.http.get(`/api/approvals/${approval.id}`).expect(200);
      expect(res.body).toMatchObject({ id: approval.id, type: 'hire_agent', status: 'pending', agentId: agent.id, decidedAt: null });
      expect(res.body.payload.agent).toMatchObject({
        adapterConfig: { command: 'snap' },
        budgetMonthlyCents: 700,
        status: 'pending_approval',
      });
    });

    it('answers 404 for unknown ids and for agents of another company', async () => {
      await t.http.get(`/api/approvals/${randomUUID()}`).expect(404);
      await t.http.get(`/api/approvals/nope`).expect(404);
      const co = await approvalCompany();
      const { approval } = await createPendingHire(t, co.id);
      const other = await createCompany(t);
      const { token } = await createAgentWithKey(t, other.id);
      await t.http.get(`/api/approvals/${approval.id}`).set(bearer(token)).expect(404);
    });
  });

  describe('POST /api/approvals/:approvalId/approve', () => {
    it('makes the hired agent idle, records the decision and writes activity', async () => {
      const co = await approvalCompany();
      const { agent, approval } = await createPendingHire(t, co.id);
      const res = await t.http.post(`/api/approvals/${approval.id}/approve`).send({ decisionNote: 'welcome' }).expect(200);
      expect(res.body).toMatchObject({ status: 'approved', decisionNote: 'welcome', decidedByUserId: 'local-board' });
      expect(res.body.decidedAt).toEqual(expect.any(String));
      expect(await agentStatus(agent.id)).toBe('idle');
      await createAgentKey(t, agent.id);
      const acts = await t.dataSource.query(`SELECT action, details FROM activity_log WHERE entity_id = $1`, [approval.id]);
      expect(acts).toEqual([{ action: 'approval.approved', details: { type: 'hire_agent', agentId: agent.id, decisionNote: 'welcome' } }]);
    });

    it('answers 409 for an already decided approval', async () => {
      const co = await approvalCompany();
      const { approval } = await createPendingHire(t, co.id);
      await t.http.post(`/api/approvals/${approval.id}/reject`).send({}).expect(200);
      const res = await t.http.post(`/api/approvals/${approval.id}/approve`).send({}).expect(409);
      expect(res.body).toMatchObject({ code: 'approval_already_decided', status: 'rejected' });
    });

    it('decides once under concurrent approve and reject', async () => {
      const co = await approvalCompany();
      const { agent, approval } = await createPendingHire(t, co.id);
      const [a, r] = await Promise.all([
        t.http.post(`/api/approvals/${approval.id}/approve`).send({}),
        t.http.post(`/api/approvals/${approval.id}/reject`).send({}),
      ]);
      expect([a.status, r.status].sort()).toEqual([200, 409]);
      expect(await agentStatus(agent.id)).toBe(a.status === 200 ? 'idle' : 'terminated');
    });

    it('is board-only', async () => {
      const co = await approvalCompany();
      const ceo = await t.http
        .post(`/api/companies/${co.id}/agents`)
        .send(agentBody({ role: 'ceo' }))
        .expect(201);
      const { token } = await createAgentKey(t, ceo.body.id);
      const { approval } = await createPendingHire(t, co.id);
      await t.http.post(`/api/approvals/${approval.id}/approve`).set(bearer(token)).send({}).expect(403);
      await t.http.post(`/api/approvals/${randomUUID()}/approve`).send({}).expect(404);
      await t.http.post(`/api/approvals/${approval.id}/approve`).send({ decisionNote: 5 }).expect(400);
    });
  });

  describe('POST /api/approvals/:approvalId/reject', () => {
    it('terminates the hired agent and writes activity', async () => {
      const co = await approvalCompany();
      const { agent, approval } = await createPendingHire(t, co.id);
      await sqlAgentKey(t, co.id, agent.id);
      const res = await t.http.post(`/api/approvals/${approval.id}/reject`).send({ decisionNote: 'no' }).expect(200);
      expect(res.body.status).toBe('rejected');
      expect(await agentStatus(agent.id)).toBe('terminated');
      // the agents module's part of the hire decision (HiredAgents port) revokes the agent's keys
      const keys = await t.dataSource.query(`SELECT revoked_at FROM agent_api_keys WHERE agent_id = $1`, [agent.id]);
      expect(keys).toHaveLength(1);
      expect(keys[0].revoked_at).not.toBeNull();
      const roster = (await t.http.get(`/api/companies/${co.id}/agents`)).body;
      expect(roster.some((a: { id: string }) => a.id === agent.id)).toBe(false);
      const acts = await t.dataSource.query(`SELECT action FROM activity_log WHERE entity_id = $1`, [approval.id]);
      expect(acts).toEqual([{ action: 'approval.rejected' }]);
    });

    it('hires by an agent are decided by the board', async () => {
      const co = await approvalCompany();
      const ceo = await t.http
        .post(`/api/companies/${co.id}/agents`)
        .send(agentBody({ role: 'ceo' }))
        .expect(201);
      const { token } = await createAgentKey(t, ceo.body.id);
      const hire = await t.http.post(`/api/companies/${co.id}/agent-hires`).set(bearer(token)).send(agentBody()).expect(201);
      expect(hire.body.approval).toMatchObject({ requestedByActorType: 'agent', requestedByActorId: ceo.body.id });
      await t.http.post(`/api/approvals/${hire.body.approval.id}/reject`).set(bearer(token)).send({}).expect(403);
      await t.http.post(`/api/approvals/${hire.body.approval.id}/reject`).send({}).expect(200);
    });
  });
});
