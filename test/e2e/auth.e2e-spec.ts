import { generateToken } from '../../src/common/auth/tokens';
import { BoardClaimService } from '../../src/modules/users/board-claim.service';
import { LOGIN_LIMITS, LoginRateLimiter } from '../../src/modules/users/login-rate-limiter';
import { createCompany, uniq } from '../support/factories';
import { createTestApp, TestApp } from '../support/test-app';
import { auth, AUTHENTICATED, insertAgentWithKey, instanceAdmin, makeMember, ownedCompany, signIn, signUp } from '../support/users';

describe('authentication (authenticated mode)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: AUTHENTICATED });
  });
  afterAll(() => t.close());

  describe('POST /api/auth/sign-up/email', () => {
    it('creates a user, signs it in with a cookie and a bearer token, and stores only an scrypt hash', async () => {
      const email = `${uniq('new')}@Example.test`;
      const res = await t.http
        .post('/api/auth/sign-up/email')
        .send({ email, password: 'correct horse battery', name: 'Ada Lovelace' })
        .expect(201);
      expect(res.body.user).toMatchObject({
        email: email.toLowerCase(),
        name: 'Ada Lovelace',
        slug: 'ada-lovelace',
        isInstanceAdmin: false,
      });
      expect(res.body.token).toMatch(/^svc_ss_/);
      expect(JSON.stringify(res.body)).not.toMatch(/correct horse|passwordHash|password_hash/);
      expect(res.headers['set-cookie'][0]).toMatch(/^svc_session=svc_ss_.*HttpOnly.*SameSite=Lax/i);
      const [row] = await t.dataSource.query(`SELECT password_hash FROM users WHERE id = $1`, [res.body.user.id]);
      expect(row.password_hash).toMatch(/^scrypt\$16384\$8\$1\$/);
      const [session] = await t.dataSource.query(`SELECT token_hash FROM user_sessions WHERE user_id = $1`, [res.body.user.id]);
      expect(session.token_hash).not.toContain(res.body.token);
    });

    it('rejects a taken email (case-insensitive) with 409', async () => {
      const u = await signUp(t);
      const res = await t.http
        .post('/api/auth/sign-up/email')
        .send({ email: u.email.toUpperCase(), password: 'another password' })
        .expect(409);
      expect(res.body.code).toBe('email_taken');
    });

    it('gives the same name a distinct slug', async () => {
      const a = await signUp(t, { name: 'Same Name' });
      const b = await signUp(t, { name: 'Same Name' });
      expect(a.slug).toBe('same-name');
      expect(b.slug).toBe('same-name-2');
    });

    it('rejects a bad email or a short password with 400', async () => {
      await t.http.post('/api/auth/sign-up/email').send({ email: 'nope', password: 'long enough pw' }).expect(400);
      const res = await t.http
        .post('/api/auth/sign-up/email')
        .send({ email: `${uniq('x')}@example.test`, password: 'short' })
        .expect(400);
      expect(res.body.code).toBe('validation_failed');
    });
  });

  describe('POST /api/auth/sign-in/email', () => {
    it('signs in with the right password and answers 401 for a wrong password or an unknown address', async () => {
      const u = await signUp(t);
      const token = await signIn(t, u.email.toUpperCase(), u.password);
      expect(token).toMatch(/^svc_ss_/);
      expect(token).not.toBe(u.token);
      const wrong = await t.http.post('/api/auth/sign-in/email').send({ email: u.email, password: 'wrong password' }).expect(401);
      const unknown = await t.http
        .post('/api/auth/sign-in/email')
        .send({ email: `${uniq('no')}@example.test`, password: 'whatever' })
        .expect(401);
      expect(wrong.body).toEqual(unknown.body);
      expect(wrong.body.code).toBe('invalid_credentials');
    });

    it('rejects a malformed body with 400', async () => {
      await t.http.post('/api/auth/sign-in/email').send({ email: 'a@b.test' }).expect(400);
      await t.http.post('/api/auth/sign-in/email').send({ email: 42, password: 'x' }).expect(400);
    });

    it(`locks an address after ${LOGIN_LIMITS.perIpAndEmail} attempts with 429 and Retry-After, even with the right password`, async () => {
      const u = await signUp(t);
      for (let i = 0; i < LOGIN_LIMITS.perIpAndEmail; i++) {
        await t.http.post('/api/auth/sign-in/email').send({ email: u.email, password: 'wrong password' }).expect(401);
      }
      const res = await t.http.post('/api/auth/sign-in/email').send({ email: u.email, password: u.password }).expect(429);
      expect(res.body.code).toBe('too_many_attempts');
      expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
    });

    it('a successful sign-in resets the address count', async () => {
      const u = await signUp(t);
      for (let i = 0; i < LOGIN_LIMITS.perIpAndEmail - 1; i++) {
        await t.http.post('/api/auth/sign-in/email').send({ email: u.email, password: 'wrong password' }).expect(401);
      }
      await signIn(t, u.email, u.password);
      for (let i = 0; i < LOGIN_LIMITS.perIpAndEmail - 1; i++) {
        await t.http.post('/api/auth/sign-in/email').send({ email: u.email, password: 'wrong password' }).expect(401);
      }
      await signIn(t, u.email, u.password);
    });

    it('lets exactly the allowed number of concurrent attempts through', async () => {
      const u = await signUp(t);
      const results = await Promise.all(
        Array.from({ length: 12 }, () => t.http.post('/api/auth/sign-in/email').send({ email: u.email, password: 'wrong password' })),
      );
      expect(results.filter((r) => r.status === 401)).toHaveLength(LOGIN_LIMITS.perIpAndEmail);
      expect(results.filter((r) => r.status === 429)).toHaveLength(12 - LOGIN_LIMITS.perIpAndEmail);
    });

    it(`limits one client IP to ${LOGIN_LIMITS.perIp} attempts across addresses`, async () => {
      const limiter = t.app.get(LoginRateLimiter);
      for (let i = 0; i < LOGIN_LIMITS.perIp; i++) await limiter.hit(`ip-test-${i}@example.test`, '203.0.113.9');
      await expect(limiter.hit('ip-test-last@example.test', '203.0.113.9')).rejects.toMatchObject({
        status: 429,
        code: 'too_many_attempts',
      });
      await expect(limiter.hit('ip-test-last@example.test', '203.0.113.10')).resolves.toBeUndefined();
    });

    it('with SERVICE_TRUST_PROXY off (the default), X-Forwarded-For does not change the client address', async () => {
      const u = await signUp(t);
      for (let i = 0; i < LOGIN_LIMITS.perIpAndEmail; i++) {
        await t.http
          .post('/api/auth/sign-in/email')
          .set('X-Forwarded-For', `198.51.100.${i + 1}`)
          .send({ email: u.email, password: 'wrong password' })
          .expect(401);
      }
      await t.http
        .post('/api/auth/sign-in/email')
        .set('X-Forwarded-For', '198.51.100.200')
        .send({ email: u.email, password: u.password })
        .expect(429);
    });

    describe('behind a trusted proxy (SERVICE_TRUST_PROXY=true)', () => {
      let proxied: TestApp;
      beforeAll(async () => {
        proxied = await createTestApp({ env: { ...AUTHENTICATED, SERVICE_TRUST_PROXY: 'true' }, databaseUrl: t.databaseUrl });
      });
      afterAll(() => proxied.close());
      const attempt = (ip: string, email: string, password: string) =>
        proxied.http.post('/api/auth/sign-in/email').set('X-Forwarded-For', ip).send({ email, password });

      it('a flood of wrong passwords from one address does not lock the owner out from another', async () => {
        const u = await signUp(t);
        const flood = [];
        for (let i = 0; i < 3 * LOGIN_LIMITS.perIpAndEmail; i++)
          flood.push((await attempt('203.0.113.66', u.email, 'wrong password')).status);
        expect(flood.filter((s) => s === 401)).toHaveLength(LOGIN_LIMITS.perIpAndEmail);
        expect(flood.filter((s) => s === 429)).toHaveLength(2 * LOGIN_LIMITS.perIpAndEmail);
        // the flooding address stays locked, even with the right password
        expect((await attempt('203.0.113.66', u.email, u.password)).status).toBe(429);
        const owner = await attempt('192.0.2.7', u.email, u.password);
        expect(owner.status).toBe(200);
        expect(owner.body.user.email).toBe(u.email);
      });

      it(`limits one address to ${LOGIN_LIMITS.perEmail} counted attempts from all client addresses together`, async () => {
        const u = await signUp(t);
        const perIp = LOGIN_LIMITS.perIpAndEmail;
        for (let n = 0; n < LOGIN_LIMITS.perEmail; n++) {
          const ip = `10.20.${Math.floor(n / perIp)}.1`;
          expect((await attempt(ip, u.email, 'wrong password')).status).toBe(401);
        }
        const res = await attempt('10.99.0.1', u.email, u.password);
        expect(res.status).toBe(429);
        expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
      });
    });

    it('counts attempts in the database, across instances of the service', async () => {
      const second = await createTestApp({ env: AUTHENTICATED, databaseUrl: t.databaseUrl });
      try {
        const u = await signUp(t);
        for (let i = 0; i < LOGIN_LIMITS.perIpAndEmail; i++) {
          const app = i % 2 ? second : t;
          await app.http.post('/api/auth/sign-in/email').send({ email: u.email, password: 'wrong password' }).expect(401);
        }
        await second.http.post('/api/auth/sign-in/email').send({ email: u.email, password: u.password }).expect(429);
      } finally {
        await second.close();
      }
    });
  });

  describe('sessions and GET /api/cli-auth/me', () => {
    it('accepts the session as bearer and as cookie', async () => {
      const u = await signUp(t);
      const bearer = await t.http.get('/api/cli-auth/me').set(auth(u.token)).expect(200);
      expect(bearer.body).toMatchObject({ persona: 'board', credential: 'session', user: { id: u.id, isInstanceAdmin: false } });
      const cookie = await t.http.get('/api/cli-auth/me').set('Cookie', `other=1; svc_session=${u.token}`).expect(200);
      expect(cookie.body.credential).toBe('session');
    });

    it('answers 401 without credentials, for unknown, expired and revoked sessions, and ignores a stale cookie', async () => {
      await t.http.get('/api/cli-auth/me').expect(401);
      await t.http
        .get('/api/cli-auth/me')
        .set(auth(generateToken('ss')))
        .expect(401);
      await t.http.get('/api/cli-auth/me').set(auth('not-a-token')).expect(401);
      const u = await signUp(t);
      await t.dataSource.query(`UPDATE user_sessions SET expires_at = now() - interval '1 second' WHERE user_id = $1`, [u.id]);
      await t.http.get('/api/cli-auth/me').set(auth(u.token)).expect(401);
      await t.http.get('/api/cli-auth/me').set('Cookie', `svc_session=${u.token}`).expect(401);
    });

    it('describes an agent key', async () => {
      const { company } = await ownedCompany(t);
      const agent = await insertAgentWithKey(t, company.id);
      const res = await t.http.get('/api/cli-auth/me').set(auth(agent.token)).expect(200);
      expect(res.body).toMatchObject({ persona: 'agent', credential: 'api_key', agent: { id: agent.agentId, companyId: company.id } });
    });
  });

  describe('POST /api/auth/sign-out', () => {
    it('revokes the session and clears the cookie', async () => {
      const u = await signUp(t);
      const res = await t.http.post('/api/auth/sign-out').set(auth(u.token)).expect(200);
      expect(res.body).toEqual({ success: true, revoked: true });
      expect(res.headers['set-cookie'][0]).toMatch(/^svc_session=;/);
      await t.http.get('/api/cli-auth/me').set(auth(u.token)).expect(401);
    });

    it('without a session only clears the cookie', async () => {
      const res = await t.http.post('/api/auth/sign-out').expect(200);
      expect(res.body).toEqual({ success: true, revoked: false });
    });
  });

  describe('GET /api/auth/get-session', () => {
    it('returns the session and user, or nulls without credentials', async () => {
      const u = await signUp(t);
      const res = await t.http.get('/api/auth/get-session').set(auth(u.token)).expect(200);
      expect(res.body).toMatchObject({ credential: 'session', user: { id: u.id, email: u.email }, session: { userId: u.id } });
      expect(new Date(res.body.session.expiresAt).getTime()).toBeGreaterThan(Date.now() + 29 * 24 * 3600_000);
      const none = await t.http.get('/api/auth/get-session').expect(200);
      expect(none.body).toEqual({ session: null, user: null, credential: null });
      const bad = await t.http
        .get('/api/auth/get-session')
        .set(auth(generateToken('ss')))
        .expect(200);
      expect(bad.body.user).toBeNull();
    });
  });

  describe('GET/PATCH /api/auth/profile', () => {
    it('reads and updates the caller profile; 401 without credentials', async () => {
      await t.http.get('/api/auth/profile').expect(401);
      const u = await signUp(t);
      const res = await t.http
        .patch('/api/auth/profile')
        .set(auth(u.token))
        .send({ name: 'Grace', bio: 'compilers', image: 'https://img.example/g.png' })
        .expect(200);
      expect(res.body).toMatchObject({ id: u.id, name: 'Grace', bio: 'compilers', image: 'https://img.example/g.png', email: u.email });
      const got = await t.http.get('/api/auth/profile').set(auth(u.token)).expect(200);
      expect(got.body.name).toBe('Grace');
      const cleared = await t.http.patch('/api/auth/profile').set(auth(u.token)).send({ image: null }).expect(200);
      expect(cleared.body.image).toBeNull();
      await t.http.patch('/api/auth/profile').set(auth(u.token)).send({ image: 'javascript:alert(1)' }).expect(400);
      await t.http.patch('/api/auth/profile').set(auth(u.token)).send({ name: '' }).expect(400);
    });

    it('rejects agents with 403', async () => {
      const { company } = await ownedCompany(t);
      const agent = await insertAgentWithKey(t, company.id);
      await t.http.get('/api/auth/profile').set(auth(agent.token)).expect(403);
    });
  });

  describe('board API tokens', () => {
    it('are shown once, stored hashed, act as their user, and stop working when revoked', async () => {
      const u = await signUp(t);
      const created = await t.http.post('/api/auth/board-tokens').set(auth(u.token)).send({ name: 'ci' }).expect(201);
      expect(created.body.token).toMatch(/^svc_bt_/);
      expect(created.body.tokenPrefix).toBe(created.body.token.slice(0, 12));
      const [row] = await t.dataSource.query(`SELECT token_hash FROM board_api_tokens WHERE id = $1`, [created.body.id]);
      expect(row.token_hash).not.toBe(created.body.token);
      const list = await t.http.get('/api/auth/board-tokens').set(auth(u.token)).expect(200);
      expect(list.body.map((x: { id: string }) => x.id)).toEqual([created.body.id]);
      expect(JSON.stringify(list.body)).not.toContain(created.body.token);
      const me = await t.http.get('/api/cli-auth/me').set(auth(created.body.token)).expect(200);
      expect(me.body).toMatchObject({ persona: 'board', credential: 'board_token', user: { id: u.id } });
      const other = await signUp(t);
      await t.http.post(`/api/auth/board-tokens/${created.body.id}/revoke`).set(auth(other.token)).expect(404);
      const revoked = await t.http.post(`/api/auth/board-tokens/${created.body.id}/revoke`).set(auth(u.token)).expect(200);
      expect(revoked.body.revokedAt).not.toBeNull();
      await t.http.get('/api/cli-auth/me').set(auth(created.body.token)).expect(401);
    });

    it('expire', async () => {
      const u = await signUp(t);
      const created = await t.http.post('/api/auth/board-tokens').set(auth(u.token)).send({ name: 'short', expiresInDays: 1 }).expect(201);
      await t.dataSource.query(`UPDATE board_api_tokens SET expires_at = now() - interval '1 second' WHERE id = $1`, [created.body.id]);
      await t.http.get('/api/cli-auth/me').set(auth(created.body.token)).expect(401);
      await t.http
        .get('/api/cli-auth/me')
        .set(auth(generateToken('bt')))
        .expect(401);
    });

    it('validate the body', async () => {
      const u = await signUp(t);
      await t.http.post('/api/auth/board-tokens').set(auth(u.token)).send({}).expect(400);
      await t.http.post('/api/auth/board-tokens').set(auth(u.token)).send({ name: 'x', expiresInDays: 0 }).expect(400);
      await t.http.post('/api/auth/board-tokens/not-a-uuid/revoke').set(auth(u.token)).expect(404);
    });
  });

  describe('tenancy', () => {
    it('makes a company creator its owner and keeps other users out (403) and lists only own companies', async () => {
      const a = await ownedCompany(t);
      const b = await ownedCompany(t);
      await t.http.get(`/api/companies/${a.company.id}`).set(auth(a.owner.token)).expect(200);
      const denied = await t.http.get(`/api/companies/${b.company.id}`).set(auth(a.owner.token)).expect(403);
      expect(denied.body.reason).toBe('deny_company_boundary');
      const list = await t.http.get('/api/companies').set(auth(a.owner.token)).expect(200);
      expect(list.body.map((c: { id: string }) => c.id)).toEqual([a.company.id]);
      const members = await t.http.get(`/api/companies/${a.company.id}/members`).set(auth(a.owner.token)).expect(200);
      expect(members.body).toEqual([expect.objectContaining({ principalId: a.owner.id, membershipRole: 'owner', status: 'active' })]);
    });

    it('an inactive membership loses access; an instance admin reaches every company', async () => {
      const { company } = await ownedCompany(t);
      const m = await makeMember(t, company.id);
      await t.http.get(`/api/companies/${company.id}`).set(auth(m.token)).expect(200);
      await t.dataSource.query(`UPDATE company_memberships SET status = 'inactive' WHERE id = $1`, [m.memberId]);
      await t.http.get(`/api/companies/${company.id}`).set(auth(m.token)).expect(403);
      const admin = await instanceAdmin(t);
      await t.http.get(`/api/companies/${company.id}`).set(auth(admin.token)).expect(200);
    });
  });

  describe('GET /api/companies/:companyId/users/:userSlug/profile', () => {
    it('shows a member profile by slug or id to members and agents of the company, without the email', async () => {
      const { company, owner } = await ownedCompany(t);
      const m = await makeMember(t, company.id, 'viewer');
      const res = await t.http.get(`/api/companies/${company.id}/users/${owner.slug}/profile`).set(auth(m.token)).expect(200);
      expect(res.body).toMatchObject({ id: owner.id, slug: owner.slug, membershipRole: 'owner', membershipStatus: 'active' });
      expect(res.body.email).toBeUndefined();
      await t.http.get(`/api/companies/${company.id}/users/${owner.id}/profile`).set(auth(m.token)).expect(200);
      const agent = await insertAgentWithKey(t, company.id);
      await t.http.get(`/api/companies/${company.id}/users/${m.slug}/profile`).set(auth(agent.token)).expect(200);
    });

    it('answers 404 for a user without a membership there, 403 for another company, 401 without credentials', async () => {
      const { company, owner } = await ownedCompany(t);
      const outsider = await ownedCompany(t);
      await t.http.get(`/api/companies/${company.id}/users/${outsider.owner.slug}/profile`).set(auth(owner.token)).expect(404);
      await t.http.get(`/api/companies/${company.id}/users/${owner.slug}/profile`).set(auth(outsider.owner.token)).expect(403);
      await t.http.get(`/api/companies/${company.id}/users/${owner.slug}/profile`).expect(401);
    });
  });
});

