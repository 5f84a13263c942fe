import { randomUUID } from 'node:crypto';
import { agentBody, createAgent, createAgentKey, createRestrictedAgentWithKey } from '../support/agents';
import { bearer, createCompany } from '../support/factories';
import { activityOf } from '../support/projects';
import { createTestApp, TestApp } from '../support/test-app';
import { tmpPath } from '../support/tmp';

type Rec = Record<string, any>;
const DISABLED = 'Built-in agents are not enabled.';

describe('built-in agents', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: { SERVICE_ENABLE_BUILT_IN_AGENTS: 'true' } });
  });
  afterAll(() => t.close());

  const base = (companyId: string) => `/api/companies/${companyId}/built-in-agents`;
  const status = async (companyId: string, key: string): Promise<Rec> =>
    (await t.http.get(`${base(companyId)}/${key}/status`).expect(200)).body;
  const agentOf = async (id: string): Promise<Rec> => (await t.http.get(`/api/agents/${id}`).expect(200)).body;
  const grantKeys = (agent: Rec): string[] => agent.access.grants.map((g: Rec) => g.permissionKey).sort();

  async function provision(companyId: string, key: string, body: Rec = {}, expected = 200): Promise<Rec> {
    const res = await t.http.post(`${base(companyId)}/${key}/provision`).send(body);
    if (res.status !== expected) throw new Error(`provision ${key}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  }

  describe('feature flag', () => {
    let off: TestApp;
    beforeAll(async () => {
      off = await createTestApp();
    });
    afterAll(() => off.close());

    it('off by default: every route answers 404 "Built-in agents are not enabled."; the instance setting turns it on', async () => {
      const c = await createCompany(off);
      const b = base(c.id);
      const calls: Array<['get' | 'post', string]> = [
        ['get', b],
        ['get', `${b}/briefs/status`],
        ['post', `${b}/briefs/provision`],
        ['post', `${b}/briefs/reconcile`],
        ['post', `${b}/briefs/reset`],
        ['post', `${b}/reflection-coach/routines/recent-agent-reflection/enable`],
        ['post', `${b}/reflection-coach/routines/recent-agent-reflection/disable`],
        ['post', `${b}/reflection-coach/routines/recent-agent-reflection/run`],
        ['get', `${b}/nope/status`],
      ];
      for (const [method, path] of calls) {
        const res = await off.http[method](path).send({});
        expect([path, res.status, res.body.error]).toEqual([path, 404, DISABLED]);
      }
      expect((await off.http.get('/api/instance/settings/experimental').expect(200)).body.builtInAgents).toBe(false);
      await off.http.patch('/api/instance/settings/experimental').send({ builtInAgents: true }).expect(200);
      expect((await off.http.get(b).expect(200)).body).toHaveLength(3);
      await off.http.patch('/api/instance/settings/experimental').send({ builtInAgents: false }).expect(200);
      expect((await off.http.get(b).expect(404)).body.error).toBe(DISABLED);
    });

    it('SERVICE_ENABLE_BUILT_IN_AGENTS=true is the default of the setting (a stored value wins)', async () => {
      expect((await t.http.get('/api/instance/settings/experimental').expect(200)).body.builtInAgents).toBe(true);
    });
  });

  describe('GET /api/companies/:companyId/built-in-agents', () => {
    it('lists the registry: three definitions, default roles, allowed adapter types (first = default), budget 0, state not_provisioned', async () => {
      const c = await createCompany(t);
      const list = (await t.http.get(base(c.id)).expect(200)).body;
      expect(
        list.map((e: Rec) => [e.key, e.displayName, e.defaultRole, e.defaultAdapterType, e.budgetMonthlyCents, e.state, e.agent]),
      ).toEqual([
        ['briefs', 'Briefs Agent', 'general', 'runtime_b_local', 0, 'not_provisioned', null],
        ['learning', 'Learning Agent', 'general', 'runtime_b_local', 0, 'not_provisioned', null],
        ['reflection-coach', 'Reflection Coach', 'general', 'runtime_a_local', 0, 'not_provisioned', null],
      ]);
      expect(list[2].allowedAdapterTypes).toEqual(['runtime_a_local', 'runtime_b_local', 'runtime_c_local', 'runtime_d_local', 'process']);
      expect(list[0].allowedAdapterTypes).toEqual(['runtime_b_local', 'runtime_a_local', 'runtime_c_local', 'runtime_d_local', 'process']);
      expect(list[2].bundle).toMatchObject({
        skills: ['reflection-coach'],
        grants: ['agents:suggest-changes', 'skills:suggest-changes'],
        startsPaused: true,
      });
      expect(list[2].bundle.routines.map((r: Rec) => r.key)).toEqual(['recent-agent-reflection']);
      expect(await status(c.id, 'briefs')).toMatchObject({ key: 'briefs', state: 'not_provisioned' });
      await t.http.get(`${base(c.id)}/nope/status`).expect(404);
    });

    it('tenancy: another company 403, unknown company 404', async () => {
      const [a, b] = [await createCompany(t), await createCompany(t)];
      const worker = await createAgent(t, a.id);
      const { token } = await createAgentKey(t, worker.id);
      await t.http.get(base(b.id)).set(bearer(token)).expect(403);
      await t.http.get(base(a.id)).set(bearer(token)).expect(200);
      await t.http.get(base(randomUUID())).expect(404);
    });
  });

  describe('POST .../provision', () => {
    it('creates a normal agent row with the marker, instructions and a disabled routine; state ready; config redacted in the list', async () => {
      const c = await createCompany(t);
      const res = await provision(c.id, 'briefs');
      expect(res).toMatchObject({ key: 'briefs', state: 'ready', approval: null, setup: { complete: true, missing: [] }, warnings: [] });
      expect(res.agent).toMatchObject({
        id: res.agentId,
        name: 'Briefs Agent',
        role: 'general',
        adapterType: 'runtime_b_local',
        adapterConfig: {},
        configRedacted: true,
        budgetMonthlyCents: 0,
      });
      const agent = await agentOf(res.agentId);
      expect(agent).toMatchObject({
        status: 'idle',
        adapterType: 'runtime_b_local',
        metadata: { serviceBuiltInAgent: { key: 'briefs', featureKeys: ['daily_brief'], instructionsVersion: 1 } },
      });
      expect(agent.adapterConfig.instructions).toContain('What a daily brief contains');
      expect(agent.adapterConfig.model).toBe('runtime-b-default');
      // a normal agent: in the roster
      expect((await t.http.get(`/api/companies/${c.id}/agents`).expect(200)).body.map((a: Rec) => a.id)).toContain(res.agentId);
      expect(res.routines).toEqual([{ key: 'daily-brief', routineId: expect.any(String), status: 'paused', nextRunAt: null }]);
      const routine = (await t.http.get(`/api/routines/${res.routines[0].routineId}`).expect(200)).body;
      expect(routine).toMatchObject({
        assigneeAgentId: res.agentId,
        status: 'paused',
        routineKey: 'daily-brief',
        managedBy: 'built_in_agent:briefs',
      });
      // a built-in agent's routine is not deleted through the generic route
      expect((await t.http.delete(`/api/routines/${routine.id}`).expect(409)).body.code).toBe('routine_managed');
      const listed = (await t.http.get(base(c.id)).expect(200)).body.find((e: Rec) => e.key === 'briefs');
      expect(listed.agent.adapterConfig).toEqual({});
      expect(listed.agent.runtimeConfig).toEqual({});
      expect(JSON.stringify(listed)).not.toContain('What a daily brief contains');
      expect((await activityOf(t, c.id, 'built_in_agent.provisioned'))[0]).toMatchObject({
        entityType: 'agent',
        entityId: res.agentId,
        details: { key: 'briefs', state: 'ready' },
      });
      // provisioning again is idempotent (one agent)
      const again = await provision(c.id, 'briefs');
      expect(again.agentId).toBe(res.agentId);
      const marked = await t.dataSource.query(
        `SELECT count(*)::int AS n FROM agents WHERE company_id = $1 AND metadata ? 'serviceBuiltInAgent'`,
        [c.id],
      );
      expect(marked[0].n).toBe(1);
    });

    it('validates: adapter type must be allowed for the key (422); unknown key 404; bad body 400', async () => {
      const c = await createCompany(t);
      const res = await t.http
        .post(`${base(c.id)}/briefs/provision`)
        .send({ adapterType: 'http' })
        .expect(422);
      expect(res.body).toMatchObject({ code: 'adapter_type_not_allowed', field: 'adapterType' });
      await t.http
        .post(`${base(c.id)}/briefs/provision`)
        .send({ adapterType: 'runtime_e_local' })
        .expect(422);
      await t.http
        .post(`${base(c.id)}/unknown/provision`)
        .send({})
        .expect(404);
      await t.http
        .post(`${base(c.id)}/briefs/provision`)
        .send({ budgetMonthlyCents: -1 })
        .expect(400);
      await t.http
        .post(`${base(c.id)}/briefs/provision`)
        .send({ adapterConfig: 'x' })
        .expect(400);
      await t.http
        .post(`${base(c.id)}/briefs/provision`)
        .send({ adapterType: 'process', adapterConfig: { command: 5 } })
        .expect(422);
      expect((await status(c.id, 'briefs')).state).toBe('not_provisioned');
    });

    it('needs agents:create: an agent without it gets 403', async () => {
      const c = await createCompany(t);
      const restricted = await createRestrictedAgentWithKey(t, c.id);
      await t.http
        .post(`${base(c.id)}/briefs/provision`)
        .set(bearer(restricted.token))
        .send({})
        .expect(403);
      await t.http
        .post(`${base(c.id)}/briefs/reconcile`)
        .set(bearer(restricted.token))
        .expect(403);
      await t.http
        .post(`${base(c.id)}/briefs/reset`)
        .set(bearer(restricted.token))
        .send({})
        .expect(403);
      const ceo = await createAgent(t, c.id, { role: 'ceo' });
      const { token } = await createAgentKey(t, ceo.id);
      expect(
        (
          await t.http
            .post(`${base(c.id)}/briefs/provision`)
            .set(bearer(token))
            .send({})
            .expect(200)
        ).body.state,
      ).toBe('ready');
    });

    it('needs_setup while the adapter configuration is incomplete (412 for work that needs it); provisioning again completes it', async () => {
      const c = await createCompany(t);
      const res = await provision(c.id, 'learning', { adapterType: 'process' });
      expect(res).toMatchObject({ state: 'needs_setup', setup: { complete: false, missing: ['adapterConfig.command'] } });
      const run = await t.http.post(`${base(c.id)}/learning/routines/lessons-from-finished-issues/run`).expect(412);
      expect(run.body).toMatchObject({ code: 'built_in_agent_not_configured', key: 'learning', state: 'needs_setup' });
      const runtimeD = await provision(c.id, 'briefs', { adapterType: 'runtime_d_local' });
      expect(runtimeD.setup.missing).toEqual(['adapterConfig.model']);
      const done = await provision(c.id, 'learning', { adapterConfig: { command: 'true' } });
      expect(done).toMatchObject({ state: 'ready', agentId: res.agentId });
      const agent = await agentOf(res.agentId);
      expect(agent.adapterConfig).toMatchObject({ command: 'true' });
      expect(agent.adapterConfig.instructions).toContain('lessons');
      // a not provisioned agent's routines are not configured either
      expect((await t.http.post(`${base(c.id)}/reflection-coach/routines/recent-agent-reflection/run`).expect(412)).body.state).toBe(
        'not_provisioned',
      );
      await t.http.post(`${base(c.id)}/reflection-coach/reconcile`).expect(412);
    });

    it('202 with a pending approval when the company requires board approval; pending_approval until approved', async () => {
      const c = await createCompany(t);
      await t.http.patch(`/api/companies/${c.id}`).send({ requireBoardApprovalForNewAgents: true }).expect(200);
      const res = await provision(c.id, 'briefs', {}, 202);
      expect(res).toMatchObject({ state: 'pending_approval', approval: { type: 'hire_agent', status: 'pending', agentId: res.agentId } });
      expect(res.approvalId).toBe(res.approval.id);
      expect((await agentOf(res.agentId)).status).toBe('pending_approval');
      await t.http.post(`/api/approvals/${res.approvalId}/approve`).send({}).expect(200);
      expect(await status(c.id, 'briefs')).toMatchObject({ state: 'ready', approvalId: null });
      // the coach under approval: paused once approved (it starts paused)
      const coach = await provision(c.id, 'reflection-coach', {}, 202);
      expect(coach.state).toBe('pending_approval');
      await t.http.post(`/api/approvals/${coach.approvalId}/approve`).send({}).expect(200);
      expect((await status(c.id, 'reflection-coach')).state).toBe('paused');
    });
  });

  describe('the reflection coach bundle', () => {
    it('starts paused with its instructions, review-only grants, the disabled weekly routine and the catalog skill', async () => {
      const c = await createCompany(t);
      const res = await provision(c.id, 'reflection-coach');
      expect(res).toMatchObject({ state: 'paused', warnings: [{ code: 'built_in_agent_paused' }] });
      // the skills module installs the catalog skill and attaches it to the coach
      expect(res.skills).toEqual([{ slug: 'reflection-coach', status: 'created', skillId: expect.any(String) }]);
      const skill = (await t.http.get(`/api/companies/${c.id}/skills/${res.skills[0].skillId}`).expect(200)).body;
      expect(skill).toMatchObject({
        key: 'service/catalog/reflection-coach',
        sourceType: 'catalog',
        usedByAgents: [expect.objectContaining({ id: res.agentId })],
      });
      const agent = await agentOf(res.agentId);
      expect(agent).toMatchObject({
        status: 'paused',
        adapterType: 'runtime_a_local',
        metadata: { serviceBuiltInAgent: { key: 'reflection-coach' } },
      });
      expect(agent.adapterConfig.instructions).toContain('You never change anything yourself');
      expect(grantKeys(agent)).toEqual(['agents:suggest-changes', 'skills:suggest-changes']);
      expect(res.routines).toEqual([{ key: 'recent-agent-reflection', routineId: expect.any(String), status: 'paused', nextRunAt: null }]);
    });

    it('routines enable (activates schedule, resumes the agent), disable, run (202); enable is for board callers', async () => {
      const c = await createCompany(t);
      const res = await provision(c.id, 'reflection-coach');
      const r = `${base(c.id)}/reflection-coach/routines/recent-agent-reflection`;
      // run while paused: the issue is created, the paused agent is not woken: a warning says so
      const paused = (await t.http.post(`${r}/run`).expect(202)).body;
      expect(paused.warnings).toEqual([expect.objectContaining({ code: 'built_in_agent_paused' })]);
      expect(paused.run).toMatchObject({ status: 'issue_created', source: 'manual' });
      await t.http.patch(`/api/issues/${paused.run.linkedIssueId}`).send({ status: 'done' }).expect(200);
      const enabled = (await t.http.post(`${r}/enable`).expect(200)).body;
      expect(enabled.state).toBe('ready');
      expect(enabled.routines[0].status).toBe('active');
      expect(new Date(enabled.routines[0].nextRunAt).getUTCDay()).toBe(1);
      expect((await agentOf(res.agentId)).status).toBe('idle');
      const run = (await t.http.post(`${r}/run`).expect(202)).body;
      expect(run).toMatchObject({ warnings: [], run: { status: 'issue_created' } });
      const issue = (await t.http.get(`/api/issues/${run.run.linkedIssueId}`).expect(200)).body;
      expect(issue).toMatchObject({ assigneeAgentId: res.agentId, originKind: 'routine_execution', title: 'Recent agent reflection' });
      const disabled = (await t.http.post(`${r}/disable`).expect(200)).body;
      expect(disabled.routines[0]).toMatchObject({ status: 'paused', nextRunAt: null });
      await t.http.post(`${base(c.id)}/reflection-coach/routines/nope/enable`).expect(404);
      const worker = await createAgent(t, c.id, { role: 'ceo' });
      const { token } = await createAgentKey(t, worker.id);
      await t.http.post(`${r}/enable`).set(bearer(token)).expect(403);
      const actions = (await activityOf(t, c.id)).map((a) => a.action);
      expect(actions).toEqual(
        expect.arrayContaining([
          'built_in_agent.routine_enabled',
          'built_in_agent.routine_disabled',
          'built_in_agent.routine_run_requested',
        ]),
      );
    });

    it('reconcile is idempotent, restores removed instructions and strips direct keys; keeps adapter setup', async () => {
      const c = await createCompany(t);
      const res = await provision(c.id, 'reflection-coach', { adapterConfig: { model: 'custom-model' } });
      await t.http
        .patch(`/api/agents/${res.agentId}`)
        .send({ adapterConfig: { model: 'custom-model', cwd: tmpPath() }, replaceAdapterConfig: true })
        .expect(200);
      expect((await agentOf(res.agentId)).adapterConfig.instructions).toBeUndefined();
      // direct keys granted behind the feature's back (e.g. an older grant): reconcile removes them
      for (const key of ['agents:configure', 'skills:create', 'tasks:assign']) {
        await t.dataSource.query(
          `INSERT INTO principal_permission_grants (company_id, principal_type, principal_id, permission_key, scope, granted_by) VALUES ($1, 'agent', $2, $3, NULL, 'test')`,
          [c.id, res.agentId, key],
        );
      }
      await t.http
        .post(`/api/agents/${res.agentId}/config-suggestions`)
        .set(bearer((await createAgentKey(t, res.agentId)).token))
        .send({ changes: { title: 'x' }, reason: 'r' })
        .expect(201);
      const first = (await t.http.post(`${base(c.id)}/reflection-coach/reconcile`).expect(200)).body;
      const second = (await t.http.post(`${base(c.id)}/reflection-coach/reconcile`).expect(200)).body;
      expect(second).toEqual(first);
      const agent = await agentOf(res.agentId);
      expect(agent.adapterConfig).toMatchObject({ model: 'custom-model', cwd: tmpPath() });
      expect(agent.adapterConfig.instructions).toContain('Reflection Coach');
      expect(grantKeys(agent)).toEqual(['agents:suggest-changes', 'skills:suggest-changes', 'tasks:assign']);
      expect(first.routines).toHaveLength(1);
      expect((await t.http.get(`/api/companies/${c.id}/routines`).expect(200)).body).toHaveLength(1);
    });

    it('reset restores registry defaults of the named resources (all when omitted) and keeps adapter setup', async () => {
      const c = await createCompany(t);
      const res = await provision(c.id, 'reflection-coach', { adapterConfig: { model: 'm1' } });
      await t.http
        .patch(`/api/agents/${res.agentId}`)
        .send({ role: 'engineer', title: 'Changed', adapterConfig: { instructions: 'custom' } })
        .expect(200);
      await t.http.post(`${base(c.id)}/reflection-coach/routines/recent-agent-reflection/enable`).expect(200);
      const onlyAgent = (
        await t.http
          .post(`${base(c.id)}/reflection-coach/reset`)
          .send({ resources: ['agent'] })
          .expect(200)
      ).body;
      expect(onlyAgent.reset).toEqual(['agent']);
      let agent = await agentOf(res.agentId);
      expect(agent).toMatchObject({ role: 'general', title: 'Reflection coach' });
      expect(agent.adapterConfig.instructions).toBe('custom');
      expect(onlyAgent.routines[0].status).toBe('active');
      const all = (
        await t.http
          .post(`${base(c.id)}/reflection-coach/reset`)
          .send({})
          .expect(200)
      ).body;
      expect(all.reset).toEqual(['agent', 'instructions', 'skill', 'routine']);
      agent = await agentOf(res.agentId);
      expect(agent.adapterConfig.instructions).toContain('You never change anything yourself');
      expect(agent.adapterConfig.model).toBe('m1');
      expect(all.routines[0]).toMatchObject({ status: 'paused', nextRunAt: null });
      await t.http
        .post(`${base(c.id)}/reflection-coach/reset`)
        .send({ resources: ['everything'] })
        .expect(400);
      await t.http
        .post(`${base(c.id)}/reflection-coach/reset`)
        .send({ resources: [] })
        .expect(400);
    });
  });

  describe('the marker metadata.serviceBuiltInAgent', () => {
    it('no other route writes or removes it: create and hire refuse it, PATCH keeps it and refuses changing it', async () => {
      const c = await createCompany(t);
      const res = await provision(c.id, 'briefs');
      const marker = (await agentOf(res.agentId)).metadata.serviceBuiltInAgent;
      const fake = { serviceBuiltInAgent: { key: 'learning', featureKeys: [] } };
      expect(
        (
          await t.http
            .post(`/api/companies/${c.id}/agents`)
            .send(agentBody({ metadata: fake }))
            .expect(422)
        ).body.code,
      ).toBe('reserved_metadata_key');
      await t.http
        .post(`/api/companies/${c.id}/agent-hires`)
        .send(agentBody({ metadata: fake }))
        .expect(422);
      await t.http
        .patch(`/api/agents/${res.agentId}`)
        .send({ metadata: { note: 'x' } })
        .expect(200);
      expect((await agentOf(res.agentId)).metadata).toEqual({ note: 'x', serviceBuiltInAgent: marker });
      await t.http
        .patch(`/api/agents/${res.agentId}`)
        .send({ metadata: { serviceBuiltInAgent: null } })
        .expect(422);
      await t.http
        .patch(`/api/agents/${res.agentId}`)
        .send({ metadata: { serviceBuiltInAgent: { key: 'learning' } } })
        .expect(422);
      await t.http
        .patch(`/api/agents/${res.agentId}`)
        .send({ metadata: { serviceBuiltInAgent: marker, note: 'y' } })
        .expect(200);
      const other = await createAgent(t, c.id);
      await t.http.patch(`/api/agents/${other.id}`).send({ metadata: fake }).expect(422);
      expect((await agentOf(res.agentId)).metadata.serviceBuiltInAgent).toEqual(marker);
      expect((await agentOf(other.id)).metadata.serviceBuiltInAgent).toBeUndefined();
      expect((await status(c.id, 'learning')).state).toBe('not_provisioned');
    });

    it('a terminated built-in agent is no longer provisioned; provisioning again creates a new one and takes over its routine', async () => {
      const c = await createCompany(t);
      const res = await provision(c.id, 'briefs');
      await t.http.post(`/api/agents/${res.agentId}/terminate`).expect(200);
      expect((await status(c.id, 'briefs')).state).toBe('not_provisioned');
      const again = await provision(c.id, 'briefs');
      expect(again.agentId).not.toBe(res.agentId);
      expect(again.routines[0].routineId).toBe(res.routines[0].routineId);
      expect((await t.http.get(`/api/routines/${again.routines[0].routineId}`).expect(200)).body.assigneeAgentId).toBe(again.agentId);
    });

    it('paused built-in agent: state paused with the built_in_agent_paused warning', async () => {
      const c = await createCompany(t);
      const res = await provision(c.id, 'briefs');
      await t.http.post(`/api/agents/${res.agentId}/pause`).expect(200);
      expect(await status(c.id, 'briefs')).toMatchObject({ state: 'paused', warnings: [{ code: 'built_in_agent_paused' }] });
    });
  });

  describe('suggested changes through approvals', () => {
    async function coachWithKey(companyId: string) {
      const res = await provision(companyId, 'reflection-coach');
      const { token } = await createAgentKey(t, res.agentId);
      return { coachId: res.agentId as string, auth: bearer(token) };
    }

    it('the coach proposes an agent configuration change; the board approves and it is applied', async () => {
      const c = await createCompany(t);
      const { auth } = await coachWithKey(c.id);
      const worker = await createAgent(t, c.id, { adapterType: 'runtime_a_local', adapterConfig: { model: 'm' } });
      // review-only: a direct change is refused
      await t.http.patch(`/api/agents/${worker.id}`).set(auth).send({ capabilities: 'x' }).expect(403);
      const approval = (
        await t.http
          .post(`/api/agents/${worker.id}/config-suggestions`)
          .set(auth)
          .send({
            changes: { capabilities: 'Checks the build before closing issues', instructions: 'Always run the tests.' },
            reason: 'Runs r1 and r2 closed issues with failing builds',
          })
          .expect(201)
      ).body;
      expect(approval).toMatchObject({ type: 'agent_config_change', status: 'pending', agentId: worker.id, requestedByActorType: 'agent' });
      expect(approval.payload).toMatchObject({ reason: expect.stringContaining('r1'), changes: { instructions: 'Always run the tests.' } });
      expect((await agentOf(worker.id)).capabilities).not.toBe('Checks the build before closing issues');
      expect(
        (await t.http.get(`/api/companies/${c.id}/approvals?type=agent_config_change&status=pending`).expect(200)).body.map(
          (a: Rec) => a.id,
        ),
      ).toEqual([approval.id]);
      // only the board decides
      await t.http.post(`/api/approvals/${approval.id}/approve`).set(auth).send({}).expect(403);
      expect((await t.http.post(`/api/approvals/${approval.id}/approve`).send({ decisionNote: 'ok' }).expect(200)).body.status).toBe(
        'approved',
      );
      const changed = await agentOf(worker.id);
      expect(changed.capabilities).toBe('Checks the build before closing issues');
      expect(changed.adapterConfig).toMatchObject({ model: 'm', instructions: 'Always run the tests.' });
      await t.http.post(`/api/approvals/${approval.id}/approve`).send({}).expect(409);
      expect((await activityOf(t, c.id, 'agent.change_suggested'))[0]).toMatchObject({
        entityId: worker.id,
        actorType: 'agent',
        details: { approvalId: approval.id },
      });
    });

    it('a rejected suggestion is discarded; an approval that can no longer apply stays pending', async () => {
      const c = await createCompany(t);
      const { auth } = await coachWithKey(c.id);
      const worker = await createAgent(t, c.id);
      const before = await agentOf(worker.id);
      const a = (
        await t.http
          .post(`/api/agents/${worker.id}/config-suggestions`)
          .set(auth)
          .send({ changes: { title: 'New title' }, reason: 'r' })
          .expect(201)
      ).body;
      expect((await t.http.post(`/api/approvals/${a.id}/reject`).send({}).expect(200)).body.status).toBe('rejected');
      expect((await agentOf(worker.id)).title).toBe(before.title);
      // a rename that now collides: the approval fails (409) and nothing is applied
      const b = (
        await t.http
          .post(`/api/agents/${worker.id}/config-suggestions`)
          .set(auth)
          .send({ changes: { name: 'Taken Name' }, reason: 'r' })
          .expect(201)
      ).body;
      await createAgent(t, c.id, { name: 'Taken Name' });
      await t.http.post(`/api/approvals/${b.id}/approve`).send({}).expect(409);
      expect((await t.http.get(`/api/approvals/${b.id}`).expect(200)).body.status).toBe('pending');
      expect((await agentOf(worker.id)).name).toBe(before.name);
    });

    it('the coach proposes a skill change; approved it is written to the skill, rejected it is discarded', async () => {
      const c = await createCompany(t);
      const { auth } = await coachWithKey(c.id);
      const skills = (await t.http.get(`/api/companies/${c.id}/skills`).expect(200)).body;
      const coachSkill = skills.find((x: Rec) => x.slug === 'reflection-coach');
      const file = (path: string) => t.http.get(`/api/companies/${c.id}/skills/${coachSkill.id}/files?path=${encodeURIComponent(path)}`);
      const suggest = (content: string) =>
        t.http
          .post(`/api/companies/${c.id}/skill-suggestions`)
          .set(auth)
          .send({
            skill: 'reflection-coach',
            files: [{ path: 'references/checklist.md', content }],
            reason: 'Three reviews missed cost outliers',
          })
          .expect(201);
      const rejected = (await suggest('# Not this one\n')).body;
      expect(rejected).toMatchObject({
        type: 'skill_change',
        status: 'pending',
        agentId: null,
        payload: { skillId: coachSkill.id, reason: expect.any(String) },
      });
      await t.http.post(`/api/approvals/${rejected.id}/reject`).send({}).expect(200);
      await file('references/checklist.md').expect(404);
      const approval = (await suggest('# Checklist\n\n- Compare each agent cost with its peers.\n')).body;
      await file('references/checklist.md').expect(404);
      await t.http.post(`/api/approvals/${approval.id}/approve`).send({}).expect(200);
      expect((await file('references/checklist.md').expect(200)).body.content).toContain('Compare each agent cost');
      expect((await activityOf(t, c.id, 'skill.change_suggested')).map((a) => a.entityId)).toEqual([coachSkill.id, coachSkill.id]);
      // paths must stay inside the skill; the skill must exist
      await t.http
        .post(`/api/companies/${c.id}/skill-suggestions`)
        .set(auth)
        .send({ skill: 'reflection-coach', files: [{ path: '../x.md', content: 'x' }], reason: 'r' })
        .expect(422);
      await t.http
        .post(`/api/companies/${c.id}/skill-suggestions`)
        .set(auth)
        .send({ skill: 'no-such-skill', files: [{ path: 'SKILL.md', content: 'x' }], reason: 'r' })
        .expect(422);
    });

    it('needs a suggest-changes grant (403 without); invalid changes 400/422', async () => {
      const c = await createCompany(t);
      const { auth } = await coachWithKey(c.id);
      const worker = await createAgent(t, c.id);
      const restricted = await createRestrictedAgentWithKey(t, c.id);
      await t.http
        .post(`/api/agents/${worker.id}/config-suggestions`)
        .set(bearer(restricted.token))
        .send({ changes: { title: 'x' }, reason: 'r' })
        .expect(403);
      await t.http.post(`/api/agents/${worker.id}/config-suggestions`).set(auth).send({ changes: {}, reason: 'r' }).expect(422);
      await t.http
        .post(`/api/agents/${worker.id}/config-suggestions`)
        .set(auth)
        .send({ changes: { title: 'x' } })
        .expect(400);
      await t.http
        .post(`/api/agents/${worker.id}/config-suggestions`)
        .set(auth)
        .send({ changes: { name: 5 }, reason: 'r' })
        .expect(400);
      await t.http
        .post(`/api/agents/${worker.id}/config-suggestions`)
        .set(auth)
        .send({ changes: { adapterConfig: { command: 5 } }, reason: 'r' })
        .expect(422);
      await t.http
        .post(`/api/agents/${worker.id}/config-suggestions`)
        .set(auth)
        .send({ changes: { runtimeConfig: { heartbeat: { intervalSec: -1 } } }, reason: 'r' })
        .expect(422);
      await t.http
        .post(`/api/agents/${randomUUID()}/config-suggestions`)
        .set(auth)
        .send({ changes: { title: 'x' }, reason: 'r' })
        .expect(404);
      const other = await createCompany(t);
      const foreign = await createAgent(t, other.id);
      await t.http
        .post(`/api/agents/${foreign.id}/config-suggestions`)
        .set(auth)
        .send({ changes: { title: 'x' }, reason: 'r' })
        .expect(404);
      const skill = { skill: 'reflection-coach', files: [{ path: 'SKILL.md', content: '# x' }], reason: 'r' };
      await t.http.post(`/api/companies/${c.id}/skill-suggestions`).set(bearer(restricted.token)).send(skill).expect(403);
      await t.http
        .post(`/api/companies/${c.id}/skill-suggestions`)
        .set(auth)
        .send({ ...skill, files: [] })
        .expect(400);
    });
  });
});
