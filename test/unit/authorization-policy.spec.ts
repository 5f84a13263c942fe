import { classifyPolicy, combinedPolicy, policyOfContainer } from '../../src/modules/authorization/authorization-policy';
import { constraintCount, invalidScopeReason, isCompanyWide, parseScope, scopeMatches } from '../../src/modules/authorization/grant-scope';
import { ancestorsOf } from '../../src/modules/authorization/org-chart';

describe('authorization policy classification', () => {
  it.each([
    [undefined, 'none'],
    [null, 'none'],
    [{}, 'none'],
    [{ agentVisibility: { mode: 'private' } }, 'private'],
    [{ agentVisibility: { mode: 'public' } }, 'none'],
    [{ assignmentPolicy: { mode: 'protected' } }, 'protected'],
    [{ assignmentPolicy: { mode: 'open' } }, 'none'],
    [{ assignmentPolicy: { protectedAgentRequiresApproval: true } }, 'requires_approval'],
    [{ assignmentPolicy: { mode: 'protected', protectedAgentRequiresApproval: false } }, 'protected'],
    [{ protectedAgent: { requiresApproval: true } }, 'requires_approval'],
    [{ protectedAgent: { requiresApproval: false } }, 'none'],
    [{ agentVisibility: { mode: 'private' }, protectedAgent: { requiresApproval: true } }, 'requires_approval'],
    [{ somethingElse: true }, 'unclassifiable'],
    [{ assignmentPolicy: { mode: 'locked' } }, 'unclassifiable'],
    [{ agentVisibility: 'private' }, 'unclassifiable'],
    [{ protectedAgent: { requiresApproval: 'yes' } }, 'unclassifiable'],
    ['protected', 'unclassifiable'],
    [[], 'unclassifiable'],
  ])('classifies %j as %s', (policy, expected) => {
    expect(classifyPolicy(policy)).toBe(expected);
  });

  it('reads the block under authorizationPolicy of a container and combines the strictest', () => {
    expect(policyOfContainer({ enabled: false, authorizationPolicy: { assignmentPolicy: { mode: 'protected' } } })).toBe('protected');
    expect(policyOfContainer({ enabled: true })).toBe('none');
    expect(policyOfContainer(null)).toBe('none');
    expect(combinedPolicy({ authorizationPolicy: { agentVisibility: { mode: 'private' } } }, null, { authorizationPolicy: { x: 1 } })).toBe(
      'unclassifiable',
    );
    expect(combinedPolicy(undefined, { authorizationPolicy: { agentVisibility: { mode: 'private' } } })).toBe('private');
  });
});

describe('grant scopes', () => {
  const P = '11111111-1111-4111-8111-111111111111';
  const A = '22222222-2222-4222-8222-222222222222';
  const R = '33333333-3333-4333-8333-333333333333';

  it('treats absent and empty scopes as company-wide', () => {
    expect(isCompanyWide(undefined)).toBe(true);
    expect(isCompanyWide(null)).toBe(true);
    expect(isCompanyWide({})).toBe(true);
    expect(isCompanyWide([])).toBe(true);
    expect(isCompanyWide({ projectId: P })).toBe(false);
  });

  it('parses every scope key and the shorthands', () => {
    expect(parseScope({ projectId: P, projectIds: [R] })).toMatchObject({ projectIds: [P, R] });
    for (const key of ['agentId', 'assigneeAgentId', 'targetAgentId']) expect(parseScope({ [key]: A }).agentIds).toEqual([A]);
    for (const key of ['agentIds', 'assigneeAgentIds', 'targetAgentIds']) expect(parseScope({ [key]: [A] }).agentIds).toEqual([A]);
    for (const key of ['managerAgentId', 'subtreeRootAgentId', 'subtreeAgentId', 'rootAgentId'])
      expect(parseScope({ [key]: R }).subtreeRootIds).toEqual([R]);
    expect(parseScope(`project:${P}`).projectIds).toEqual([P]);
    expect(parseScope([`agent:${A}`, `subtree:${R}`])).toMatchObject({ agentIds: [A], subtreeRootIds: [R] });
    expect(parseScope({ scopes: [`project:${P}`] }).projectIds).toEqual([P]);
    expect(parseScope({ colour: 'red' }).unknown).toEqual(['colour']);
    expect(constraintCount(parseScope({}))).toBe(0);
  });

  it('matches project, agent and subtree constraints together', () => {
    expect(scopeMatches(parseScope({ projectId: P }), { projectId: P })).toBe(true);
    expect(scopeMatches(parseScope({ projectId: P }), { projectId: R })).toBe(false);
    expect(scopeMatches(parseScope({ projectId: P }), {})).toBe(false);
    expect(scopeMatches(parseScope(`agent:${A}`), { targetAgentId: A })).toBe(true);
    expect(scopeMatches(parseScope(`agent:${A}`), { targetAgentId: R })).toBe(false);
    expect(scopeMatches(parseScope(`subtree:${R}`), { targetAgentId: A, targetAncestors: [P, R] })).toBe(true);
    expect(scopeMatches(parseScope(`subtree:${R}`), { targetAgentId: R })).toBe(true);
    expect(scopeMatches(parseScope(`subtree:${R}`), { targetAgentId: A, targetAncestors: [P] })).toBe(false);
    expect(scopeMatches(parseScope({ projectId: P, agentId: A }), { projectId: P, targetAgentId: R })).toBe(false);
    expect(scopeMatches(parseScope({ projectId: P, colour: 'red' }), { projectId: P })).toBe(false);
    expect(scopeMatches(parseScope({}), { projectId: P })).toBe(false);
  });

  it('reports invalid scopes written through the API', () => {
    expect(invalidScopeReason(null)).toBeNull();
    expect(invalidScopeReason({ projectId: P })).toBeNull();
    expect(invalidScopeReason({ projectId: 'x' })).toContain('not a UUID');
    expect(invalidScopeReason('team:x')).toContain('unknown');
  });
});

describe('org chart', () => {
  it('walks reportsTo to the root and stops at a cycle', () => {
    const chart = new Map<string, string | null>([
      ['a', 'b'],
      ['b', 'c'],
      ['c', null],
      ['x', 'y'],
      ['y', 'x'],
    ]);
    expect(ancestorsOf('a', chart)).toEqual(['b', 'c']);
    expect(ancestorsOf('c', chart)).toEqual([]);
    expect(ancestorsOf('x', chart)).toEqual(['y']);
    expect(ancestorsOf('missing', chart)).toEqual([]);
  });
});