describe('board claim', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: AUTHENTICATED });
  });
  afterAll(() => t.close());

  it('issues a claim at start-up on an instance without an owner', async () => {
    const rows = await t.dataSource.query(`SELECT count(*)::int AS n FROM board_claims WHERE claimed_at IS NULL`);
    expect(rows[0].n).toBeGreaterThanOrEqual(1);
  });

  it('GET inspects, POST claim promotes the session user to owner once; then no new claims are issued', async () => {
    const claims = t.app.get(BoardClaimService);
    const token = (await claims.issueIfUnowned())!;
    const other = (await claims.issueIfUnowned())!;
    await t.http.get(`/api/board-claim/${generateToken('bc')}`).expect(404);
    const pending = await t.http.get(`/api/board-claim/${token}`).expect(200);
    expect(pending.body).toMatchObject({ status: 'pending', claimedAt: null, signedIn: false });
    await t.http.post(`/api/board-claim/${token}/claim`).expect(401);
    const u = await signUp(t);
    const bt = await t.http.post('/api/auth/board-tokens').set(auth(u.token)).send({ name: 'x' }).expect(201);
    const viaToken = await t.http.post(`/api/board-claim/${token}/claim`).set(auth(bt.body.token)).expect(403);
    expect(viaToken.body.code).toBe('session_required');
    const claimed = await t.http.post(`/api/board-claim/${token}/claim`).set(auth(u.token)).expect(200);
    expect(claimed.body).toMatchObject({ id: u.id, isInstanceAdmin: true, instanceRole: 'owner' });
    const again = await t.http.post(`/api/board-claim/${token}/claim`).set(auth(u.token)).expect(409);
    expect(again.body.code).toBe('claim_used');
    const second = await signUp(t);
    const owned = await t.http.post(`/api/board-claim/${other}/claim`).set(auth(second.token)).expect(409);
    expect(owned.body.code).toBe('instance_owned');
    expect((await t.http.get(`/api/board-claim/${token}`).expect(200)).body.status).toBe('claimed');
    expect(await claims.issueIfUnowned()).toBeUndefined();
    const me = await t.http.get('/api/cli-auth/me').set(auth(u.token)).expect(200);
    expect(me.body.user.isInstanceAdmin).toBe(true);
  });
});

