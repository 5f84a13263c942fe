import { randomUUID } from 'node:crypto';
import { bearer, createCompany } from '../support/factories';
import { createIssue, insertAgent } from '../support/issues';
import { dumpDatabase } from '../support/secrets';
import { createTestApp, TestApp } from '../support/test-app';
import { auth, AUTHENTICATED, insertAgentWithKey, makeMember, ownedCompany } from '../support/users';

const activity = async (t: TestApp, companyId: string) => (await t.http.get(`/api/companies/${companyId}/activity`).expect(200)).body;

/** User secrets, the providers' health and (read-only) configurations, and secret proposals. */
describe('secret vault: user secrets, providers, proposals', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  describe('user secrets', () => {
    it('a definition is declared once per key; each user sets, rotates and deletes their own value, never shown back', async () => {
      const co = await createCompany(t);
      const base = `/api/companies/${co.id}`;
      const def = (
        await t.http
          .post(`${base}/user-secret-definitions`)
          .send({ key: 'GITHUB_TOKEN', name: 'GitHub token', usageGuidance: 'for gh' })
          .expect(201)
      ).body;
      expect(def).toMatchObject({
        key: 'GITHUB_TOKEN',
        name: 'GitHub token',
        status: 'active',
        usageGuidance: 'for gh',
        provider: 'local_encrypted',
      });
      expect(
        (await t.http.post(`${base}/user-secret-definitions`).send({ key: 'GITHUB_TOKEN', name: 'again' }).expect(409)).body.code,
      ).toBe('user_secret_key_taken');
      await t.http.post(`${base}/user-secret-definitions`).send({ key: 'has space', name: 'x' }).expect(400);
      expect((await t.http.get(`${base}/user-secret-definitions`).expect(200)).body).toEqual([def]);
      expect((await t.http.get(`${base}/me/user-secrets`).expect(200)).body).toEqual([]);

      const needle = `ghp_${randomUUID()}`;
      const mine = (
        await t.http
          .post(`${base}/me/user-secrets`)
          .send({ definitionId: def.id, definitionKey: 'GITHUB_TOKEN', value: needle })
          .expect(201)
      ).body;
      expect(mine).toMatchObject({
        scope: 'user',
        ownerUserId: 'local-board',
        userSecretDefinitionId: def.id,
        key: 'GITHUB_TOKEN',
        latestVersion: 1,
      });
      await t.http.post(`${base}/me/user-secrets`).send({ definitionId: def.id, value: 'again' }).expect(409);
      await t.http.post(`${base}/me/user-secrets`).send({ definitionId: def.id, definitionKey: 'OTHER', value: 'x' }).expect(422);
      await t.http.post(`${base}/me/user-secrets`).send({ definitionId: randomUUID(), value: 'x' }).expect(404);
      // another company's definition is unknown here
      const other = await createCompany(t);
      const foreign = (
        await t.http.post(`/api/companies/${other.id}/user-secret-definitions`).send({ key: 'GITHUB_TOKEN', name: 'theirs' }).expect(201)
      ).body;
      await t.http.post(`${base}/me/user-secrets`).send({ definitionId: foreign.id, value: 'x' }).expect(404);
      await t.http.get(`${base}/user-secret-definitions/${foreign.id}/coverage`).expect(404);
      await t.http.post(`${base}/me/user-secrets`).send({ definitionId: def.id }).expect(400);
      const listed = await t.http.get(`${base}/me/user-secrets`).expect(200);
      expect(listed.body).toEqual([{ definition: def, secret: mine }]);
      const rotated = await t.http
        .post(`${base}/me/user-secrets/${mine.id}/rotate`)
        .send({ value: `${needle}-2` })
        .expect(200);
      expect(rotated.body.latestVersion).toBe(2);
      expect(
        (
          await t.http
            .patch(`${base}/me/user-secrets/${mine.id}`)
            .send({ value: `${needle}-3` })
            .expect(200)
        ).body.latestVersion,
      ).toBe(3);
      expect((await t.http.get(`${base}/user-secret-definitions/${def.id}/coverage`).expect(200)).body).toMatchObject({
        definitionId: def.id,
      });

      // the value is stored encrypted only: not in any response, activity record or database text
      const acts = await activity(t, co.id);
      expect(acts.map((a: { action: string }) => a.action)).toEqual(
        expect.arrayContaining(['user_secret_definition.created', 'user_secret.created', 'user_secret.rotated']),
      );
      const dump = await dumpDatabase(t);
      for (const text of [JSON.stringify(acts), listed.text, rotated.text, dump]) {
        expect(text).not.toContain(needle);
        expect(text).not.toContain(Buffer.from(needle).toString('hex'));
      }

      await t.http.patch(`${base}/user-secret-definitions/${def.id}`).send({ status: 'archived', description: 'old' }).expect(200);
      await t.http.patch(`${base}/user-secret-definitions/${def.id}`).send({ status: 'gone' }).expect(400);
      await t.http.delete(`${base}/me/user-secrets/${mine.id}`).expect(200);
      await t.http.delete(`${base}/me/user-secrets/${mine.id}`).expect(404);
      await t.http.delete(`${base}/user-secret-definitions/${def.id}`).expect(200);
      await t.http.get(`${base}/user-secret-definitions/${def.id}/coverage`).expect(404);
    });
  });

  describe('providers', () => {
    it('health: the local encrypted provider encrypts and decrypts a probe with the master key; configs list every provider read-only', async () => {
      const co = await createCompany(t);
      const health = (await t.http.get(`/api/companies/${co.id}/secret-providers/health`).expect(200)).body;
      const local = health.providers.find((p: { provider: string }) => p.provider === 'local_encrypted');
      expect(local).toMatchObject({
        status: 'ok',
        details: { keyFingerprint: t.config.secretsMasterKeyFingerprint, valuesUnderAnotherKey: 0 },
      });
      expect(local.backupGuidance.length).toBeGreaterThan(0);
      expect(health.providers.find((p: { provider: string }) => p.provider === 'vault')).toMatchObject({ status: 'warn' });

      // a value stored under another key shows as a warning
      const def = (await t.http.post(`/api/companies/${co.id}/user-secret-definitions`).send({ key: 'K', name: 'K' }).expect(201)).body;
      const v = (await t.http.post(`/api/companies/${co.id}/me/user-secrets`).send({ definitionId: def.id, value: 'v' }).expect(201)).body;
      await t.dataSource.query(`UPDATE user_secret_values SET key_fingerprint = 'another' WHERE id = $1`, [v.id]);
      const warned = (await t.http.get(`/api/companies/${co.id}/secret-providers/health`).expect(200)).body;
      expect(warned.providers.find((p: { provider: string }) => p.provider === 'local_encrypted')).toMatchObject({
        status: 'warn',
        details: { valuesUnderAnotherKey: 1 },
      });

      const configs = (await t.http.get(`/api/companies/${co.id}/secret-provider-configs`).expect(200)).body;
      expect(configs.find((c: { id: string }) => c.id === 'local_encrypted')).toMatchObject({
        provider: 'local_encrypted',
        status: 'ready',
        isDefault: true,
        builtIn: true,
        healthStatus: 'warn',
      });
      expect(configs.find((c: { id: string }) => c.id === 'aws_secrets_manager')).toMatchObject({ status: 'unavailable' });
      const check = (await t.http.post('/api/secret-provider-configs/local_encrypted/health').send({}).expect(200)).body;
      expect(check).toMatchObject({ configId: 'local_encrypted', provider: 'local_encrypted', status: 'ok' });
      await t.http.post('/api/secret-provider-configs/nope/health').send({}).expect(404);
      for (const req of [
        t.http.post(`/api/companies/${co.id}/secret-provider-configs`).send({ provider: 'local_encrypted', displayName: 'x' }),
        t.http.patch('/api/secret-provider-configs/local_encrypted').send({ status: 'disabled' }),
        t.http.delete('/api/secret-provider-configs/local_encrypted'),
        t.http.post('/api/secret-provider-configs/env/default').send({}),
      ]) {
        expect((await req.expect(422)).body.code).toBe('secret_provider_config_read_only');
      }
    });
  });

  describe('secret proposals', () => {
    it('an agent proposes, the board fills the value in and approves: a company secret exists, the proposal names it, activity written', async () => {
      const co = await createCompany(t);
      const agent = await insertAgent(t, co.id, { name: 'Proposer' });
      const issue = await createIssue(t, co.id);
      const base = `/api/companies/${co.id}/secret-proposals`;
      const proposal = (
        await t.http
          .post(base)
          .set(bearer(agent.token))
          .send({ name: 'STRIPE_KEY', description: 'test mode key', reason: 'to run the payment tests', issueId: issue.id })
          .expect(201)
      ).body;
      expect(proposal).toMatchObject({
        kind: 'secret',
        status: 'pending',
        proposedName: 'STRIPE_KEY',
        proposedDescription: 'test mode key',
        reason: 'to run the payment tests',
        proposedBy: { type: 'agent', id: agent.id, name: 'Proposer' },
        issueId: issue.id,
        hasValue: false,
        secretId: null,
      });
      expect((await t.http.post(base).set(bearer(agent.token)).send({ name: 'STRIPE_KEY' }).expect(409)).body.code).toBe(
        'secret_proposal_pending',
      );
      await t.http.post(base).set(bearer(agent.token)).send({}).expect(400);
      await t.http.post(base).set(bearer(agent.token)).send({ name: 'X', issueId: randomUUID() }).expect(422);
      expect((await t.http.get(base).expect(200)).body.map((p: { id: string }) => p.id)).toEqual([proposal.id]);
      expect((await t.http.get(base).set(bearer(agent.token)).expect(200)).body).toHaveLength(1);
      await t.http.post(`${base}/${proposal.id}/approve`).set(bearer(agent.token)).send({ value: 'x' }).expect(403);

      // no value given, none held: the board must fill it in
      expect((await t.http.post(`${base}/${proposal.id}/approve`).send({}).expect(422)).body.code).toBe('secret_proposal_value_required');
      const needle = `sk_test_${randomUUID()}`;
      const approved = await t.http
        .post(`${base}/${proposal.id}/approve`)
        .send({ value: needle, overrides: { description: 'Stripe test key' } })
        .expect(200);
      expect(approved.body).toMatchObject({
        status: 'approved',
        decidedByUserId: 'local-board',
        secret: { name: 'STRIPE_KEY', latestVersion: 1 },
      });
      expect(approved.body.secretId).toBe(approved.body.secret.id);
      const secrets = (await t.http.get(`/api/companies/${co.id}/secrets`).expect(200)).body;
      expect(secrets.find((s: { id: string }) => s.id === approved.body.secretId)).toMatchObject({ description: 'Stripe test key' });
      expect((await t.http.post(`${base}/${proposal.id}/approve`).send({ value: 'again' }).expect(409)).body.code).toBe(
        'secret_proposal_decided',
      );
      expect((await t.http.get(base).query({ status: 'approved' }).expect(200)).body).toHaveLength(1);
      expect((await t.http.get(base).expect(200)).body).toHaveLength(0);
      const acts = await activity(t, co.id);
      expect(acts.map((a: { action: string }) => a.action)).toEqual(
        expect.arrayContaining(['secret_proposal.created', 'secret_proposal.approved', 'secret.created']),
      );
      expect(JSON.stringify(acts)).not.toContain(needle);
      expect(approved.text).not.toContain(needle);
    });

    it("an agent's value is held encrypted, used on approval and wiped; reject wipes it too; names stay unique", async () => {
      const co = await createCompany(t);
      const agent = await insertAgent(t, co.id);
      const base = `/api/companies/${co.id}/secret-proposals`;
      const needle = `token-${randomUUID()}`;
      const held = (await t.http.post(base).set(bearer(agent.token)).send({ name: 'DEPLOY_TOKEN', value: needle }).expect(201)).body;
      expect(held.hasValue).toBe(true);
      expect(JSON.stringify(held)).not.toContain(needle);
      expect(await dumpDatabase(t)).not.toContain(needle);
      const ok = (
        await t.http
          .post(`${base}/${held.id}/approve`)
          .send({ overrides: { name: 'DEPLOY_TOKEN_PROD' } })
          .expect(200)
      ).body;
      expect(ok).toMatchObject({ proposedName: 'DEPLOY_TOKEN_PROD', hasValue: false, secret: { name: 'DEPLOY_TOKEN_PROD' } });
      const [{ ciphertext }] = await t.dataSource.query(`SELECT ciphertext FROM secret_proposals WHERE id = $1`, [held.id]);
      expect(ciphertext).toBeNull();
      const value = await t.app
        .get((await import('../../src/modules/secrets/secrets.service')).SecretsService)
        .resolveValue(co.id, ok.secretId, 'latest');
      expect(value.value).toBe(needle);

      const rejected = (await t.http.post(base).set(bearer(agent.token)).send({ name: 'OTHER', value: 'v' }).expect(201)).body;
      const r = (await t.http.post(`${base}/${rejected.id}/reject`).send({ reason: 'not needed' }).expect(200)).body;
      expect(r).toMatchObject({ status: 'rejected', decisionNote: 'not needed', hasValue: false, secretId: null });
      await t.http.post(`${base}/${rejected.id}/reject`).send({}).expect(409);
      // a taken secret name: 409, nothing decided
      const dup = (await t.http.post(base).send({ name: 'DEPLOY_TOKEN_PROD' }).expect(201)).body;
      expect((await t.http.post(`${base}/${dup.id}/approve`).send({ value: 'x' }).expect(409)).body.code).toBe('secret_name_taken');
      expect((await t.http.get(base).expect(200)).body.map((p: { id: string }) => p.id)).toEqual([dup.id]);
      await t.http.post(`${base}/${randomUUID()}/approve`).send({ value: 'x' }).expect(404);
      await t.http.get(base).query({ status: 'maybe' }).expect(400);
    });
  });
});

