import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { createCompany } from '../support/factories';
import { FakeMcpServer, startFakeMcpServer } from '../support/fake-mcp-server';
import { sleep, waitFor } from '../support/heartbeat';
import { agentInRun, mcpClient, resultText } from '../support/mcp';
import { createSecret, dumpDatabase } from '../support/secrets';
import { sqlAgent, sqlAgentKey } from '../support/sql';
import { createTestApp, TestApp } from '../support/test-app';
import { profileFor, remoteConnection } from '../support/tools';
import { tmpPath } from '../support/tmp';

/**
 * The gateway to company tool connections: an agent in a run calls a remote MCP server's tools
 * through /api/mcp, the service adds the connection's secret header; profiles decide allow, ask or
 * deny; "ask" calls wait as action requests the board approves or declines, or that time out by
 * the database's clock; every call is recorded; tenants stay apart.
 */
describe('tool gateway: company connections through /api/mcp', () => {
  let t: TestApp;
  let remote: FakeMcpServer;
  let companyId: string;
  let secret: { id: string; plaintext: string };
  let connection: { id: string; toolPrefix: string; applicationId: string };
  const clients: Client[] = [];
  const connect = async (headers: Record<string, string>) => {
    const c = await mcpClient(t, headers);
    clients.push(c);
    return c;
  };
  const toolNames = async (c: Client) => (await c.listTools()).tools.map((x) => x.name);

  beforeAll(async () => {
    // a call of an "ask" tool waits 1 s for the board before it answers "pending"
    t = await createTestApp({ listen: true, env: { SERVICE_TOOL_APPROVAL_WAIT_SEC: '1' } });
    companyId = (await createCompany(t)).id;
    secret = await createSecret(t, companyId);
    remote = await startFakeMcpServer(secret.plaintext);
    await t.dataSource.query(`INSERT INTO live_event_watch (company_id, until) VALUES ($1, now() + interval '1 hour')`, [companyId]);
    connection = await remoteConnection(t, companyId, remote.url, secret.id, { toolPrefix: 'remote' });
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    await remote?.close();
    await t?.close();
  });

  describe('connections (board routes)', () => {
    it('refuses agents (403) and other companies (403), and answers unknown ids with 404', async () => {
      const agent = await sqlAgent(t, companyId);
      const key = await sqlAgentKey(t, companyId, agent.id);
      await t.http.get(`/api/companies/${companyId}/tools/connections`).set('Authorization', `Bearer ${key}`).expect(403);
      await t.http.get(`/api/tool-connections/${connection.id}`).set('Authorization', `Bearer ${key}`).expect(403);
      await t.http.get('/api/tool-connections/00000000-0000-4000-8000-000000000000').expect(404);
      await t.http.get('/api/tool-connections/not-a-uuid').expect(404);
    });

    it('lists the connection with its catalog read through the gateway (the remote server got the secret header), never the secret', async () => {
      const list = (await t.http.get(`/api/companies/${companyId}/tools/connections`).expect(200)).body;
      const c = list.connections.find((x: { id: string }) => x.id === connection.id);
      expect(c).toMatchObject({
        transport: 'mcp_remote',
        status: 'active',
        enabled: true,
        healthStatus: 'ok',
        toolCount: 3,
        toolPrefix: 'remote',
        credentialRefs: [{ secretId: secret.id, placement: 'header', key: 'Authorization', prefix: 'Bearer ' }],
      });
      const catalog = (await t.http.get(`/api/tool-connections/${connection.id}/catalog`).expect(200)).body;
      expect(catalog.catalog.map((e: { toolName: string }) => e.toolName).sort()).toEqual(['create_ticket', 'echo', 'leak_header']);
      expect(catalog.catalog.find((e: { toolName: string }) => e.toolName === 'echo')).toMatchObject({
        riskLevel: 'read',
        isReadOnly: true,
        status: 'active',
      });
      expect(JSON.stringify(list)).not.toContain(secret.plaintext);
      const apps = (await t.http.get(`/api/companies/${companyId}/tools/applications`).expect(200)).body.applications;
      expect(apps.map((a: { id: string }) => a.id)).toContain(connection.applicationId);
    });

    it('refuses credentials in plain config, secrets of another company, private destinations and bad shapes (4xx naming the field)', async () => {
      const base = { name: 'x', transport: 'mcp_remote', transportConfig: { url: remote.url } };
      const post = (body: Record<string, unknown>) => t.http.post(`/api/companies/${companyId}/tools/connections`).send(body);
      const plainAuth = await post({ ...base, transportConfig: { url: remote.url, headers: { Authorization: 'Bearer abc' } } });
      expect([plainAuth.status, plainAuth.body.code]).toEqual([422, 'sensitive_config']);
      const inUrl = await post({ ...base, transportConfig: { url: 'https://user:pw@example.com/mcp' } });
      expect([inUrl.status, inUrl.body.code]).toEqual([422, 'sensitive_config']);
      const other = await createCompany(t);
      const foreign = await createSecret(t, other.id);
      const stolen = await post({
        ...base,
        credentialRefs: [{ name: 'k', secretId: foreign.id, placement: 'header', key: 'Authorization' }],
      });
      expect([stolen.status, stolen.body.code, stolen.body.field]).toEqual([422, 'invalid_reference', 'credentialRefs.0.secretId']);
      // the outbound guard: private and link-local destinations are refused
      for (const url of ['http://10.1.2.3/mcp', 'http://169.254.169.254/latest']) {
        const r = await post({ ...base, transportConfig: { url } });
        expect([url, r.status, r.body.code]).toEqual([url, 422, 'url_not_allowed']);
      }
      const noUrl = await post({ name: 'x', transport: 'mcp_remote', transportConfig: { command: 'ls' } });
      expect([noUrl.status, noUrl.body.code]).toEqual([422, 'invalid_transport_config']);
      await post({ name: 'x', transport: 'ftp' }).expect(400);
      const taken = await post({ ...base, toolPrefix: 'remote' });
      expect([taken.status, taken.body.code]).toEqual([409, 'tool_prefix_taken']);
    });

    it('a local connection: a command with its secret variable by reference; "ask" is refused for it (the CLI runs it)', async () => {
      const local = await t.http
        .post(`/api/companies/${companyId}/tools/connections`)
        .send({
          name: 'Memory',
          transport: 'local_stdio',
          transportConfig: { command: 'npx', args: ['-y', 'server-memory'], env: { MEMORY_DIR: tmpPath('x') } },
          credentialRefs: [{ name: 'key', secretId: secret.id, placement: 'env', key: 'MEMORY_KEY' }],
        })
        .expect(201);
      const profile = await t.http.post(`/api/companies/${companyId}/tools/profiles`).send({ name: 'local-only' }).expect(201);
      const ask = await t.http
        .post(`/api/tool-profiles/${profile.body.id}/entries`)
        .send({ selectorType: 'connection', connectionId: local.body.id, policy: 'ask' });
      expect([ask.status, ask.body.code]).toEqual([422, 'unsupported_option']);
      await t.http.delete(`/api/tool-connections/${local.body.id}`).expect(200);
      await t.http.delete(`/api/tool-profiles/${profile.body.id}`).expect(200);
    });
  });

  describe('an agent’s calls', () => {
    it('with no profile the agent has no company tools (deny by default)', async () => {
      const a = await agentInRun(t, companyId);
      const c = await connect(a.headers);
      expect((await toolNames(c)).filter((n) => n.startsWith('remote__'))).toEqual([]);
      const r = await c.callTool({ name: 'remote__echo', arguments: { text: 'hi' } });
      expect(r.isError).toBe(true);
      expect(resultText(r)).toContain('tool_denied');
      expect(remote.calls.filter((x) => x.args.text === 'hi')).toEqual([]);
    });

    it('allowed: the call goes through with the secret header added by the service, and is recorded (activity and run event) without secrets', async () => {
      const a = await agentInRun(t, companyId);
      await profileFor(t, companyId, a.id, [{ selectorType: 'connection', connectionId: connection.id, policy: 'allow' }]);
      const c = await connect(a.headers);
      const listed = await c.listTools();
      expect(listed.tools.map((x) => x.name)).toEqual(
        expect.arrayContaining(['remote__echo', 'remote__create_ticket', 'remote__leak_header']),
      );
      const r = await c.callTool({ name: 'remote__echo', arguments: { text: 'hello gateway', apiToken: 'not-a-real-one' } });
      expect(r.isError).toBeFalsy();
      expect(resultText(r)).toBe('echo: hello gateway');
      expect(remote.calls[remote.calls.length - 1]).toMatchObject({ tool: 'echo', authorization: `Bearer ${secret.plaintext}` });
      // a server that answers the header back: the agent gets it scrubbed
      const leak = await c.callTool({ name: 'remote__leak_header', arguments: {} });
      expect(resultText(leak)).not.toContain(secret.plaintext);
      expect(resultText(leak)).toContain('[redacted]');
      const [record] = await t.dataSource.query(
        `SELECT actor_type, agent_id, run_id, details FROM activity_log WHERE company_id = $1 AND action = 'tool.called' AND details->>'tool' = 'echo' AND run_id = $2`,
        [companyId, a.runId],
      );
      expect(record).toMatchObject({ actor_type: 'agent', agent_id: a.id, run_id: a.runId });
      expect(record.details).toMatchObject({
        connectionId: connection.id,
        tool: 'echo',
        outcome: 'succeeded',
        arguments: { text: 'hello gateway', apiToken: '[redacted]' },
        durationMs: expect.any(Number),
        resultBytes: expect.any(Number),
      });
      const events = await waitFor(async () => {
        const rows = await t.dataSource.query(
          `SELECT payload FROM live_events WHERE company_id = $1 AND type = 'heartbeat.run.event' AND payload->>'runId' = $2 AND payload->>'eventType' = 'tool.call'`,
          [companyId, a.runId],
        );
        return rows.length >= 2 ? rows : null;
      }, 'the run events of the calls');
      expect(events[0].payload.payload).toMatchObject({ tool: 'echo', outcome: 'succeeded' });
      // nowhere in the database but the encrypted secret store
      const dump = await dumpDatabase(t);
      expect(dump).not.toContain(secret.plaintext);
    });

    it('a tool the profile denies by name is neither listed nor callable, while the rest of the connection is', async () => {
      const a = await agentInRun(t, companyId);
      await profileFor(t, companyId, a.id, [
        { selectorType: 'connection', connectionId: connection.id, policy: 'allow' },
        { selectorType: 'tool_name', connectionId: connection.id, toolName: 'create_ticket', effect: 'exclude' },
      ]);
      const c = await connect(a.headers);
      const names = await toolNames(c);
      expect(names).toContain('remote__echo');
      expect(names).not.toContain('remote__create_ticket');
      const r = await c.callTool({ name: 'remote__create_ticket', arguments: { title: 'nope' } });
      expect(resultText(r)).toContain('tool_denied');
      expect(remote.calls.filter((x) => x.args.title === 'nope')).toEqual([]);
      const [denied] = await t.dataSource.query(`SELECT details FROM activity_log WHERE action = 'tool.call_denied' AND run_id = $1`, [
        a.runId,
      ]);
      expect(denied.details).toMatchObject({ tool: 'create_ticket', outcome: 'denied' });
    });

    it('another company’s agent cannot use the connection', async () => {
      const other = await createCompany(t);
      const a = await agentInRun(t, other.id);
      // even a profile of its own company naming the connection is refused
      const p = await t.http.post(`/api/companies/${other.id}/tools/profiles`).send({ name: 'steal', defaultAction: 'allow' }).expect(201);
      const entry = await t.http
        .post(`/api/tool-profiles/${p.body.id}/entries`)
        .send({ selectorType: 'connection', connectionId: connection.id, policy: 'allow' });
      expect([entry.status, entry.body.code]).toEqual([422, 'invalid_reference']);
      // nor may it name the connection's application or one of its tools, or attach a connection to that application
      const echo = (await t.http.get(`/api/tool-connections/${connection.id}/catalog`).expect(200)).body.catalog.find(
        (e: { toolName: string }) => e.toolName === 'echo',
      );
      for (const body of [
        { selectorType: 'application', applicationId: connection.applicationId, policy: 'allow' },
        { selectorType: 'catalog_entry', catalogEntryId: echo.id, policy: 'allow' },
      ]) {
        const r = await t.http.post(`/api/tool-profiles/${p.body.id}/entries`).send(body);
        expect([body.selectorType, r.status, r.body.code]).toEqual([body.selectorType, 422, 'invalid_reference']);
      }
      const attach = await t.http
        .post(`/api/companies/${other.id}/tools/connections`)
        .send({ name: 'x', transport: 'mcp_remote', transportConfig: { url: remote.url }, applicationId: connection.applicationId });
      expect([attach.status, attach.body.code]).toEqual([422, 'invalid_reference']);
      await t.http
        .post(`/api/companies/${other.id}/tools/profiles/${p.body.id}/bind`)
        .send({ targetType: 'agent', targetId: a.id })
        .expect(200);
      const c = await connect(a.headers);
      expect((await toolNames(c)).filter((n) => n.startsWith('remote__'))).toEqual([]);
      const r = await c.callTool({ name: 'remote__echo', arguments: { text: 'cross-tenant' } });
      expect(resultText(r)).toContain('tool_not_found');
      expect(remote.calls.filter((x) => x.args.text === 'cross-tenant')).toEqual([]);
      // nor reach its board routes
      const bind = await t.http
        .post(`/api/companies/${companyId}/tools/profiles/${p.body.id}/bind`)
        .send({ targetType: 'agent', targetId: a.id });
      expect(bind.status).toBe(404);
    });
  });

  describe('"ask": the board approves each call', () => {
    let a: Awaited<ReturnType<typeof agentInRun>>;
    let c: Client;
    const pending = async () =>
      (await t.http.get(`/api/companies/${companyId}/tools/action-requests`).expect(200)).body.actionRequests.filter(
        (x: { agentId: string }) => x.agentId === a.id,
      );

    beforeAll(async () => {
      a = await agentInRun(t, companyId);
      await profileFor(t, companyId, a.id, [
        { selectorType: 'connection', connectionId: connection.id, policy: 'allow' },
        { selectorType: 'tool_name', connectionId: connection.id, toolName: 'create_ticket', policy: 'ask' },
      ]);
      c = await connect(a.headers);
    });

    it('a call waits as an action request; the run is told it is pending; approved, the same call goes through once', async () => {
      const first = await c.callTool({ name: 'remote__create_ticket', arguments: { title: 'Approve me' } });
      expect(first.isError).toBe(true);
      expect(resultText(first)).toContain('approval_pending');
      expect(remote.calls.filter((x) => x.args.title === 'Approve me')).toEqual([]);
      const [item] = await pending();
      expect(item).toMatchObject({
        connectionId: connection.id,
        toolName: 'create_ticket',
        toolTitle: 'Create a ticket',
        agentId: a.id,
        runId: a.runId,
        request: { status: 'pending', arguments: { title: 'Approve me' }, previewMarkdown: expect.stringContaining('create_ticket') },
      });
      // calling again joins the same request
      await c.callTool({ name: 'remote__create_ticket', arguments: { title: 'Approve me' } });
      expect(await pending()).toHaveLength(1);
      const approved = await t.http.post(`/api/tool-gateway/action-requests/${item.request.id}/approve`).send({ companyId }).expect(200);
      expect(approved.body.status).toBe('approved');
      await t.http.post(`/api/tool-gateway/action-requests/${item.request.id}/decline`).send({ companyId }).expect(409);
      const ran = await c.callTool({ name: 'remote__create_ticket', arguments: { title: 'Approve me' } });
      expect(ran.isError).toBeFalsy();
      expect(resultText(ran)).toMatch(/^ticket T-\d+ "Approve me"$/);
      expect(remote.calls.filter((x) => x.args.title === 'Approve me')).toHaveLength(1);
      // used once: the next identical call asks again
      const again = await c.callTool({ name: 'remote__create_ticket', arguments: { title: 'Approve me' } });
      expect(resultText(again)).toContain('approval_pending');
      const actions = (
        await t.dataSource.query(`SELECT action FROM activity_log WHERE company_id = $1 AND entity_id IN ($2, $3) ORDER BY created_at`, [
          companyId,
          connection.id,
          item.request.id,
        ])
      ).map((r: { action: string }) => r.action);
      expect(actions).toEqual(expect.arrayContaining(['tool.approval_requested', 'tool.approval_granted', 'tool.called']));
      const [
        {
          request: { id: open },
        },
      ] = await pending();
      await t.http.post(`/api/tool-gateway/action-requests/${open}/decline`).send({ companyId, reason: 'cleanup' }).expect(200);
    });

    it('a waiting call sees the approval at once and runs', async () => {
      const call = c.callTool({ name: 'remote__create_ticket', arguments: { title: 'While waiting' } });
      const [item] = await waitFor(async () => {
        const p = (await pending()).filter(
          (x: { request: { arguments: { title: string } } }) => x.request.arguments.title === 'While waiting',
        );
        return p.length ? p : null;
      }, 'the request');
      await t.http.post(`/api/tool-gateway/action-requests/${item.request.id}/approve`).send({}).expect(200);
      const r = await call;
      // approved within the call's wait (1 s), or the call answered pending just before: then the next call runs it
      const text = resultText(r).includes('approval_pending')
        ? resultText(await c.callTool({ name: 'remote__create_ticket', arguments: { title: 'While waiting' } }))
        : resultText(r);
      expect(text).toContain('"While waiting"');
    });

    it('declined: a clear tool error with the reason, for the rest of the run', async () => {
      await c.callTool({ name: 'remote__create_ticket', arguments: { title: 'Decline me' } });
      const [item] = (await pending()).filter(
        (x: { request: { arguments: { title: string } } }) => x.request.arguments.title === 'Decline me',
      );
      const declined = await t.http
        .post(`/api/tool-gateway/action-requests/${item.request.id}/decline`)
        .send({ reason: 'Not this quarter' })
        .expect(200);
      expect(declined.body).toMatchObject({ status: 'rejected', decisionReason: 'Not this quarter' });
      const r = await c.callTool({ name: 'remote__create_ticket', arguments: { title: 'Decline me' } });
      expect(r.isError).toBe(true);
      expect(resultText(r)).toContain('tool_call_declined');
      expect(resultText(r)).toContain('Not this quarter');
      expect(remote.calls.filter((x) => x.args.title === 'Decline me')).toEqual([]);
      const rejected = (await t.http.get(`/api/companies/${companyId}/tools/action-requests?status=rejected`).expect(200)).body
        .actionRequests;
      expect(rejected.map((x: { request: { id: string } }) => x.request.id)).toContain(item.request.id);
    });

    it('unanswered: the request times out by the database’s clock; the call says so and it can no longer be approved', async () => {
      await t.http.patch(`/api/tool-connections/${connection.id}`).send({ approvalTimeoutSec: 1 }).expect(200);
      try {
        const first = await c.callTool({ name: 'remote__create_ticket', arguments: { title: 'Nobody answers' } });
        expect(resultText(first)).toMatch(/approval_pending|tool_call_timed_out/);
        const [row] = await t.dataSource.query(
          `SELECT id FROM tool_action_requests WHERE agent_id = $1 AND arguments->>'title' = 'Nobody answers'`,
          [a.id],
        );
        await waitFor(
          async () =>
            (await t.dataSource.query(`SELECT 1 FROM tool_action_requests WHERE id = $1 AND expires_at <= now()`, [row.id])).length > 0,
          'expiry',
        );
        const expired = (await t.http.get(`/api/companies/${companyId}/tools/action-requests?status=expired`).expect(200)).body
          .actionRequests;
        expect(expired.map((x: { request: { id: string } }) => x.request.id)).toContain(row.id);
        const late = await t.http.post(`/api/tool-gateway/action-requests/${row.id}/approve`).send({});
        expect([late.status, late.body.code]).toEqual([409, 'action_request_expired']);
        const r = await c.callTool({ name: 'remote__create_ticket', arguments: { title: 'Nobody answers' } });
        expect(resultText(r)).toContain('tool_call_timed_out');
        expect(remote.calls.filter((x) => x.args.title === 'Nobody answers')).toEqual([]);
        // the run page: both calls timed out ("Timed out"), the request expired
        const { decisions } = (await t.http.get(`/api/companies/${companyId}/tools/runs/${a.runId}/decisions`).expect(200)).body;
        const timedOut = decisions.filter((d: { actionRequest: { id: string } | null }) => d.actionRequest?.id === row.id);
        expect(timedOut).toHaveLength(2);
        for (const d of timedOut)
          expect(d).toMatchObject({
            decision: 'require_approval',
            outcome: 'timeout',
            reasonCode: 'tool_call_timed_out',
            pendingAction: null,
            invocation: { status: 'timed_out', approvalState: 'expired' },
            actionRequest: { status: 'expired' },
          });
      } finally {
        await t.http.patch(`/api/tool-connections/${connection.id}`).send({ approvalTimeoutSec: 3600 }).expect(200);
      }
    });

    it('the connector pages’ reads: calls waiting per connection, who may use it (profile bindings), its one company-wide grant', async () => {
      await c.callTool({ name: 'remote__create_ticket', arguments: { title: 'Shown as attention' } });
      const attention = (await t.http.get(`/api/companies/${companyId}/tools/apps/attention`).expect(200)).body;
      expect(attention.totals.pendingActionRequests).toBeGreaterThanOrEqual(1);
      expect(attention.apps).toEqual([
        expect.objectContaining({
          connection: expect.objectContaining({ id: connection.id }),
          pendingActionRequestCount: expect.any(Number),
        }),
      ]);
      const installs = (await t.http.get(`/api/tool-connections/${connection.id}/installs`).expect(200)).body;
      expect(installs.installs).toEqual(expect.arrayContaining([expect.objectContaining({ targetType: 'agent', targetId: a.id })]));
      const grants = (await t.http.get(`/api/tool-connections/${connection.id}/grants`).expect(200)).body;
      expect(grants.grants).toEqual([expect.objectContaining({ kind: 'organization', status: 'active', isDefault: true })]);
      expect(JSON.stringify(grants)).not.toContain(secret.plaintext);
      expect((await t.http.get(`/api/companies/${companyId}/tools/policies`).expect(200)).body).toEqual({ policies: [] });
      const [item] = (await pending()).filter(
        (x: { request: { arguments: { title: string } } }) => x.request.arguments.title === 'Shown as attention',
      );
      await t.http.post(`/api/tool-gateway/action-requests/${item.request.id}/decline`).send({}).expect(200);
    });

    it('the board’s decision routes refuse agents, other companies and unknown requests', async () => {
      await c.callTool({ name: 'remote__create_ticket', arguments: { title: 'Guarded' } });
      const [item] = (await pending()).filter(
        (x: { request: { arguments: { title: string } } }) => x.request.arguments.title === 'Guarded',
      );
      await t.http
        .post(`/api/tool-gateway/action-requests/${item.request.id}/approve`)
        .set('Authorization', `Bearer ${a.key}`)
        .send({})
        .expect(403);
      const other = await createCompany(t);
      await t.http.post(`/api/tool-gateway/action-requests/${item.request.id}/approve`).send({ companyId: other.id }).expect(404);
      await t.http.post('/api/tool-gateway/action-requests/00000000-0000-4000-8000-000000000000/approve').send({}).expect(404);
      const always = await t.http.post(`/api/tool-gateway/action-requests/${item.request.id}/approve`).send({ rememberAction: true });
      expect([always.status, always.body.code]).toEqual([422, 'unsupported_option']);
      await t.http.post(`/api/tool-gateway/action-requests/${item.request.id}/decline`).send({}).expect(200);
      await sleep(0);
    });
  });

  describe('GET /api/companies/:companyId/tools/runs/:runId/decisions (the run page)', () => {
    let a: Awaited<ReturnType<typeof agentInRun>>;
    let c: Client;
    const decisions = async (runId = a.runId, company = companyId) =>
      (await t.http.get(`/api/companies/${company}/tools/runs/${runId}/decisions`).expect(200)).body.decisions;
    /** a call as Claude Code makes it: its tool use id in `_meta` */
    const callAs = (toolUseId: string, name: string, args: Record<string, unknown>) =>
      c.callTool({ name, arguments: args, _meta: { 'claudecode/toolUseId': toolUseId } });

    beforeAll(async () => {
      a = await agentInRun(t, companyId);
      await profileFor(t, companyId, a.id, [
        { selectorType: 'connection', connectionId: connection.id, policy: 'allow' },
        { selectorType: 'tool_name', connectionId: connection.id, toolName: 'create_ticket', policy: 'ask' },
        { selectorType: 'tool_name', connectionId: connection.id, toolName: 'leak_header', policy: 'deny' },
      ]);
      c = await connect(a.headers);
    });

    it('a run without gateway calls has none; an allowed call ("Allowed") and a denied one ("Denied") are listed in order', async () => {
      expect(await decisions()).toEqual([]);
      expect(resultText(await callAs('toolu_01echo', 'remote__echo', { text: 'run page' }))).toBe('echo: run page');
      expect(resultText(await c.callTool({ name: 'remote__leak_header', arguments: {} }))).toContain('tool_denied');
      const [allowed, denied] = await decisions();
      expect(allowed).toMatchObject({
        // the run page pairs the decision with the transcript's tool call by Claude Code's tool use id
        invocation: {
          id: 'toolu_01echo',
          toolUseId: 'toolu_01echo',
          invocationId: expect.stringMatching(/^[0-9a-f-]{36}$/),
          runId: a.runId,
          agentId: a.id,
          connectionId: connection.id,
          toolName: 'echo',
          agentToolName: 'remote__echo',
          status: 'succeeded',
          approvalState: 'not_required',
          durationMs: expect.any(Number),
          resultBytes: expect.any(Number),
        },
        decision: 'allow',
        outcome: 'success',
        actionRequest: null,
        pendingAction: null,
        denialReason: null,
        reasonCode: null,
        latestAuditEvent: { eventType: 'call_completed' },
      });
      expect(allowed.auditEvents.map((e: { eventType: string }) => e.eventType)).toEqual([
        'policy_decision',
        'call_started',
        'call_completed',
      ]);
      expect(denied).toMatchObject({
        invocation: { toolUseId: null, toolName: 'leak_header', status: 'denied', durationMs: null },
        decision: 'deny',
        outcome: 'denied',
        reasonCode: 'tool_denied',
        denialReason: expect.stringContaining('tool profiles'),
      });
      expect(denied.invocation.id).toBe(denied.invocation.invocationId);
      // the activity record of the call names its invocation
      const [record] = await t.dataSource.query(`SELECT details FROM activity_log WHERE action = 'tool.called' AND run_id = $1`, [a.runId]);
      expect(record.details.invocationId).toBe(allowed.invocation.invocationId);
    });

    it('an "ask" call: "Needs approval" while pending, "Approved" once approved, "Executed" when the next call runs it', async () => {
      const title = { title: 'Run page approves' };
      expect(resultText(await callAs('toolu_02ask', 'remote__create_ticket', title))).toContain('approval_pending');
      const parked = (await decisions()).find((d: { invocation: { id: string } }) => d.invocation.id === 'toolu_02ask');
      expect(parked).toMatchObject({
        decision: 'require_approval',
        outcome: 'pending',
        reasonCode: 'approval_pending',
        invocation: { status: 'awaiting_approval', approvalState: 'pending' },
        actionRequest: { status: 'pending', arguments: title },
        pendingAction: { actionRequestId: parked.actionRequest.id, previewMarkdown: expect.stringContaining('create_ticket') },
        latestAuditEvent: { eventType: 'approval_requested', actionRequestId: parked.actionRequest.id },
      });
      await t.http.post(`/api/tool-gateway/action-requests/${parked.actionRequest.id}/approve`).send({ companyId }).expect(200);
      const approved = (await decisions()).find((d: { invocation: { id: string } }) => d.invocation.id === 'toolu_02ask');
      expect(approved).toMatchObject({
        pendingAction: null,
        actionRequest: { status: 'approved' },
        invocation: { approvalState: 'approved' },
      });
      expect(approved.latestAuditEvent).toMatchObject({ eventType: 'approval_resolved', actorUserId: expect.any(String) });
      expect(resultText(await callAs('toolu_03ask', 'remote__create_ticket', title))).toContain('"Run page approves"');
      const list = await decisions();
      const [first, ran] = ['toolu_02ask', 'toolu_03ask'].map((id) =>
        list.find((d: { invocation: { id: string } }) => d.invocation.id === id),
      );
      expect(first).toMatchObject({
        outcome: 'success',
        actionRequest: { status: 'executed' },
        invocation: { status: 'awaiting_approval' },
      });
      expect(ran).toMatchObject({
        decision: 'require_approval',
        outcome: 'success',
        pendingAction: null,
        actionRequest: { id: parked.actionRequest.id, status: 'executed' },
        invocation: { status: 'succeeded', approvalState: 'approved' },
      });
    });

    it('an "ask" call the board declines: "Denied" with the board’s reason, and so is the same call again in the run', async () => {
      const title = { title: 'Run page declines' };
      await callAs('toolu_04ask', 'remote__create_ticket', title);
      const { actionRequest } = (await decisions()).find((d: { invocation: { id: string } }) => d.invocation.id === 'toolu_04ask');
      await t.http.post(`/api/tool-gateway/action-requests/${actionRequest.id}/decline`).send({ reason: 'Not from this run' }).expect(200);
      expect(resultText(await callAs('toolu_05ask', 'remote__create_ticket', title))).toContain('tool_call_declined');
      const list = await decisions();
      for (const id of ['toolu_04ask', 'toolu_05ask'])
        expect(list.find((d: { invocation: { id: string } }) => d.invocation.id === id)).toMatchObject({
          decision: 'require_approval',
          outcome: 'denied',
          reasonCode: 'tool_call_declined',
          denialReason: 'Not from this run',
          pendingAction: null,
          invocation: { status: 'denied', approvalState: 'rejected' },
          actionRequest: { id: actionRequest.id, status: 'rejected' },
        });
      expect(remote.calls.filter((x) => x.args.title === 'Run page declines')).toEqual([]);
    });

    it('another company’s run, an unknown or malformed id: 404; agents (key or run token): 403', async () => {
      const other = await createCompany(t);
      const b = await agentInRun(t, other.id);
      const get = (company: string, runId: string) => t.http.get(`/api/companies/${company}/tools/runs/${runId}/decisions`);
      const notFound = await get(companyId, b.runId);
      expect([notFound.status, notFound.body.code]).toEqual([404, 'not_found']);
      await get(other.id, a.runId).expect(404);
      await get(companyId, '00000000-0000-4000-8000-000000000000').expect(404);
      await get(companyId, 'not-a-uuid').expect(404);
      expect(await decisions(b.runId, other.id)).toEqual([]);
      await get(companyId, a.runId).set('Authorization', `Bearer ${a.key}`).expect(403);
      await get(companyId, a.runId).set('Authorization', `Bearer ${a.runToken}`).expect(403);
    });
  });
});