describe('board claim under concurrency', () => {
  it('lets exactly one of two users claim the instance', async () => {
    const t = await createTestApp({ env: AUTHENTICATED });
    try {
      const claims = t.app.get(BoardClaimService);
      const [ta, tb] = [(await claims.issueIfUnowned())!, (await claims.issueIfUnowned())!];
      const [a, b] = [await signUp(t), await signUp(t)];
      const results = await Promise.all([
        t.http.post(`/api/board-claim/${ta}/claim`).set(auth(a.token)),
        t.http.post(`/api/board-claim/${tb}/claim`).set(auth(b.token)),
      ]);
      expect(results.map((r) => r.status).sort()).toEqual([200, 409]);
      const owners = await t.dataSource.query(`SELECT id FROM users WHERE instance_role IS NOT NULL`);
      expect(owners).toHaveLength(1);
    } finally {
      await t.close();
    }
  });
});

describe('authentication routes in local trusted mode', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it('the implicit board has a built-in profile, an admin identity and no session; its first profile edit stores it', async () => {
    const s = await t.http.get('/api/auth/get-session').expect(200);
    expect(s.body).toMatchObject({ session: null, credential: 'local_implicit', user: { id: 'local-board', isInstanceAdmin: true } });
    const p = await t.http.get('/api/auth/profile').expect(200);
    expect(p.body).toMatchObject({ id: 'local-board', name: 'Local board', isInstanceAdmin: true });
    const edited = await t.http.patch('/api/auth/profile').send({ name: 'Me' }).expect(200);
    expect(edited.body).toMatchObject({ id: 'local-board', name: 'Me', isInstanceAdmin: true });
    expect((await t.http.get('/api/auth/profile').expect(200)).body.name).toBe('Me');
  });

  it('board tokens are refused (409) and listed empty for the implicit board; companies get no owner membership', async () => {
    await t.http.post('/api/auth/board-tokens').send({ name: 'x' }).expect(409);
    expect((await t.http.get('/api/auth/board-tokens').expect(200)).body).toEqual([]);
    const c = await createCompany(t);
    expect((await t.http.get(`/api/companies/${c.id}/members`).expect(200)).body).toEqual([]);
  });

  it('sign-up and sign-in still work; a session then identifies its user', async () => {
    const u = await signUp(t);
    const me = await t.http.get('/api/cli-auth/me').set(auth(u.token)).expect(200);
    expect(me.body).toMatchObject({ credential: 'session', user: { id: u.id, isInstanceAdmin: false } });
    expect(await signIn(t, u.email, u.password)).toMatch(/^svc_ss_/);
  });

  it('no claim is issued at start-up', async () => {
    const rows = await t.dataSource.query(`SELECT count(*)::int AS n FROM board_claims`);
    expect(rows[0].n).toBe(0);
  });
});