describe('secret vault: who may call it (authenticated mode)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: AUTHENTICATED });
  });
  afterAll(() => t.close());

  it('no credentials 401; agents are refused the board routes; another company 403; one user never sees another user value', async () => {
    const { company, owner } = await ownedCompany(t);
    const other = await ownedCompany(t);
    const member = await makeMember(t, company.id, 'member');
    const agent = await insertAgentWithKey(t, company.id);
    const base = `/api/companies/${company.id}`;
    for (const path of [
      'user-secret-definitions',
      'me/user-secrets',
      'secret-providers/health',
      'secret-provider-configs',
      'secret-proposals',
    ]) {
      await t.http.get(`${base}/${path}`).expect(401);
      await t.http.get(`${base}/${path}`).set(auth(owner.token)).expect(200);
      await t.http.get(`${base}/${path}`).set(auth(other.owner.token)).expect(403);
    }
    for (const path of ['user-secret-definitions', 'me/user-secrets', 'secret-providers/health', 'secret-provider-configs']) {
      await t.http.get(`${base}/${path}`).set(auth(agent.token)).expect(403);
    }
    const def = (await t.http.post(`${base}/user-secret-definitions`).set(auth(owner.token)).send({ key: 'PAT', name: 'PAT' }).expect(201))
      .body;
    const ownerValue = (
      await t.http.post(`${base}/me/user-secrets`).set(auth(owner.token)).send({ definitionId: def.id, value: 'a' }).expect(201)
    ).body;
    await t.http.post(`${base}/me/user-secrets`).set(auth(member.token)).send({ definitionId: def.id, value: 'b' }).expect(201);
    expect((await t.http.get(`${base}/me/user-secrets`).set(auth(member.token)).expect(200)).body).toHaveLength(1);
    await t.http.post(`${base}/me/user-secrets/${ownerValue.id}/rotate`).set(auth(member.token)).send({ value: 'x' }).expect(404);
    await t.http.delete(`${base}/me/user-secrets/${ownerValue.id}`).set(auth(member.token)).expect(404);
    expect((await t.http.get(`${base}/user-secret-definitions/${def.id}/coverage`).set(auth(owner.token)).expect(200)).body).toEqual({
      definitionId: def.id,
      configuredCount: 2,
      inactiveCount: 0,
      missingCount: 0,
    });
    const p = (await t.http.post(`${base}/secret-proposals`).set(auth(agent.token)).send({ name: 'NEEDED' }).expect(201)).body;
    await t.http.post(`${base}/secret-proposals/${p.id}/approve`).set(auth(other.owner.token)).send({ value: 'x' }).expect(403);
    await t.http
      .post(`/api/companies/${other.company.id}/secret-proposals/${p.id}/approve`)
      .set(auth(other.owner.token))
      .send({ value: 'x' })
      .expect(404);
  });
});
