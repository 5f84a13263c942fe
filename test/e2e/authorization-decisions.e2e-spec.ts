import { randomUUID } from 'node:crypto';
import type { Actor, AgentActor, BoardActor } from '../../src/common/auth/actor';
import { DomainError } from '../../src/common/errors/domain-error';
import { AuthorizationService } from '../../src/modules/authorization/authorization.service';
import { AuthzAction, AuthzRequest } from '../../src/modules/authorization/authorization.types';
import { createAgent } from '../support/agents';
import { createCompany } from '../support/factories';
import { createTestApp, TestApp } from '../support/test-app';

/** The decision service against a real database: one scenario per reason of the spec's table. */
describe('AuthorizationService.decide', () => {
  let t: TestApp;
  let authz: AuthorizationService;
  let companyId: string;
  let otherCompanyId: string;
  let ceo: string;
  let manager: string;
  let worker: string;
  let grandWorker: string;
  let peer: string;
  let creator: string;
  let otherAgent: string;

  const local: BoardActor = { kind: 'board', userId: 'local-board', isInstanceAdmin: true, source: 'local_implicit' };
  const user = (userId: string, isInstanceAdmin = false): BoardActor => ({ kind: 'board', userId, isInstanceAdmin, source: 'session' });
  const agent = (agentId: string, cid = companyId): AgentActor => ({ kind: 'agent', agentId, companyId: cid, source: 'api_key' });
  const decide = (actor: Actor | undefined, action: AuthzAction, extra: Partial<AuthzRequest> = {}) =>
    authz.decide({ actor, action, companyId, ...extra });
  const reason = async (...args: Parameters<typeof decide>) => (await decide(...args)).reason;

  const grant = (principalType: 'user' | 'agent', principalId: string, permissionKey: string, scope: unknown = null) =>
    t.dataSource.query(
      `INSERT INTO principal_permission_grants (company_id, principal_type, principal_id, permission_key, scope) VALUES ($1, $2, $3, $4, $5)`,
      [companyId, principalType, principalId, permissionKey, scope === null ? null : JSON.stringify(scope)],
    );
  const member = (principalType: 'user' | 'agent', principalId: string, role = 'member', status = 'active') =>
    t.dataSource.query(
      // agents are members from their creation: an upsert sets the role and status a test needs
      `INSERT INTO company_memberships (company_id, principal_type, principal_id, membership_role, status) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (company_id, principal_type, principal_id) DO UPDATE SET membership_role = EXCLUDED.membership_role, status = EXCLUDED.status`,
      [companyId, principalType, principalId, role, status],
    );
  const project = async (policy: unknown = null): Promise<string> =>
    (
      await t.dataSource.query(
        `INSERT INTO projects (company_id, name, url_key, execution_workspace_policy) VALUES ($1, 'P', $2, $3) RETURNING id`,
        [companyId, randomUUID(), policy === null ? null : JSON.stringify(policy)],
      )
    )[0].id;
  const restrictedAgent = async (extra: Record<string, unknown> = {}) =>
    (await createAgent(t, companyId, { role: 'engineer', ...extra })).id;

  beforeAll(async () => {
    t = await createTestApp();
    authz = t.app.get(AuthorizationService);
    companyId = (await createCompany(t)).id;
    otherCompanyId = (await createCompany(t)).id;
    ceo = (await createAgent(t, companyId, { role: 'ceo' })).id;
    manager = await restrictedAgent({ reportsTo: ceo });
    worker = await restrictedAgent({ reportsTo: manager });
    grandWorker = await restrictedAgent({ reportsTo: worker });
    peer = await restrictedAgent();
    creator = await restrictedAgent();
    await t.dataSource.query(`UPDATE agents SET permissions = '{"canCreateAgents":true}' WHERE id = $1`, [creator]);
    otherAgent = (await createAgent(t, otherCompanyId)).id;
    await member('user', 'u-member', 'member');
    await member('user', 'u-viewer', 'viewer');
    await member('user', 'u-inactive', 'member', 'inactive');
    await member('user', 'u-granted', 'viewer');
    await grant('user', 'u-granted', 'tasks:assign');
    await grant('user', 'u-granted', 'agents:create');
  });
  afterAll(() => t.close());

  describe('allow reasons', () => {
    it('allow_local_board: the implicit local board', async () => {
      expect(await decide(local, 'issue.assign', { targetAgentId: worker })).toEqual({ allowed: true, reason: 'allow_local_board' });
    });

    it('allow_instance_admin: instance admins bypass company checks', async () => {
      expect(await reason(user('admin', true), 'agent.create', { companyId: otherCompanyId })).toBe('allow_instance_admin');
    });

    it('allow_explicit_grant: a company-wide grant, and a scoped grant that matches', async () => {
      expect(await reason(user('u-granted'), 'issue.assign', { targetAgentId: worker })).toBe('allow_explicit_grant');
      expect(await reason(user('u-granted'), 'agent.create')).toBe('allow_explicit_grant');
      const p = await project();
      const a = await restrictedAgent();
      await grant('agent', a, 'tasks:assign_scope', `project:${p}`);
      expect(await reason(agent(a), 'issue.assign', { targetAgentId: peer, projectId: p })).toBe('allow_explicit_grant');
      expect(await reason(agent(a), 'issue.assign', { targetAgentId: peer, issue: { assigneeAgentId: null, projectId: p } })).toBe(
        'allow_explicit_grant',
      );
    });

    it('allow_explicit_grant: subtree and assignee scopes', async () => {
      const a = await restrictedAgent();
      await grant('agent', a, 'tasks:assign_scope', { subtreeRootAgentId: manager });
      expect(await reason(agent(a), 'issue.assign', { targetAgentId: grandWorker })).toBe('allow_explicit_grant');
      expect(await reason(agent(a), 'issue.assign', { targetAgentId: manager })).toBe('allow_explicit_grant');
      const b = await restrictedAgent();
      await grant('agent', b, 'tasks:assign_scope', { assigneeAgentIds: [peer] });
      expect(await reason(agent(b), 'issue.assign', { targetAgentId: peer })).toBe('allow_explicit_grant');
    });

    it('allow_legacy_agent_creator: the canCreateAgents flag and the CEO role', async () => {
      expect(await reason(agent(creator), 'agent.create')).toBe('allow_legacy_agent_creator');
      expect(await reason(agent(creator), 'issue.assign', { targetAgentId: peer })).toBe('allow_legacy_agent_creator');
      expect(await reason(agent(ceo), 'issue.assign', { targetAgentId: peer })).toBe('allow_legacy_agent_creator');
      expect(await reason(agent(ceo), 'agent.permissions.update', { targetAgentId: peer })).toBe('allow_legacy_agent_creator');
      expect(await reason(agent(creator), 'agent.config.read', { targetAgentId: peer })).toBe('allow_legacy_agent_creator');
    });

    it('allow_self: an agent on its own assignment or configuration', async () => {
      expect(await reason(agent(peer), 'issue.assign', { targetAgentId: peer })).toBe('allow_self');
      expect(await reason(agent(peer), 'agent.config.update', { targetAgentId: peer })).toBe('allow_self');
      expect(await reason(agent(peer), 'agent.config.read', { targetAgentId: peer })).toBe('allow_self');
    });

    it('allow_company_agent: the change leaves the issue without an agent assignee', async () => {
      expect(await reason(agent(peer), 'issue.assign', { issue: { id: randomUUID(), assigneeAgentId: worker } })).toBe(
        'allow_company_agent',
      );
    });

    it('allow_simple_company_member: any active non-viewer member may assign', async () => {
      expect(await reason(user('u-member'), 'issue.assign', { targetAgentId: worker })).toBe('allow_simple_company_member');
      expect(await reason(user('u-member'), 'issue.assign', { targetUserId: 'u-viewer' })).toBe('allow_simple_company_member');
      expect(await reason(user('u-viewer'), 'agent.config.read', { targetAgentId: worker })).toBe('allow_simple_company_member');
    });

    it('allow_manager_chain: the target reports (transitively) to the acting agent', async () => {
      expect(await reason(agent(manager), 'issue.assign', { targetAgentId: grandWorker })).toBe('allow_manager_chain');
      expect(await reason(agent(manager), 'agent.config.update', { targetAgentId: worker })).toBe('allow_manager_chain');
      expect(await reason(agent(manager), 'agent.lifecycle', { targetAgentId: grandWorker })).toBe('allow_manager_chain');
    });
  });

  describe('deny reasons', () => {
    it('deny_unauthenticated: no actor or no id', async () => {
      expect(await decide(undefined, 'issue.assign')).toEqual({ allowed: false, reason: 'deny_unauthenticated' });
      expect(await reason({ ...agent(peer), agentId: '' }, 'issue.assign')).toBe('deny_unauthenticated');
    });

    it('deny_company_boundary: another company, a foreign or inactive target', async () => {
      expect(await reason(agent(otherAgent, otherCompanyId), 'issue.assign', { targetAgentId: worker })).toBe('deny_company_boundary');
      expect(await reason(agent(ceo), 'issue.assign', { targetAgentId: otherAgent })).toBe('deny_company_boundary');
      expect(await reason(agent(ceo), 'issue.assign', { targetUserId: 'stranger' })).toBe('deny_company_boundary');
      expect(await reason(agent(ceo), 'issue.assign', { targetUserId: 'u-inactive' })).toBe('deny_company_boundary');
      expect(await reason(user('u-member'), 'issue.assign', { companyId: 'not-a-uuid' })).toBe('deny_company_boundary');
      const gone = await restrictedAgent();
      await t.dataSource.query(`UPDATE agents SET status = 'terminated' WHERE id = $1`, [gone]);
      expect(await reason(agent(ceo), 'issue.assign', { targetAgentId: gone })).toBe('deny_company_boundary');
      expect(await reason(agent(gone), 'agent.config.update', { targetAgentId: gone })).toBe('deny_company_boundary');
      const pending = await restrictedAgent();
      await t.dataSource.query(`UPDATE agents SET status = 'pending_approval' WHERE id = $1`, [pending]);
      expect(await reason(agent(ceo), 'issue.assign', { targetAgentId: pending })).toBe('deny_company_boundary');
    });

    it('deny_missing_membership: a user without an active membership, an agent with an inactive one', async () => {
      expect(await reason(user('nobody'), 'issue.assign', { targetAgentId: worker })).toBe('deny_missing_membership');
      expect(await reason(user('u-inactive'), 'agent.config.read', { targetAgentId: worker })).toBe('deny_missing_membership');
      const a = await restrictedAgent({ role: 'ceo' });
      await member('agent', a, 'member', 'inactive');
      expect(await reason(agent(a), 'issue.assign', { targetAgentId: worker })).toBe('deny_missing_membership');
    });

    it('deny_missing_grant: no grant and no implicit authority', async () => {
      expect(await reason(agent(peer), 'issue.assign', { targetAgentId: worker })).toBe('deny_missing_grant');
      expect(await reason(agent(worker), 'issue.assign', { targetAgentId: manager })).toBe('deny_missing_grant');
      expect(await reason(user('u-viewer'), 'issue.assign', { targetAgentId: worker })).toBe('deny_missing_grant');
      expect(await reason(user('u-member'), 'agent.create')).toBe('deny_missing_grant');
      expect(await reason(agent(peer), 'agent.create')).toBe('deny_missing_grant');
      expect(await reason(agent(peer), 'agent.config.read', { targetAgentId: worker })).toBe('deny_missing_grant');
      expect(await reason(agent(peer), 'agent.lifecycle', { targetAgentId: peer })).toBe('deny_missing_grant');
      expect(await reason(agent(creator), 'agent.permissions.update', { targetAgentId: peer })).toBe('deny_missing_grant');
      expect(await reason(agent(peer), 'environments.manage')).toBe('deny_missing_grant');
    });

    it('deny_missing_grant: tasks:assign_scope without a constraint grants nothing', async () => {
      const a = await restrictedAgent();
      await grant('agent', a, 'tasks:assign_scope', {});
      expect(await reason(agent(a), 'issue.assign', { targetAgentId: peer })).toBe('deny_missing_grant');
    });

    it('deny_policy_restricted: protected project, private or approval-requiring agent, issue policy, unclassifiable policy', async () => {
      const protectedProject = await project({ enabled: false, authorizationPolicy: { assignmentPolicy: { mode: 'protected' } } });
      expect(await reason(agent(ceo), 'issue.assign', { targetAgentId: worker, projectId: protectedProject })).toBe(
        'deny_policy_restricted',
      );
      expect(await reason(user('u-member'), 'issue.assign', { targetAgentId: worker, projectId: protectedProject })).toBe(
        'deny_policy_restricted',
      );
      // an explicit grant opens a protected target
      expect(await reason(user('u-granted'), 'issue.assign', { targetAgentId: worker, projectId: protectedProject })).toBe(
        'allow_explicit_grant',
      );

      const privateAgent = await restrictedAgent();
      await t.dataSource.query(`UPDATE agents SET permissions = $2 WHERE id = $1`, [
        privateAgent,
        JSON.stringify({ authorizationPolicy: { agentVisibility: { mode: 'private' } } }),
      ]);
      expect(await reason(agent(ceo), 'issue.assign', { targetAgentId: privateAgent })).toBe('deny_policy_restricted');
      expect(await reason(agent(creator), 'agent.config.update', { targetAgentId: privateAgent })).toBe('deny_policy_restricted');

      const approvalAgent = await restrictedAgent();
      await t.dataSource.query(`UPDATE agents SET permissions = $2 WHERE id = $1`, [
        approvalAgent,
        JSON.stringify({ authorizationPolicy: { protectedAgent: { requiresApproval: true } } }),
      ]);
      expect(await reason(user('u-granted'), 'issue.assign', { targetAgentId: approvalAgent })).toBe('deny_policy_restricted');

      const issue = (policy: unknown) => ({ id: randomUUID(), assigneeAgentId: null, executionPolicy: { authorizationPolicy: policy } });
      expect(
        await reason(user('u-granted'), 'issue.assign', {
          targetAgentId: worker,
          issue: issue({ assignmentPolicy: { protectedAgentRequiresApproval: true } }),
        }),
      ).toBe('deny_policy_restricted');
      expect(await reason(user('u-granted'), 'issue.assign', { targetAgentId: worker, issue: issue({ mystery: 1 }) })).toBe(
        'deny_policy_restricted',
      );
      expect(
        await reason(agent(manager), 'issue.assign', { targetAgentId: worker, issue: issue({ assignmentPolicy: { mode: 'protected' } }) }),
      ).toBe('deny_policy_restricted');
    });

    it('deny_scope: scoped grants that do not cover the project, assignee or subtree', async () => {
      const p1 = await project();
      const p2 = await project();
      const a = await restrictedAgent();
      await grant('agent', a, 'tasks:assign_scope', { projectIds: [p1] });
      expect(await reason(agent(a), 'issue.assign', { targetAgentId: peer, projectId: p2 })).toBe('deny_scope');
      expect(await reason(agent(a), 'issue.assign', { targetAgentId: peer })).toBe('deny_scope');
      const b = await restrictedAgent();
      await grant('agent', b, 'tasks:assign', `subtree:${worker}`);
      expect(await reason(agent(b), 'issue.assign', { targetAgentId: manager })).toBe('deny_scope');
      expect(await reason(agent(b), 'issue.assign', { targetAgentId: grandWorker })).toBe('allow_explicit_grant');
      const protectedProject = await project({ authorizationPolicy: { assignmentPolicy: { mode: 'protected' } } });
      expect(await reason(agent(a), 'issue.assign', { targetAgentId: peer, projectId: protectedProject })).toBe('deny_scope');
    });

    it('member administration keys: owners hold them by role, others need the grant, agents only by explicit grant', async () => {
      await member('user', 'u-owner', 'owner');
      expect(await reason(user('u-owner'), 'users.invite')).toBe('allow_explicit_grant');
      expect(await reason(user('u-owner'), 'joins.approve')).toBe('allow_explicit_grant');
      expect(await reason(user('u-member'), 'users.manage_permissions')).toBe('deny_missing_grant');
      await grant('agent', peer, 'users:invite');
      expect(await reason(agent(peer), 'users.invite')).toBe('allow_explicit_grant');
      expect(await reason(agent(peer), 'joins.approve')).toBe('deny_unsupported_action');
    });

    it('deny_unsupported_action: no permission mapping for the action and actor', async () => {
      expect(await reason(agent(ceo), 'users.invite')).toBe('deny_unsupported_action');
      expect(await reason(agent(ceo), 'joins.approve')).toBe('deny_unsupported_action');
      expect(await reason(user('u-granted'), 'secrets.read')).toBe('deny_unsupported_action');
      expect(await reason(agent(ceo), 'made.up' as AuthzAction)).toBe('deny_unsupported_action');
    });
  });

  it('assert() throws 403 { code: forbidden, reason } on deny and returns the decision on allow', async () => {
    await expect(authz.assert({ actor: local, action: 'agent.create', companyId })).resolves.toEqual({
      allowed: true,
      reason: 'allow_local_board',
    });
    const err = await authz
      .assert({ actor: agent(peer), action: 'issue.assign', companyId, targetAgentId: worker })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DomainError);
    expect(err).toMatchObject({ status: 403, code: 'forbidden', extra: { reason: 'deny_missing_grant' } });
  });
});
