import { randomUUID } from 'node:crypto';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SERVICE_TOOLS, type ToolAudience } from '../../src/modules/mcp/service-tools';
import { createCompany } from '../support/factories';
import { agentInRun, mcpClient, resultJson, resultText } from '../support/mcp';
import { sqlAgent, sqlAgentKey, sqlRun } from '../support/sql';
import { createTestApp, TestApp } from '../support/test-app';

/**
 * /api/mcp through the official SDK's client: who sees which tools, tools carried out by the REST
 * routes they stand for (authorization, activity records naming the run, errors as tool errors),
 * and what the HTTP endpoint refuses.
 */
describe('/api/mcp: the service as an MCP server', () => {
  let t: TestApp;
  let companyId: string;
  const clients: Client[] = [];
  const connect = async (headers: Record<string, string> = {}) => {
    const c = await mcpClient(t, headers);
    clients.push(c);
    return c;
  };
  const names = async (c: Client) => (await c.listTools()).tools.map((x) => x.name).sort();
  const issue = async (title = 'MCP target', extra: Record<string, unknown> = {}) =>
    (
      await t.http
        .post(`/api/companies/${companyId}/issues`)
        .send({ title, status: 'todo', ...extra })
        .expect(201)
    ).body;

  beforeAll(async () => {
    t = await createTestApp({ listen: true });
    companyId = (await createCompany(t)).id;
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    await t.close();
  });

  describe('the HTTP endpoint', () => {
    it('refuses an invalid credential with 401 and another run’s id with 422, before any MCP message is read', async () => {
      const body = { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} };
      const accept = 'application/json, text/event-stream';
      await t.http.post('/api/mcp').set('Accept', accept).set('Authorization', 'Bearer svc_ak_nope').send(body).expect(401);
      const a = await agentInRun(t, companyId);
      const res = await t.http
        .post('/api/mcp')
        .set('Accept', accept)
        .set('Authorization', `Bearer ${a.runToken}`)
        .set('X-Service-Run-Id', randomUUID())
        .send(body);
      expect(res.status).toBe(422);
      expect(res.body.code).toBe('run_id_mismatch');
    });

    it('answers the local board only when addressed to this machine (DNS rebinding): 403 for another Host or Origin', async () => {
      const body = { jsonrpc: '2.0', id: 1, method: 'ping' };
      const accept = 'application/json, text/event-stream';
      const host = new URL(t.baseUrl!).host;
      const evil = await t.http.post('/api/mcp').set('Host', 'evil.example.com').set('Accept', accept).send(body);
      expect(evil.status).toBe(403);
      expect(evil.body.code).toBe('host_not_allowed');
      const evilOrigin = await t.http
        .post('/api/mcp')
        .set('Host', host)
        .set('Origin', 'http://evil.example.com')
        .set('Accept', accept)
        .send(body);
      expect(evilOrigin.status).toBe(403);
      const ok = await t.http.post('/api/mcp').set('Host', host).set('Origin', `http://${host}`).set('Accept', accept).send(body);
      expect(ok.status).toBe(200);
      expect(ok.body).toEqual({ jsonrpc: '2.0', id: 1, result: {} });
      // a caller with credentials is no rebinding victim: its Host is not checked
      const a = await agentInRun(t, companyId);
      await t.http.post('/api/mcp').set('Host', 'evil.example.com').set(a.headers).set('Accept', accept).send(body).expect(200);
    });

    it('is stateless: GET and DELETE are 405, no session id is given, and the JSON-RPC errors of a bad message are 4xx', async () => {
      await t.http.get('/api/mcp').expect(405);
      await t.http.delete('/api/mcp').expect(405);
      const init = await t.http
        .post('/api/mcp')
        .set('Accept', 'application/json, text/event-stream')
        .send({
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
        })
        .expect(200);
      expect(init.headers['mcp-session-id']).toBeUndefined();
      expect(init.body.result.serverInfo.name).toBe('agent-orchestration-service');
      expect(init.body.result.capabilities.tools).toBeDefined();
      await t.http.post('/api/mcp').set('Accept', 'application/json').send({ jsonrpc: '2.0', id: 1, method: 'ping' }).expect(406);
      const bad = await t.http.post('/api/mcp').set('Accept', 'application/json, text/event-stream').send({ not: 'json-rpc' });
      expect(bad.status).toBeGreaterThanOrEqual(400);
      expect(bad.status).toBeLessThan(500);
    });
  });

  describe('tools/list shows what the caller may do', () => {
    it('the local board: the board’s tools, no agent-only ones', async () => {
      const list = await names(await connect());
      expect(list).toEqual(
        expect.arrayContaining([
          'list_companies',
          'list_issues',
          'create_issue',
          'assign_issue',
          'add_comment',
          'list_runs',
          'cost_summary',
        ]),
      );
      expect(list).not.toContain('checkout_issue');
      expect(list).not.toContain('whoami');
      const tool = (await (await connect()).listTools()).tools.find((x) => x.name === 'list_issues')!;
      expect(tool.inputSchema.required).toContain('companyId');
    });

    it('an agent key without a run: the assistant tools an agent may call, no run-bound ones', async () => {
      const agent = await sqlAgent(t, companyId);
      const list = await names(await connect({ Authorization: `Bearer ${await sqlAgentKey(t, companyId, agent.id)}` }));
      expect(list).toEqual(expect.arrayContaining(['whoami', 'list_issues', 'create_issue', 'list_runs', 'cost_summary']));
      for (const n of ['checkout_issue', 'report_cost', 'list_companies', 'delegate_issue']) expect(list).not.toContain(n);
    });

    it('an agent in a run (run token): its own API as tools', async () => {
      // a CEO may assign (delegate_issue; without that authority it is not listed: mcp-authority spec)
      const a = await agentInRun(t, companyId, { role: 'ceo' });
      const c = await connect(a.headers);
      const list = await names(c);
      expect(list).toEqual(
        expect.arrayContaining([
          'whoami',
          'inbox',
          'checkout_issue',
          'release_issue',
          'read_issue',
          'add_comment',
          'update_issue',
          'write_document',
          'delegate_issue',
          'report_cost',
          'ask_board',
          'request_approval',
        ]),
      );
      for (const n of ['list_companies', 'create_issue', 'list_runs']) expect(list).not.toContain(n);
      const me = resultJson(await c.callTool({ name: 'whoami', arguments: {} }));
      expect(me.id).toBe(a.id);
      // an agent key with a verified run header is in a run too
      const keyed = await connect({ Authorization: `Bearer ${a.key}`, 'X-Service-Run-Id': a.runId });
      expect(await names(keyed)).toContain('checkout_issue');
    });

    it('each tool’s routes accept the callers it is shown to (the OpenAPI document’s x-callers)', async () => {
      const doc = (await t.http.get('/api/openapi.json').expect(200)).body as {
        paths: Record<string, Record<string, { 'x-callers'?: { callers?: string[]; runBound?: boolean } }>>;
      };
      const templates = Object.keys(doc.paths).map((p) => ({ p, re: new RegExp(`^${p.replace(/\{[^}]+\}/g, '[^/]+')}$`) }));
      const caller = { agentId: randomUUID(), companyId: randomUUID(), runId: randomUUID() };
      const args = { issueId: 'ENG-1', runId: randomUUID(), key: 'plan', companyId: randomUUID(), body: 'x', prompt: 'x', request: 'x' };
      for (const tool of SERVICE_TOOLS)
        for (const audience of tool.audiences as ToolAudience[])
          for (const r of tool.requests(args, { audience, ...caller })) {
            const path = r.url.split('?')[0];
            const match = templates.find((x) => x.re.test(path));
            expect({ tool: tool.name, path, found: !!match }).toEqual({ tool: tool.name, path, found: true });
            const op = doc.paths[match!.p][r.method.toLowerCase()];
            const callers = op?.['x-callers']?.callers ?? [];
            expect({ tool: tool.name, audience, callers }).toEqual({
              tool: tool.name,
              audience,
              callers: expect.arrayContaining([audience === 'board' ? 'board' : 'agent']),
            });
            if (op?.['x-callers']?.runBound) expect({ tool: tool.name, audience }).toEqual({ tool: tool.name, audience: 'run' });
          }
    });
  });

  describe('tools carry out their REST routes', () => {
    it('checkout then comment: the comment exists and its activity record names the run', async () => {
      const a = await agentInRun(t, companyId);
      const target = await issue('Check me out', { assigneeAgentId: a.id });
      const c = await connect(a.headers);
      const out = resultJson(await c.callTool({ name: 'checkout_issue', arguments: { issueId: target.identifier } }));
      expect(out).toMatchObject({ id: target.id, status: 'in_progress', checkoutRunId: a.runId });
      const comment = resultJson(
        await c.callTool({ name: 'add_comment', arguments: { issueId: target.id, body: 'Working on it via MCP' } }),
      );
      expect(comment).toMatchObject({ body: 'Working on it via MCP', authorAgentId: a.id });
      const comments = (await t.http.get(`/api/issues/${target.id}/comments`).expect(200)).body;
      expect(comments.map((x: { body: string }) => x.body)).toContain('Working on it via MCP');
      const records = await t.dataSource.query(
        `SELECT action, actor_type, actor_id, agent_id, run_id FROM activity_log WHERE company_id = $1 AND entity_id = $2 ORDER BY created_at`,
        [companyId, target.id],
      );
      expect(records).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ action: 'issue.checked_out', actor_type: 'agent', agent_id: a.id, run_id: a.runId }),
          expect.objectContaining({ action: 'issue.comment_added', actor_type: 'agent', agent_id: a.id, run_id: a.runId }),
        ]),
      );
      // read_issue shows the comment; update_issue closes it with a comment
      const read = resultJson(await c.callTool({ name: 'read_issue', arguments: { issueId: target.identifier } }));
      expect(read.comments.map((x: { body: string }) => x.body)).toContain('Working on it via MCP');
      const done = resultJson(
        await c.callTool({ name: 'update_issue', arguments: { issueId: target.id, status: 'done', comment: 'Done.' } }),
      );
      expect(done.status).toBe('done');
    });

    it('answers refusals as tool errors the model can act on: status, code and message', async () => {
      const a = await agentInRun(t, companyId);
      const other = await agentInRun(t, companyId);
      const held = await issue('Held elsewhere', { assigneeAgentId: other.id });
      resultJson(await (await connect(other.headers)).callTool({ name: 'checkout_issue', arguments: { issueId: held.id } }));
      const c = await connect(a.headers);
      const conflict = await c.callTool({ name: 'checkout_issue', arguments: { issueId: held.id } });
      expect(conflict.isError).toBe(true);
      expect(resultText(conflict)).toMatch(/^Error 409 \(/);
      const unknown = await c.callTool({ name: 'read_issue', arguments: { issueId: randomUUID() } });
      expect(unknown.isError).toBe(true);
      expect(resultText(unknown)).toMatch(/^Error 404 \(not_found\)/);
      const invalid = await c.callTool({ name: 'add_comment', arguments: { issueId: held.id } });
      expect(invalid.isError).toBe(true);
      expect(resultText(invalid)).toContain('validation_failed');
      expect(resultText(invalid)).toContain('body');
      const missing = await c.callTool({ name: 'no_such_tool', arguments: {} });
      expect(missing.isError).toBe(true);
      expect(resultText(missing)).toContain('tool_not_found');
      // a board-only tool is no tool for an agent
      const boardOnly = await c.callTool({ name: 'list_companies', arguments: {} });
      expect(resultText(boardOnly)).toContain('tool_not_found');
    });

    it('keeps tenants apart: another company’s issue is out of reach', async () => {
      const otherCo = await createCompany(t);
      const foreign = (await t.http.post(`/api/companies/${otherCo.id}/issues`).send({ title: 'Theirs', status: 'todo' }).expect(201)).body;
      const a = await agentInRun(t, companyId);
      const c = await connect(a.headers);
      for (const [name, args] of [
        ['read_issue', { issueId: foreign.id }],
        ['add_comment', { issueId: foreign.id, body: 'sneaky' }],
        ['checkout_issue', { issueId: foreign.id }],
      ] as const) {
        const r = await c.callTool({ name, arguments: args });
        expect({ name, isError: r.isError }).toEqual({ name, isError: true });
        expect(resultText(r)).toMatch(/^Error 40[34]/);
      }
      const comments = (await t.http.get(`/api/issues/${foreign.id}/comments`).expect(200)).body;
      expect(comments).toEqual([]);
    });

    it('gives the board its tools: list, create and assign issues, comment, runs and costs', async () => {
      const c = await connect();
      const companies = resultJson<Array<{ id: string }>>(await c.callTool({ name: 'list_companies', arguments: {} }));
      expect(companies.map((x) => x.id)).toContain(companyId);
      const agent = await sqlAgent(t, companyId);
      const created = resultJson(await c.callTool({ name: 'create_issue', arguments: { companyId, title: 'From my assistant' } }));
      const assigned = resultJson(
        await c.callTool({ name: 'assign_issue', arguments: { issueId: created.id, assigneeAgentId: agent.id } }),
      );
      expect(assigned.assigneeAgentId).toBe(agent.id);
      resultJson(await c.callTool({ name: 'add_comment', arguments: { issueId: created.id, body: 'From the board' } }));
      const listed = resultJson<Array<{ id: string }> | { items: Array<{ id: string }> }>(
        await c.callTool({ name: 'list_issues', arguments: { companyId, q: 'From my assistant' } }),
      );
      expect(JSON.stringify(listed)).toContain(created.id);
      const runId = await sqlRun(t, companyId, agent.id, { status: 'succeeded' });
      expect(resultJson(await c.callTool({ name: 'get_run', arguments: { runId } })).id).toBe(runId);
      expect(JSON.stringify(resultJson(await c.callTool({ name: 'list_runs', arguments: { companyId, agentId: agent.id } })))).toContain(
        runId,
      );
      const costs = resultJson(await c.callTool({ name: 'cost_summary', arguments: { companyId } }));
      expect(costs).toHaveProperty('summary');
      expect(costs).toHaveProperty('byAgent');
      const created2 = await t.dataSource.query(
        `SELECT actor_type, actor_id FROM activity_log WHERE entity_id = $1 AND action = 'issue.created'`,
        [created.id],
      );
      expect(created2).toEqual([{ actor_type: 'user', actor_id: 'local-board' }]);
    });
  });
});
