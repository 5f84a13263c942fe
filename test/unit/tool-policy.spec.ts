import { policyFor } from '../../src/modules/tools/tool-policy';
import type { ProfileEntry, ToolProfile } from '../../src/modules/tools/tool.types';

const at = new Date(0);
const profile = (id: string, defaultAction: 'allow' | 'deny' = 'deny'): ToolProfile => ({
  id,
  companyId: 'c',
  profileKey: id,
  name: id,
  description: null,
  status: 'active',
  defaultAction,
  metadata: {},
  createdAt: at,
  updatedAt: at,
});
const entry = (profileId: string, e: Partial<ProfileEntry> & Pick<ProfileEntry, 'selectorType' | 'policy'>): ProfileEntry => ({
  id: `${profileId}-${Math.random()}`,
  companyId: 'c',
  profileId,
  applicationId: null,
  connectionId: null,
  catalogEntryId: null,
  toolName: null,
  createdAt: at,
  updatedAt: at,
  ...e,
});
const tool = { applicationId: 'app', connectionId: 'conn', toolName: 'merge', catalogEntryId: 'cat' };

describe('policyFor: the policy of a tool for an agent', () => {
  it('denies without any profile, and a tool no entry names gets the default action', () => {
    expect(policyFor([], [], tool)).toBe('deny');
    expect(policyFor([profile('p')], [], tool)).toBe('deny');
    expect(policyFor([profile('p'), profile('q', 'allow')], [], tool)).toBe('allow');
  });

  it('the most specific entry decides: a tool before its connection before its application', () => {
    const p = profile('p');
    expect(policyFor([p], [entry('p', { selectorType: 'application', applicationId: 'app', policy: 'allow' })], tool)).toBe('allow');
    const conn = entry('p', { selectorType: 'connection', connectionId: 'conn', policy: 'allow' });
    expect(policyFor([p], [conn, entry('p', { selectorType: 'application', applicationId: 'app', policy: 'deny' })], tool)).toBe('allow');
    expect(
      policyFor([p], [conn, entry('p', { selectorType: 'tool_name', connectionId: 'conn', toolName: 'merge', policy: 'ask' })], tool),
    ).toBe('ask');
    expect(policyFor([p], [conn, entry('p', { selectorType: 'catalog_entry', catalogEntryId: 'cat', policy: 'deny' })], tool)).toBe('deny');
    // a tool name of any connection is less specific than one of this connection
    expect(
      policyFor(
        [p],
        [
          entry('p', { selectorType: 'tool_name', toolName: 'merge', policy: 'deny' }),
          entry('p', { selectorType: 'tool_name', connectionId: 'conn', toolName: 'merge', policy: 'allow' }),
        ],
        tool,
      ),
    ).toBe('allow');
  });

  it('among equally specific entries (of several profiles) the most restrictive wins', () => {
    const ps = [profile('p'), profile('q')];
    const e = (pid: string, policy: 'allow' | 'ask' | 'deny') => entry(pid, { selectorType: 'connection', connectionId: 'conn', policy });
    expect(policyFor(ps, [e('p', 'allow'), e('q', 'ask')], tool)).toBe('ask');
    expect(policyFor(ps, [e('p', 'deny'), e('q', 'allow')], tool)).toBe('deny');
  });

  it('ignores entries of profiles that do not apply and entries naming other tools', () => {
    const p = profile('p');
    expect(policyFor([p], [entry('other', { selectorType: 'connection', connectionId: 'conn', policy: 'allow' })], tool)).toBe('deny');
    expect(
      policyFor([p], [entry('p', { selectorType: 'tool_name', connectionId: 'conn', toolName: 'other', policy: 'allow' })], tool),
    ).toBe('deny');
    expect(policyFor([p], [entry('p', { selectorType: 'connection', connectionId: 'elsewhere', policy: 'allow' })], tool)).toBe('deny');
  });
});
