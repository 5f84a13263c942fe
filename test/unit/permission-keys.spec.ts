import { randomUUID } from 'node:crypto';
import { normalizeGrants, normalizeScope, ROLE_DEFAULT_GRANTS } from '../../src/modules/access/permission-keys';

describe('normalizeScope', () => {
  const id = randomUUID();

  it.each([
    [`project:${id}`, { projectId: id }],
    [`agent:${id}`, { agentId: id }],
    [`subtree:${id}`, { subtreeRootAgentId: id }],
  ])('expands the shorthand %s', (raw, expected) => {
    expect(normalizeScope(raw, 's')).toEqual(expected);
  });

  it('keeps recognised keys, lower-cases and de-duplicates ids, drops empty lists; empty is company-wide', () => {
    expect(normalizeScope({ projectIds: [id.toUpperCase(), id], managerAgentId: id, agentIds: [] }, 's')).toEqual({
      projectIds: [id],
      managerAgentId: id,
    });
    expect(normalizeScope({}, 's')).toBeNull();
    expect(normalizeScope(null, 's')).toBeNull();
  });

  it.each([['team:x'], [`project:nope`], [{ colour: 'red' }], [{ projectId: 'x' }], [{ projectIds: id }], [[id]], [42]])(
    'rejects %p',
    (raw) => {
      expect(() => normalizeScope(raw, 's')).toThrow(expect.objectContaining({ status: 400 }));
    },
  );
});

describe('normalizeGrants', () => {
  it('needs a scope constraint for tasks:assign_scope and folds duplicates', () => {
    expect(() => normalizeGrants([{ permissionKey: 'tasks:assign_scope' }])).toThrow(expect.objectContaining({ status: 400 }));
    expect(normalizeGrants([{ permissionKey: 'tasks:assign' }, { permissionKey: 'tasks:assign', scope: null }])).toEqual([
      { permissionKey: 'tasks:assign', scope: null },
    ]);
    expect(() => normalizeGrants([{ permissionKey: 'root' }])).toThrow(expect.objectContaining({ status: 400 }));
    expect(() => normalizeGrants({})).toThrow(expect.objectContaining({ status: 400 }));
  });
});

describe('role defaults', () => {
  it('owner and admin hold the management keys, operator tasks:assign, viewer and member nothing', () => {
    expect(ROLE_DEFAULT_GRANTS.owner).toContain('users:manage_permissions');
    expect(ROLE_DEFAULT_GRANTS.admin).toEqual(ROLE_DEFAULT_GRANTS.owner);
    expect(ROLE_DEFAULT_GRANTS.owner).not.toContain('tasks:assign_scope');
    expect(ROLE_DEFAULT_GRANTS.operator).toEqual(['tasks:assign']);
    expect(ROLE_DEFAULT_GRANTS.viewer).toEqual([]);
    expect(ROLE_DEFAULT_GRANTS.member).toEqual([]);
  });
});
