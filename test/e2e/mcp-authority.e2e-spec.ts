import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { createCompany } from '../support/factories';
import { agentInRun, mcpClient, resultJson, resultText } from '../support/mcp';
import { sqlAgent } from '../support/sql';
import { createTestApp, type TestApp } from '../support/test-app';
import { auth, AUTHENTICATED, instanceAdmin, makeMember, signUp, type SignedInUser } from '../support/users';

/**
 * MCP tools/list shows only what the caller may do: a tool whose routes make an authorization
 * decision beyond the caller's kind (assigning an issue: tasks:assign, the manager chain, the CEO
 * role, a member's role) is listed only when that same decision allows the caller someone to
 * assign. A tool that is not listed, called anyway, is refused exactly as its REST route refuses.
 */
describe('/api/mcp: tools/list by the caller’s authority', () => {
  let t: TestApp;
  let owner: SignedInUser;
  let companyId: string;
  const clients: Client[] = [];
  const connect = async (headers: Record<string, string>) => {
    const c = await mcpClient(t, headers);
    clients.push(c);
    return c;
  };
  const names = async (c: Client) => (await c.listTools()).tools.map((x) => x.name);
  const ASSIGNING = ['assign_issue', 'delegate_issue'];
  const issue = async (title: string) =>
    (await t.http.post(`/api/companies/${companyId}/issues`).set(auth(owner.token)).send({ title, status: 'todo' }).expect(201)).body as {
      id: string;
      identifier: string;
    };
  const assigneeOf = async (id: string) =>
    (await t.dataSource.query(`SELECT assignee_agent_id FROM issues WHERE id = $1`, [id]))[0].assignee_agent_id as string | null;

  beforeAll(async () => {
    t = await createTestApp({ env: AUTHENTICATED, listen: true });
    await instanceAdmin(t);
    owner = await signUp(t);
    companyId = (await createCompany(t, {}, owner.token)).id;
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    await t?.close();
  });

  describe('agents', () => {
    it('list the assigning tools only when the assignment decision allows them someone: a grant, a report, the CEO role', async () => {
      await sqlAgent(t, companyId, { name: 'Colleague' });
      const plain = await agentInRun(t, companyId);
      const granted = await agentInRun(t, companyId);
      await t.http.patch(`/api/agents/${granted.id}/permissions`).set(auth(owner.token)).send({ canAssignTasks: true }).expect(200);
      const manager = await agentInRun(t, companyId);
      const report = await sqlAgent(t, companyId, { name: 'Report' });
      await t.dataSource.query(`UPDATE agents SET reports_to = $1 WHERE id = $2`, [manager.id, report.id]);
      const ceo = await agentInRun(t, companyId, { role: 'ceo' });

      const plainTools = await names(await connect(plain.headers));
      for (const n of ASSIGNING) expect(plainTools).not.toContain(n);
      // the rest of a run's tools stay
      expect(plainTools).toEqual(expect.arrayContaining(['whoami', 'checkout_issue', 'add_comment', 'update_issue', 'report_cost']));
      for (const a of [granted, manager, ceo]) expect(await names(await connect(a.headers))).toEqual(expect.arrayContaining(ASSIGNING));
      // an agent key without a run: the same decision for assign_issue
      expect(await names(await connect(auth(plain.key)))).not.toContain('assign_issue');
      expect(await names(await connect(auth(granted.key)))).toContain('assign_issue');
    });

    it('a hidden tool, called anyway, is refused as its REST route refuses it: same status, code and reason; nothing changes', async () => {
      const colleague = await sqlAgent(t, companyId, { name: 'Target' });
      const plain = await agentInRun(t, companyId);
      const target = await issue('Not yours to assign');
      const c = await connect(plain.headers);

      const viaMcp = await c.callTool({ name: 'assign_issue', arguments: { issueId: target.id, assigneeAgentId: colleague.id } });
      expect(viaMcp.isError).toBe(true);
      const viaRest = await t.http.patch(`/api/issues/${target.id}`).set(plain.headers).send({ assigneeAgentId: colleague.id });
      expect(viaRest.status).toBe(403);
      expect(viaRest.body).toMatchObject({ code: 'forbidden', reason: 'deny_missing_grant' });
      expect(resultText(viaMcp)).toMatch(/^Error 403 \(forbidden\): Not allowed: issue\.assign \(deny_missing_grant\)/);
      expect(JSON.parse(resultText(viaMcp).split('\n')[1])).toEqual(viaRest.body);
      expect(await assigneeOf(target.id)).toBeNull();

      const before = (await t.dataSource.query(`SELECT count(*)::int AS n FROM issues WHERE company_id = $1`, [companyId]))[0].n;
      const delegated = await c.callTool({
        name: 'delegate_issue',
        arguments: { title: 'Child', parentId: target.id, assigneeAgentId: colleague.id },
      });
      expect(resultText(delegated)).toMatch(/^Error 403 \(forbidden\)/);
      expect((await t.dataSource.query(`SELECT count(*)::int AS n FROM issues WHERE company_id = $1`, [companyId]))[0].n).toBe(before);

      // the caller the decision allows: the same call goes through
      const ceo = await agentInRun(t, companyId, { role: 'ceo' });
      const done = resultJson(
        await (
          await connect(ceo.headers)
        ).callTool({ name: 'assign_issue', arguments: { issueId: target.id, assigneeAgentId: colleague.id } }),
      );
      expect(done.assigneeAgentId).toBe(colleague.id);
    });
  });

  describe('board members', () => {
    it('a viewer is not listed assign_issue (a member is, and the owner); the viewer’s call is refused as REST refuses it', async () => {
      await sqlAgent(t, companyId, { name: 'Worker' });
      const viewer = await makeMember(t, companyId, 'viewer');
      const member = await makeMember(t, companyId, 'member');
      const viewerTools = await names(await connect(auth(viewer.token)));
      expect(viewerTools).not.toContain('assign_issue');
      // what the routes let a viewer do stays: reading, creating issues, commenting
      expect(viewerTools).toEqual(expect.arrayContaining(['list_companies', 'list_issues', 'read_issue', 'create_issue', 'add_comment']));
      expect(await names(await connect(auth(member.token)))).toContain('assign_issue');
      expect(await names(await connect(auth(owner.token)))).toContain('assign_issue');

      const target = await issue('Viewer tries');
      const viaMcp = await (
        await connect(auth(viewer.token))
      ).callTool({ name: 'assign_issue', arguments: { issueId: target.id, assigneeUserId: viewer.id } });
      const viaRest = await t.http.patch(`/api/issues/${target.id}`).set(auth(viewer.token)).send({ assigneeUserId: viewer.id });
      expect(viaRest.status).toBe(403);
      expect(resultText(viaMcp)).toMatch(/^Error 403 \(forbidden\)/);
      expect(JSON.parse(resultText(viaMcp).split('\n')[1])).toEqual(viaRest.body);
    });

    it('a person who may assign in one of their companies is listed the tool; in the other the route still refuses', async () => {
      const admin = await instanceAdmin(t);
      const other = (await createCompany(t, {}, owner.token)).id;
      const agentThere = await sqlAgent(t, other, { name: 'There' });
      const person = await makeMember(t, companyId, 'viewer');
      await t.http
        .put(`/api/admin/users/${person.id}/company-access`)
        .set(auth(admin.token))
        .send({
          companies: [
            { companyId, membershipRole: 'viewer' },
            { companyId: other, membershipRole: 'member' },
          ],
        })
        .expect(200);
      const c = await connect(auth(person.token));
      expect(await names(c)).toContain('assign_issue');
      const here = await issue('Viewer here');
      const refused = await c.callTool({ name: 'assign_issue', arguments: { issueId: here.id, assigneeUserId: person.id } });
      expect(resultText(refused)).toMatch(/^Error 403 \(forbidden\)/);
      const there = (
        await t.http
          .post(`/api/companies/${other}/issues`)
          .set(auth(owner.token))
          .send({ title: 'Member there', status: 'todo' })
          .expect(201)
      ).body;
      const ok = resultJson(await c.callTool({ name: 'assign_issue', arguments: { issueId: there.id, assigneeAgentId: agentThere.id } }));
      expect(ok.assigneeAgentId).toBe(agentThere.id);
    });
  });
});
