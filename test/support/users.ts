import { randomUUID } from 'node:crypto';
import { BoardClaimService } from '../../src/modules/users/board-claim.service';
import { createCompany, CompanyRecord, uniq } from './factories';
import { sqlAgent, sqlAgentKey } from './sql';
import type { TestApp } from './test-app';

export const AUTHENTICATED = { SERVICE_DEPLOYMENT_MODE: 'authenticated' };

export interface SignedInUser {
  id: string;
  email: string;
  password: string;
  slug: string;
  token: string;
}

export const auth = (token: string) => ({ Authorization: `Bearer ${token}` });

/** A new user through sign-up; returns its session token (usable as a bearer). */
export async function signUp(t: TestApp, extra: { email?: string; password?: string; name?: string } = {}): Promise<SignedInUser> {
  const email = extra.email ?? `${uniq('user')}@example.test`;
  const password = extra.password ?? `pw-${randomUUID()}`;
  const res = await t.http.post('/api/auth/sign-up/email').send({ email, password, name: extra.name ?? uniq('User') });
  if (res.status !== 201) throw new Error(`signUp: ${res.status} ${JSON.stringify(res.body)}`);
  return { id: res.body.user.id, email, password, slug: res.body.user.slug, token: res.body.token };
}

export async function signIn(t: TestApp, email: string, password: string): Promise<string> {
  const res = await t.http.post('/api/auth/sign-in/email').send({ email, password });
  if (res.status !== 200) throw new Error(`signIn: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.token;
}

const admins = new WeakMap<TestApp, SignedInUser>();

/** The instance owner of an authenticated test app: the first user, who claims the board through the API. */
export async function instanceAdmin(t: TestApp): Promise<SignedInUser> {
  const known = admins.get(t);
  if (known) return known;
  const user = await signUp(t, { name: 'Instance Owner' });
  const token = await t.app.get(BoardClaimService).issueIfUnowned();
  if (!token) throw new Error('instanceAdmin: the instance already has an owner');
  const res = await t.http.post(`/api/board-claim/${token}/claim`).set(auth(user.token));
  if (res.status !== 200) throw new Error(`claim: ${res.status} ${JSON.stringify(res.body)}`);
  admins.set(t, user);
  return user;
}

/** A company owned by a fresh signed-up user (the creator becomes owner). */
export async function ownedCompany(t: TestApp): Promise<{ company: CompanyRecord; owner: SignedInUser }> {
  const owner = await signUp(t);
  const company = await createCompany(t, {}, owner.token);
  return { company, owner };
}

/** A signed-up user with a membership of the given role (through the admin company-access route). */
export async function makeMember(t: TestApp, companyId: string, membershipRole = 'member'): Promise<SignedInUser & { memberId: string }> {
  const admin = await instanceAdmin(t);
  const user = await signUp(t);
  const res = await t.http
    .put(`/api/admin/users/${user.id}/company-access`)
    .set(auth(admin.token))
    .send({ companies: [{ companyId, membershipRole }] });
  if (res.status !== 200) throw new Error(`makeMember: ${res.status} ${JSON.stringify(res.body)}`);
  return { ...user, memberId: res.body.companies[0].membershipId };
}

/** A minimal agent row with an API key, by direct SQL. */
export async function insertAgentWithKey(
  t: TestApp,
  companyId: string,
  extra: { runtimeConfig?: Record<string, unknown>; status?: string } = {},
): Promise<{ agentId: string; token: string }> {
  const { id } = await sqlAgent(t, companyId, { runtimeConfig: {}, ...extra });
  return { agentId: id, token: await sqlAgentKey(t, companyId, id) };
}
