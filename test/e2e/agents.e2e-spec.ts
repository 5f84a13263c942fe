import { randomUUID } from 'node:crypto';
import { AdapterRegistry } from '../../src/modules/adapters/adapter-registry.service';
import { agentBody, createAgent, createAgentKey, createAgentWithKey, createRestrictedAgentWithKey } from '../support/agents';
import { bearer, createCompany, uniq } from '../support/factories';
import { createTestApp, TestApp } from '../support/test-app';

describe('agents', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  const countAgents = async (companyId: string) =>
    Number((await t.dataSource.query(`SELECT count(*)::int AS n FROM agents WHERE company_id = $1`, [companyId]))[0].n);

  describe('POST /api/companies/:companyId/agents', () => {
    it('creates an idle agent with the spec fields and heartbeat disabled by default', async () => {
      const co = await createCompany(t);
      const res = await t.http
        .post(`/api/companies/${co.id}/agents`)
        .send(
          agentBody({
            name: 'Build Bot',
            title: 'Builder',
            capabilities: 'builds',
            runtimeConfig: { heartbeat: { intervalSec: 60 } },
            metadata: { team: 'x' },
          }),
        )
        .expect(201);
      expect(res.body).toMatchObject({
        companyId: co.id,
        name: 'Build Bot',
        urlKey: 'build-bot',
        role: 'general',
        title: 'Builder',
        capabilities: 'builds',
        reportsTo: null,
        adapterType: 'process',
        adapterConfig: { command: 'true' },
        runtimeConfig: { heartbeat: { enabled: false, intervalSec: 60 } },
        budgetMonthlyCents: 0,
        spentMonthlyCents: 0,
        status: 'idle',
        permissions: {},
        metadata: { team: 'x' },
        configRedacted: false,
      });
      expect(new Date(res.body.createdAt).toISOString()).toBe(res.body.createdAt);
      const activity = await t.dataSource.query(`SELECT action FROM activity_log WHERE entity_id = $1`, [res.body.id]);
      expect(activity.map((a: { action: string }) => a.action)).toEqual(['agent.created']);
    });

    it('gives the CEO role canCreateAgents and other roles an empty permissions block', async () => {
      const co = await createCompany(t);
      expect((await createAgent(t, co.id, { role: 'ceo' })).permissions).toEqual({ canCreateAgents: true });
      expect((await createAgent(t, co.id, { role: 'engineer' })).permissions).toEqual({});
    });

    it('is board-only: an agent caller gets 403 and nothing is created', async () => {
      const co = await createCompany(t);
      const { token } = await createAgentWithKey(t, co.id, { role: 'ceo' });
      const before = await countAgents(co.id);
      await t.http.post(`/api/companies/${co.id}/agents`).set(bearer(token)).send(agentBody()).expect(403);
      expect(await countAgents(co.id)).toBe(before);
    });

    it('answers 404 for an unknown or malformed company id', async () => {
      await t.http.post(`/api/companies/${randomUUID()}/agents`).send(agentBody()).expect(404);
      await t.http.post(`/api/companies/not-a-uuid/agents`).send(agentBody()).expect(404);
    });

    it('rejects missing name and adapterType with 400', async () => {
      const co = await createCompany(t);
      await t.http
        .post(`/api/companies/${co.id}/agents`)
        .send({ adapterType: 'process', adapterConfig: { command: 'x' } })
        .expect(400);
      await t.http.post(`/api/companies/${co.id}/agents`).send({ name: 'x' }).expect(400);
      await t.http
        .post(`/api/companies/${co.id}/agents`)
        .send(agentBody({ budgetMonthlyCents: -1 }))
        .expect(400);
      await t.http
        .post(`/api/companies/${co.id}/agents`)
        .send(agentBody({ desiredSkills: 'a' }))
        .expect(400);
    });

    it('rejects an unknown adapter type with 422 naming adapterType', async () => {
      const co = await createCompany(t);
      const res = await t.http
        .post(`/api/companies/${co.id}/agents`)
        .send(agentBody({ adapterType: 'nope' }))
        .expect(422);
      expect(res.body).toMatchObject({ code: 'unknown_adapter_type', field: 'adapterType' });
      expect(await countAgents(co.id)).toBe(0);
    });

    it.each([
      [{ adapterType: 'process', adapterConfig: {} }, 'adapterConfig.command'],
      [{ adapterType: 'process', adapterConfig: { command: 'x', args: 'a b' } }, 'adapterConfig.args'],
      [{ adapterType: 'process', adapterConfig: { command: 'x', timeoutSec: 1.5 } }, 'adapterConfig.timeoutSec'],
      [{ adapterType: 'process', adapterConfig: { command: 'x', timeoutSec: -1 } }, 'adapterConfig.timeoutSec'],
      [{ adapterType: 'http', adapterConfig: { url: 'ftp://x' } }, 'adapterConfig.url'],
      [{ adapterType: 'process', adapterConfig: { command: 'x', env: { A: [1] } } }, 'adapterConfig.env.A'],
      [
        { adapterType: 'process', adapterConfig: { command: 'x', env: { A: { type: 'secret_ref', secretId: 'nope' } } } },
        'adapterConfig.env.A.secretId',
      ],
      [
        { adapterType: 'process', adapterConfig: { command: 'x', env: { A: { type: 'secret_ref', secretId: randomUUID(), version: 0 } } } },
        'adapterConfig.env.A.version',
      ],
      [{ runtimeConfig: { heartbeat: { intervalSec: 'soon' } } }, 'runtimeConfig.heartbeat.intervalSec'],
      [{ runtimeConfig: { heartbeat: { enabled: 'yes' } } }, 'runtimeConfig.heartbeat.enabled'],
      [{ metadata: { serviceBuiltInAgent: { key: 'briefs' } } }, 'metadata.serviceBuiltInAgent'],
    ])('rejects malformed input %j with 422 naming %s', async (extra, field) => {
      const co = await createCompany(t);
      const res = await t.http.post(`/api/companies/${co.id}/agents`).send(agentBody(extra)).expect(422);
      expect(res.body.field).toBe(field);
      expect(await countAgents(co.id)).toBe(0);
    });

    it('accepts timeoutSec 0 (no time limit, as the README says) for a process agent', async () => {
      const co = await createCompany(t);
      const res = await t.http
        .post(`/api/companies/${co.id}/agents`)
        .send(agentBody({ adapterType: 'process', adapterConfig: { command: 'x', timeoutSec: 0 } }))
        .expect(201);
      expect(res.body.adapterConfig.timeoutSec).toBe(0);
    });

    const makeSecret = async (companyId: string, rotations = 0): Promise<string> => {
      const id = (
        await t.http
          .post(`/api/companies/${companyId}/secrets`)
          .send({ name: `S-${randomUUID().slice(0, 8)}`, value: 'v1' })
          .expect(201)
      ).body.id;
      for (let i = 0; i < rotations; i++)
        await t.http
          .post(`/api/secrets/${id}/rotate`)
          .send({ value: `v${i + 2}` })
          .expect(200);
      return id;
    };

    it('accepts inline env values and secret references (version defaults to latest)', async () => {
      const co = await createCompany(t);
      const secretId = await makeSecret(co.id, 2);
      const a = await createAgent(t, co.id, {
        adapterConfig: {
          command: 'x',
          env: { PLAIN: 'v', REF: { type: 'secret_ref', secretId }, PINNED: { type: 'secret_ref', secretId, version: 3 } },
        },
      });
      expect(a.adapterConfig).toMatchObject({
        command: 'x',
        env: { PLAIN: 'v', REF: { type: 'secret_ref', secretId, version: 'latest' }, PINNED: { type: 'secret_ref', secretId, version: 3 } },
      });
    });

    it('keeps delivery and projectionClass of a secret reference and checks their shape', async () => {
      const co = await createCompany(t);
      const secretId = await makeSecret(co.id, 1);
      const ref = { type: 'secret_ref', secretId, version: 2, delivery: 'api', projectionClass: 'token' };
      const a = await createAgent(t, co.id, { adapterConfig: { command: 'x', env: { TOKEN: ref, N: 3 } } });
      expect((a.adapterConfig as { env: Record<string, unknown> }).env.TOKEN).toEqual(ref);
      const bad = await t.http
        .post(`/api/companies/${co.id}/agents`)
        .send(agentBody({ adapterConfig: { command: 'x', env: { T: { ...ref, delivery: 'mail' } } } }))
        .expect(422);
      expect(bad.body.field).toBe('adapterConfig.env.T.delivery');
    });

    it('refuses secret references of another company or unknown secrets on create and PATCH', async () => {
      const co = await createCompany(t);
      const other = await createCompany(t);
      const own = await makeSecret(co.id);
      const foreign = await makeSecret(other.id);
      const body = (secretId: string) => agentBody({ adapterConfig: { command: 'x', env: { K: { type: 'secret_ref', secretId } } } });
      const res = await t.http.post(`/api/companies/${co.id}/agents`).send(body(foreign)).expect(422);
      expect(res.body).toMatchObject({ code: 'invalid_secret_reference', field: 'adapterConfig.env.K.secretId' });
      const ok = await t.http.post(`/api/companies/${co.id}/agents`).send(body(own)).expect(201);
      await t.http
        .patch(`/api/agents/${ok.body.id}`)
        .send({ adapterConfig: { env: { K: { type: 'secret_ref', secretId: randomUUID() } } } })
        .expect(422);
      expect(await countAgents(co.id)).toBe(1);
    });

    it('fills create-time adapter defaults: a local runtime model and a gateway device key', async () => {
      const co = await createCompany(t);
      expect((await createAgent(t, co.id, { adapterType: 'runtime_a_local', adapterConfig: {} })).adapterConfig).toEqual({
        model: 'runtime-a-default',
      });
      expect((await createAgent(t, co.id, { adapterType: 'runtime_a_local', adapterConfig: { model: 'm' } })).adapterConfig).toEqual({
        model: 'm',
      });
      const gw = await createAgent(t, co.id, { adapterType: 'gateway_a', adapterConfig: { url: 'wss://gw.example' } });
      expect(String((gw.adapterConfig as Record<string, unknown>).devicePrivateKeyPem)).toContain('PRIVATE KEY');
      const off = await createAgent(t, co.id, {
        adapterType: 'gateway_a',
        adapterConfig: { url: 'wss://gw.example', disableDeviceAuth: true },
      });
      expect(off.adapterConfig).toEqual({ url: 'wss://gw.example', disableDeviceAuth: true });
    });

    it('accepts every built-in adapter type and externally registered ones', async () => {
      const co = await createCompany(t);
      for (const type of ['runtime_b_local', 'runtime_c_local', 'runtime_d_local', 'runtime_e_local', 'runtime_f_local', 'runtime_g']) {
        await t.http
          .post(`/api/companies/${co.id}/agents`)
          .send(agentBody({ adapterType: type, adapterConfig: {} }))
          .expect(201);
      }
      await t.http
        .post(`/api/companies/${co.id}/agents`)
        .send(agentBody({ adapterType: 'http', adapterConfig: { url: 'https://x.example/hook' } }))
        .expect(201);
      const registry = t.app.get(AdapterRegistry);
      await t.http
        .post(`/api/companies/${co.id}/agents`)
        .send(agentBody({ adapterType: 'ext_test' }))
        .expect(422);
      registry.register({
        type: 'ext_test',
        label: 'Ext',
        configSchema: { type: 'object', required: ['endpoint'], properties: { endpoint: { type: 'string' } } },
      });
      try {
        await t.http
          .post(`/api/companies/${co.id}/agents`)
          .send(agentBody({ adapterType: 'ext_test', adapterConfig: {} }))
          .expect(422);
        await t.http
          .post(`/api/companies/${co.id}/agents`)
          .send(agentBody({ adapterType: 'ext_test', adapterConfig: { endpoint: 'e' } }))
          .expect(201);
        expect(() => registry.register({ type: 'process', label: 'x', configSchema: { type: 'object', properties: {} } })).toThrow();
      } finally {
        registry.unregister('ext_test');
      }
    });

    it('creates a monthly agent budget policy when budgetMonthlyCents > 0', async () => {
      const co = await createCompany(t);
      const a = await createAgent(t, co.id, { budgetMonthlyCents: 4321 });
      const none = await createAgent(t, co.id);
      const rows = await t.dataSource.query(
        `SELECT scope_id, amount, window_kind FROM budget_policies WHERE company_id = $1 AND scope_type = 'agent'`,
        [co.id],
      );
      expect(rows).toEqual([{ scope_id: a.id, amount: 4321, window_kind: 'calendar_month_utc' }]);
      expect(rows.some((r: { scope_id: string }) => r.scope_id === none.id)).toBe(false);
    });

    it('persists desiredSkills under adapterConfig.serviceSkillSync.desiredSkills', async () => {
      const co = await createCompany(t);
      for (const slug of ['one', 'two']) await t.http.post(`/api/companies/${co.id}/skills`).send({ name: slug }).expect(201);
      // references (here unique slugs) are persisted as canonical keys
      const a = await createAgent(t, co.id, { desiredSkills: ['one', 'two', 'one'] });
      expect(a.adapterConfig).toEqual({
        command: 'true',
        serviceSkillSync: { desiredSkills: [`company/${co.id}/one`, `company/${co.id}/two`] },
      });
    });

    it('validates reportsTo: same company and known agent', async () => {
      const co = await createCompany(t);
      const other = await createCompany(t);
      const foreign = await createAgent(t, other.id);
      for (const reportsTo of [foreign.id, randomUUID()]) {
        const res = await t.http.post(`/api/companies/${co.id}/agents`).send(agentBody({ reportsTo })).expect(422);
        expect(res.body.field).toBe('reportsTo');
      }
      const boss = await createAgent(t, co.id);
      expect((await createAgent(t, co.id, { reportsTo: boss.id })).reportsTo).toBe(boss.id);
    });

    it('gives duplicate names numeric suffixes on the URL key', async () => {
      const co = await createCompany(t);
      const keys = [];
      for (let i = 0; i < 3; i++) keys.push((await createAgent(t, co.id, { name: 'Same Name' })).urlKey);
      expect(keys).toEqual(['same-name', 'same-name-2', 'same-name-3']);
    });

    it('gives concurrent creates with the same name distinct URL keys', async () => {
      const co = await createCompany(t);
      const results = await Promise.all(
        Array.from({ length: 6 }, () => t.http.post(`/api/companies/${co.id}/agents`).send(agentBody({ name: 'Racer' }))),
      );
      expect(results.map((r) => r.status)).toEqual(Array(6).fill(201));
      const keys = results.map((r) => r.body.urlKey).sort();
      expect(new Set(keys).size).toBe(6);
      expect(keys).toContain('racer');
    });

    it('reuses the URL key of a terminated agent', async () => {
      const co = await createCompany(t);
      const a = await createAgent(t, co.id, { name: 'Phoenix' });
      await t.http.post(`/api/agents/${a.id}/terminate`).expect(200);
      expect((await createAgent(t, co.id, { name: 'Phoenix' })).urlKey).toBe('phoenix');
    });
  });

  describe('POST /api/companies/:companyId/agent-hires', () => {
    it('creates a pending_approval agent and a pending approval with the requested config snapshot', async () => {
      const co = await createCompany(t, { requireBoardApprovalForNewAgents: true });
      // a source issue of the company (an unknown id is refused like another company's)
      const issueId = (await t.http.post(`/api/companies/${co.id}/issues`).send({ title: 'needs help' }).expect(201)).body.id;
      const res = await t.http
        .post(`/api/companies/${co.id}/agent-hires`)
        .send(agentBody({ name: 'Hire Me', adapterConfig: { command: 'run' }, sourceIssueId: issueId, sourceIssueIds: [issueId] }))
        .expect(201);
      expect(res.body.agent).toMatchObject({ status: 'pending_approval', name: 'Hire Me', sourceIssueIds: [issueId] });
      expect(res.body.approval).toMatchObject({
        companyId: co.id,
        type: 'hire_agent',
        status: 'pending',
        agentId: res.body.agent.id,
        sourceIssueIds: [issueId],
        requestedByActorType: 'user',
        requestedByActorId: 'local-board',
      });
      expect(res.body.approval.payload.agent).toMatchObject({ name: 'Hire Me', adapterType: 'process', adapterConfig: { command: 'run' } });
      const activity = await t.dataSource.query(`SELECT action FROM activity_log WHERE entity_id = $1`, [res.body.agent.id]);
      expect(activity).toEqual([{ action: 'agent.hire_requested' }]);
    });

    it('creates the agent directly (idle, no approval) when the company does not require approval', async () => {
      const co = await createCompany(t);
      const res = await t.http.post(`/api/companies/${co.id}/agent-hires`).send(agentBody()).expect(201);
      expect(res.body.agent.status).toBe('idle');
      expect(res.body.approval).toBeNull();
      expect(await t.dataSource.query(`SELECT 1 FROM approvals WHERE company_id = $1`, [co.id])).toHaveLength(0);
    });

    it('leaves no agent and no approval when the hire fails', async () => {
      const co = await createCompany(t, { requireBoardApprovalForNewAgents: true });
      await t.http
        .post(`/api/companies/${co.id}/agent-hires`)
        .send(agentBody({ adapterConfig: { args: [] } }))
        .expect(422);
      await t.http
        .post(`/api/companies/${co.id}/agent-hires`)
        .send(agentBody({ sourceIssueIds: ['x'] }))
        .expect(400);
      expect(await countAgents(co.id)).toBe(0);
      expect(await t.dataSource.query(`SELECT 1 FROM approvals WHERE company_id = $1`, [co.id])).toHaveLength(0);
    });

    it('lets agents with agents:create authority hire; others get 403 with a deny reason', async () => {
      const co = await createCompany(t);
      const ceo = await createAgentWithKey(t, co.id, { role: 'ceo' });
      const plain = await createRestrictedAgentWithKey(t, co.id);
      const denied = await t.http.post(`/api/companies/${co.id}/agent-hires`).set(bearer(plain.token)).send(agentBody()).expect(403);
      expect(denied.body).toMatchObject({ code: 'forbidden', reason: 'deny_missing_grant' });
      const ok = await t.http.post(`/api/companies/${co.id}/agent-hires`).set(bearer(ceo.token)).send(agentBody()).expect(201);
      expect(ok.body.agent.status).toBe('idle');
    });

    it('refuses an agent of another company with 403', async () => {
      const co = await createCompany(t);
      const other = await createCompany(t);
      const { token } = await createAgentWithKey(t, other.id, { role: 'ceo' });
      await t.http.post(`/api/companies/${co.id}/agent-hires`).set(bearer(token)).send(agentBody()).expect(403);
    });
  });

  describe('GET /api/companies/:companyId/agents', () => {
    it('lists live agents and excludes terminated ones', async () => {
      const co = await createCompany(t);
      const live = await createAgent(t, co.id);
      const gone = await createAgent(t, co.id);
      await t.http.post(`/api/agents/${gone.id}/terminate`).expect(200);
      const res = await t.http.get(`/api/companies/${co.id}/agents`).expect(200);
      expect(res.body.map((a: { id: string }) => a.id)).toEqual([live.id]);
    });

    it('redacts configuration for an agent caller that cannot read it, except its own', async () => {
      const co = await createCompany(t);
      const target = await createAgent(t, co.id, { adapterConfig: { command: 'secret-cmd' } });
      const peer = await createRestrictedAgentWithKey(t, co.id);
      const res = await t.http.get(`/api/companies/${co.id}/agents`).set(bearer(peer.token)).expect(200);
      expect(res.text).not.toContain('secret-cmd');
      const mine = res.body.find((a: { id: string }) => a.id === peer.agent.id);
      expect(mine).toMatchObject({ configRedacted: false, adapterConfig: { command: 'true' } });
      expect(res.body.find((a: { id: string }) => a.id === target.id)).toMatchObject({
        configRedacted: true,
        adapterConfig: {},
        runtimeConfig: {},
      });
      const creator = await createAgentWithKey(t, co.id, { role: 'ceo' });
      const full = await t.http.get(`/api/companies/${co.id}/agents`).set(bearer(creator.token)).expect(200);
      expect(full.text).toContain('secret-cmd');
    });

    it('refuses an agent of another company with 403', async () => {
      const co = await createCompany(t);
      const other = await createCompany(t);
      const { token } = await createAgentWithKey(t, other.id);
      await t.http.get(`/api/companies/${co.id}/agents`).set(bearer(token)).expect(403);
    });
  });

  describe('GET /api/agents/:agentId', () => {
    it('adds chainOfCommand (direct manager first) and the access block', async () => {
      const co = await createCompany(t);
      const ceo = await createAgent(t, co.id, { role: 'ceo' });
      const lead = await createAgent(t, co.id, { reportsTo: ceo.id });
      const dev = await createAgent(t, co.id, { reportsTo: lead.id });
      const res = await t.http.get(`/api/agents/${dev.id}`).expect(200);
      expect(res.body.chainOfCommand.map((c: { id: string }) => c.id)).toEqual([lead.id, ceo.id]);
      expect(res.body.chainOfCommand[0]).toEqual({ id: lead.id, name: lead.name, urlKey: lead.urlKey, role: 'general', title: null });
      expect(res.body.access).toEqual({
        canAssignTasks: false,
        taskAssignSource: 'none',
        membership: expect.objectContaining({ principalType: 'agent', principalId: dev.id, membershipRole: 'member', status: 'active' }),
        grants: [],
      });
      const ceoView = await t.http.get(`/api/agents/${ceo.id}`).expect(200);
      expect(ceoView.body.access).toMatchObject({ canAssignTasks: true, taskAssignSource: 'ceo_role' });
      expect(ceoView.body.chainOfCommand).toEqual([]);
    });

    it('stops the chain of command at a cycle in stored data', async () => {
      const co = await createCompany(t);
      const a = await createAgent(t, co.id);
      const b = await createAgent(t, co.id, { reportsTo: a.id });
      await t.dataSource.query(`UPDATE agents SET reports_to = $1 WHERE id = $2`, [b.id, a.id]);
      const res = await t.http.get(`/api/agents/${b.id}`).expect(200);
      expect(res.body.chainOfCommand.map((c: { id: string }) => c.id)).toEqual([a.id]);
    });

    it('resolves a shortname with ?companyId= or agent auth, and needs one of them', async () => {
      const co = await createCompany(t);
      const a = await createAgent(t, co.id, { name: 'Short Name' });
      expect((await t.http.get(`/api/agents/short-name`).query({ companyId: co.id }).expect(200)).body.id).toBe(a.id);
      expect((await t.http.get(`/api/agents/Short-Name`).query({ companyId: co.id }).expect(200)).body.id).toBe(a.id);
      const res = await t.http.get(`/api/agents/short-name`).expect(400);
      expect(res.body.code).toBe('company_required');
      const { token } = await createAgentWithKey(t, co.id);
      expect((await t.http.get(`/api/agents/short-name`).set(bearer(token)).expect(200)).body.id).toBe(a.id);
      await t.http.get(`/api/agents/no-such-agent`).query({ companyId: co.id }).expect(404);
      await t.http.get(`/api/agents/short-name`).query({ companyId: 'garbage' }).expect(404);
    });

    it('answers 404 for unknown ids and for an agent of another company (one answer)', async () => {
      const co = await createCompany(t);
      const a = await createAgent(t, co.id);
      await t.http.get(`/api/agents/${randomUUID()}`).expect(404);
      await t.http.get(`/api/agents/${a.id}`).query({ companyId: randomUUID() }).expect(404);
      await t.http.get(`/api/agents/${a.id}`).query({ companyId: co.id }).expect(200);
      const other = await createCompany(t);
      const { token } = await createAgentWithKey(t, other.id);
      await t.http.get(`/api/agents/${a.id}`).set(bearer(token)).expect(404);
      // a shortname is resolved in the caller's own company
      await t.http.get(`/api/agents/${a.urlKey}`).set(bearer(token)).expect(404);
      await t.http.get(`/api/agents/${a.urlKey}`).set(bearer(token)).query({ companyId: co.id }).expect(403);
    });

    it('fetches a terminated agent by id', async () => {
      const co = await createCompany(t);
      const a = await createAgent(t, co.id);
      await t.http.post(`/api/agents/${a.id}/terminate`).expect(200);
      const res = await t.http.get(`/api/agents/${a.id}`).expect(200);
      expect(res.body).toMatchObject({ status: 'terminated' });
      expect(res.body.terminatedAt).toEqual(expect.any(String));
    });

    it('redacts configuration for a same-company peer without config access', async () => {
      const co = await createCompany(t);
      const target = await createAgent(t, co.id, { adapterConfig: { command: 'hidden-marker' } });
      const peer = await createRestrictedAgentWithKey(t, co.id);
      const res = await t.http.get(`/api/agents/${target.id}`).set(bearer(peer.token)).expect(200);
      expect(res.text).not.toContain('hidden-marker');
      expect(res.body.configRedacted).toBe(true);
      const self = await t.http.get(`/api/agents/${peer.agent.id}`).set(bearer(peer.token)).expect(200);
      expect(self.body.configRedacted).toBe(false);
    });
  });

  describe('GET /api/agents/me', () => {
    it('returns the calling agent with chainOfCommand and access', async () => {
      const co = await createCompany(t);
      const boss = await createAgent(t, co.id);
      const { agent, token } = await createAgentWithKey(t, co.id, { reportsTo: boss.id });
      const res = await t.http.get('/api/agents/me').set(bearer(token)).expect(200);
      expect(res.body).toMatchObject({ id: agent.id, chainOfCommand: [{ id: boss.id }], access: { canAssignTasks: false } });
    });

    it('rejects board callers with 403', async () => {
      await t.http.get('/api/agents/me').expect(403);
    });
  });

  describe('PATCH /api/agents/:agentId', () => {
    it('rejects a permissions field with 400 and leaves permissions unchanged', async () => {
      const co = await createCompany(t);
      const a = await createAgent(t, co.id, { role: 'engineer' });
      const res = await t.http
        .patch(`/api/agents/${a.id}`)
        .send({ permissions: { canCreateAgents: true } })
        .expect(400);
      expect(res.body).toMatchObject({ code: 'permissions_not_patchable', field: 'permissions' });
      await t.http
        .patch(`/api/agents/${a.id}`)
        .send({ desiredSkills: ['x'] })
        .expect(400);
      expect((await t.http.get(`/api/agents/${a.id}`)).body.permissions).toEqual({});
    });

    it('merges adapterConfig unless replaceAdapterConfig is true (skill sync settings survive a replace)', async () => {
      const co = await createCompany(t);
      const a = await createAgent(t, co.id, {
        adapterConfig: { command: 'true', args: ['one'], timeoutSec: 30 },
        desiredSkills: ['service/catalog/agent-protocol'],
      });
      let res = await t.http
        .patch(`/api/agents/${a.id}`)
        .send({ adapterConfig: { args: ['two'] } })
        .expect(200);
      expect(res.body.adapterConfig).toEqual({
        command: 'true',
        args: ['two'],
        timeoutSec: 30,
        serviceSkillSync: { desiredSkills: ['service/catalog/agent-protocol'] },
      });
      res = await t.http
        .patch(`/api/agents/${a.id}`)
        .send({ adapterConfig: { command: 'echo' }, replaceAdapterConfig: true })
        .expect(200);
      expect(res.body.adapterConfig).toEqual({ command: 'echo', serviceSkillSync: { desiredSkills: ['service/catalog/agent-protocol'] } });
      // a null removes a known key in merge mode
      res = await t.http
        .patch(`/api/agents/${a.id}`)
        .send({ adapterConfig: { timeoutSec: 5 } })
        .expect(200);
      res = await t.http
        .patch(`/api/agents/${a.id}`)
        .send({ adapterConfig: { timeoutSec: null } })
        .expect(200);
      expect(res.body.adapterConfig.timeoutSec).toBeUndefined();
    });

    it('validates the config against a changed adapter type and rejects malformed config with the field named', async () => {
      const co = await createCompany(t);
      const a = await createAgent(t, co.id);
      let res = await t.http.patch(`/api/agents/${a.id}`).send({ adapterType: 'http' }).expect(422);
      expect(res.body.field).toBe('adapterConfig.url');
      res = await t.http.patch(`/api/agents/${a.id}`).send({ adapterType: 'bogus' }).expect(422);
      expect(res.body.field).toBe('adapterType');
      res = await t.http
        .patch(`/api/agents/${a.id}`)
        .send({ adapterConfig: { command: 42 } })
        .expect(422);
      expect(res.body.field).toBe('adapterConfig.command');
      res = await t.http
        .patch(`/api/agents/${a.id}`)
        .send({ adapterType: 'http', adapterConfig: { url: 'https://h.example' }, replaceAdapterConfig: true })
        .expect(200);
      expect(res.body).toMatchObject({ adapterType: 'http', adapterConfig: { url: 'https://h.example' } });
    });

    it('keeps reportsTo inside the company and refuses cycles', async () => {
      const co = await createCompany(t);
      const other = await createCompany(t);
      const a = await createAgent(t, co.id);
      const b = await createAgent(t, co.id);
      const c = await createAgent(t, co.id);
      const x = await createAgent(t, other.id);
      expect((await t.http.patch(`/api/agents/${a.id}`).send({ reportsTo: x.id }).expect(422)).body.field).toBe('reportsTo');
      await t.http.patch(`/api/agents/${a.id}`).send({ reportsTo: a.id }).expect(422);
      await t.http.patch(`/api/agents/${a.id}`).send({ reportsTo: b.id }).expect(200);
      await t.http.patch(`/api/agents/${b.id}`).send({ reportsTo: c.id }).expect(200);
      const res = await t.http.patch(`/api/agents/${c.id}`).send({ reportsTo: a.id }).expect(422);
      expect(res.body).toMatchObject({ code: 'reports_to_cycle', field: 'reportsTo' });
      expect((await t.http.get(`/api/agents/${c.id}`)).body.reportsTo).toBeNull();
      expect((await t.http.patch(`/api/agents/${a.id}`).send({ reportsTo: null }).expect(200)).body.reportsTo).toBeNull();
    });

    it('never lets two concurrent moves close a cycle', async () => {
      const co = await createCompany(t);
      for (let round = 0; round < 4; round++) {
        const a = await createAgent(t, co.id);
        const b = await createAgent(t, co.id);
        const [r1, r2] = await Promise.all([
          t.http.patch(`/api/agents/${a.id}`).send({ reportsTo: b.id }),
          t.http.patch(`/api/agents/${b.id}`).send({ reportsTo: a.id }),
        ]);
        expect([r1.status, r2.status].sort()).toEqual([200, 422]);
      }
    });

    it("answers 409 when renaming onto a live agent's shortname; a terminated agent's key is free", async () => {
      const co = await createCompany(t);
      const a = await createAgent(t, co.id, { name: 'Alpha' });
      await createAgent(t, co.id, { name: 'Beta' });
      const res = await t.http.patch(`/api/agents/${a.id}`).send({ name: 'beta' }).expect(409);
      expect(res.body.code).toBe('agent_shortname_conflict');
      expect((await t.http.get(`/api/agents/${a.id}`)).body.name).toBe('Alpha');
      const g = await createAgent(t, co.id, { name: 'Gamma' });
      await t.http.post(`/api/agents/${g.id}/terminate`).expect(200);
      expect((await t.http.patch(`/api/agents/${a.id}`).send({ name: 'Gamma' }).expect(200)).body.urlKey).toBe('gamma');
    });

    it('lets only one of two concurrent renames take the same shortname', async () => {
      const co = await createCompany(t);
      const a = await createAgent(t, co.id);
      const b = await createAgent(t, co.id);
      const results = await Promise.all([a, b].map((x) => t.http.patch(`/api/agents/${x.id}`).send({ name: 'Contested' })));
      expect(results.map((r) => r.status).sort()).toEqual([200, 409]);
      const keys = await t.dataSource.query(`SELECT url_key FROM agents WHERE company_id = $1 AND url_key = 'contested'`, [co.id]);
      expect(keys).toHaveLength(1);
    });

    it('refuses a status or budget change by the agent itself (lifecycle needs authority)', async () => {
      const co = await createCompany(t);
      const me = await createRestrictedAgentWithKey(t, co.id);
      const res = await t.http.patch(`/api/agents/${me.agent.id}`).set(bearer(me.token)).send({ status: 'paused' }).expect(403);
      expect(res.body.reason).toBe('deny_missing_grant');
      await t.http.patch(`/api/agents/${me.agent.id}`).set(bearer(me.token)).send({ budgetMonthlyCents: 10 }).expect(403);
    });

    it('rejects status active for terminated and pending_approval agents', async () => {
      const co = await createCompany(t);
      const a = await createAgent(t, co.id);
      await t.http.post(`/api/agents/${a.id}/terminate`).expect(200);
      await t.http.patch(`/api/agents/${a.id}`).send({ status: 'active' }).expect(409);
      const ap = await createCompany(t, { requireBoardApprovalForNewAgents: true });
      const hire = await t.http.post(`/api/companies/${ap.id}/agent-hires`).send(agentBody()).expect(201);
      await t.http.patch(`/api/agents/${hire.body.agent.id}`).send({ status: 'active' }).expect(409);
      expect((await t.http.get(`/api/agents/${hire.body.agent.id}`)).body.status).toBe('pending_approval');
      await t.http.patch(`/api/agents/${a.id}`).send({ status: 'sleepy' }).expect(400);
    });

    it('moves status by PATCH for live agents (paused, active)', async () => {
      const co = await createCompany(t);
      const a = await createAgent(t, co.id);
      expect((await t.http.patch(`/api/agents/${a.id}`).send({ status: 'paused' }).expect(200)).body).toMatchObject({
        status: 'paused',
        pauseReason: 'manual',
      });
      expect((await t.http.patch(`/api/agents/${a.id}`).send({ status: 'active' }).expect(200)).body).toMatchObject({
        status: 'active',
        pauseReason: null,
      });
    });

    it('protects the built-in marker in metadata', async () => {
      const co = await createCompany(t);
      const a = await createAgent(t, co.id);
      await t.dataSource.query(`UPDATE agents SET metadata = '{"serviceBuiltInAgent":{"key":"briefs"}}' WHERE id = $1`, [a.id]);
      const res = await t.http
        .patch(`/api/agents/${a.id}`)
        .send({ metadata: { note: 'x' } })
        .expect(200);
      expect(res.body.metadata).toEqual({ note: 'x', serviceBuiltInAgent: { key: 'briefs' } });
      await t.http
        .patch(`/api/agents/${a.id}`)
        .send({ metadata: { serviceBuiltInAgent: { key: 'other' } } })
        .expect(422);
      await t.http
        .patch(`/api/agents/${a.id}`)
        .send({ metadata: { serviceBuiltInAgent: { key: 'briefs' }, note: 'y' } })
        .expect(200);
    });

    it('lets an agent update itself, its managers and config-authorised agents; others get 403', async () => {
      const co = await createCompany(t);
      const boss = await createRestrictedAgentWithKey(t, co.id);
      const worker = await createRestrictedAgentWithKey(t, co.id, { reportsTo: boss.agent.id });
      await t.http.patch(`/api/agents/${worker.agent.id}`).set(bearer(worker.token)).send({ title: 'self' }).expect(200);
      await t.http.patch(`/api/agents/${worker.agent.id}`).set(bearer(boss.token)).send({ title: 'by boss' }).expect(200);
      const res = await t.http.patch(`/api/agents/${boss.agent.id}`).set(bearer(worker.token)).send({ title: 'coup' }).expect(403);
      expect(res.body).toMatchObject({ code: 'forbidden', reason: 'deny_missing_grant' });
      const other = await createCompany(t);
      const outsider = await createAgentWithKey(t, other.id, { role: 'ceo' });
      await t.http.patch(`/api/agents/${worker.agent.id}`).set(bearer(outsider.token)).send({ title: 'x' }).expect(404);
    });

    it('answers 404 for an unknown agent', async () => {
      await t.http.patch(`/api/agents/${randomUUID()}`).send({ title: 'x' }).expect(404);
      await t.http.patch(`/api/agents/nope`).send({ title: 'x' }).expect(404);
    });
  });

  it('writes agent activity without key material', async () => {
    const co = await createCompany(t);
    const a = await createAgent(t, co.id);
    const key = await createAgentKey(t, a.id, uniq('k'));
    const rows = await t.dataSource.query(
      `SELECT action, details FROM activity_log WHERE company_id = $1 AND entity_type = 'agent' ORDER BY created_at`,
      [co.id],
    );
    expect(rows.map((r: { action: string }) => r.action)).toEqual(['agent.created', 'agent.key_created']);
    expect(JSON.stringify(rows)).not.toContain(key.token);
  });

  describe('POST /api/agents/:agentId/test-environment', () => {
    it("runs the adapter's environment check and returns its report", async () => {
      const co = await createCompany(t);
      const good = await createAgent(t, co.id, { adapterConfig: { command: process.execPath } });
      const res = await t.http.post(`/api/agents/${good.id}/test-environment`).expect(200);
      expect(res.body).toMatchObject({ agentId: good.id, adapterType: 'process', ok: true });
      expect(res.body.checks[0]).toMatchObject({ name: 'command', ok: true });
      // as root, the agent's own identity can run it (agent-identities.e2e-spec covers a refusal)
      if (process.getuid?.() === 0) expect(res.body.checks).toContainEqual(expect.objectContaining({ name: 'agent_identity', ok: true }));
      expect(Date.parse(res.body.testedAt)).not.toBeNaN();
      const bad = await createAgent(t, co.id, { adapterConfig: { command: '/nonexistent/no-such-binary' } });
      const report = (await t.http.post(`/api/agents/${bad.id}/test-environment`).expect(200)).body;
      expect(report.ok).toBe(false);
      expect(report.checks[0]).toMatchObject({ name: 'command', ok: false });
      // nothing is recorded
      const acts = await t.dataSource.query(
        `SELECT count(*)::int AS n FROM activity_log WHERE entity_id = $1 AND action LIKE '%environment%'`,
        [bad.id],
      );
      expect(acts[0].n).toBe(0);
    });

    it('lets agents with agents:create test; others get 403; unknown agents 404', async () => {
      const co = await createCompany(t);
      const target = await createAgent(t, co.id);
      const ceo = await createAgentWithKey(t, co.id, { role: 'ceo' });
      await t.http.post(`/api/agents/${target.id}/test-environment`).set(bearer(ceo.token)).expect(200);
      const plain = await createRestrictedAgentWithKey(t, co.id);
      await t.http.post(`/api/agents/${target.id}/test-environment`).set(bearer(plain.token)).expect(403);
      const other = await createAgentWithKey(t, (await createCompany(t)).id, { role: 'ceo' });
      await t.http.post(`/api/agents/${target.id}/test-environment`).set(bearer(other.token)).expect(404);
      await t.http.post(`/api/agents/${randomUUID()}/test-environment`).expect(404);
    });
  });
});
