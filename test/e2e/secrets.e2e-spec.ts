import { randomBytes, randomUUID } from 'node:crypto';
import { createHash } from 'node:crypto';
import { bearer, createCompany } from '../support/factories';
import { createSecret, insertAgent } from '../support/secrets';
import { createTestApp, TestApp } from '../support/test-app';

const sha256 = (v: string) => createHash('sha256').update(v).digest('hex');

describe('secrets (board routes)', () => {
  let t: TestApp;
  beforeAll(async () => {
    process.env.SECRETS_E2E_ENV_VALUE = 'from-service-env-4242';
    t = await createTestApp();
  });
  afterAll(async () => {
    delete process.env.SECRETS_E2E_ENV_VALUE;
    await t.close();
  });

  describe('GET /api/companies/:companyId/secret-providers', () => {
    it('lists descriptors with local_encrypted, env and external stubs', async () => {
      const co = await createCompany(t);
      const res = await t.http.get(`/api/companies/${co.id}/secret-providers`).expect(200);
      expect(res.body).toEqual(
        expect.arrayContaining([
          { id: 'local_encrypted', label: expect.any(String), requiresExternalRef: false },
          { id: 'env', label: expect.any(String), requiresExternalRef: true },
          { id: 'vault', label: expect.any(String), requiresExternalRef: true },
        ]),
      );
    });

    it('answers 404 for an unknown company', async () => {
      await t.http.get(`/api/companies/${randomUUID()}/secret-providers`).expect(404);
    });
  });

  describe('POST /api/companies/:companyId/secrets', () => {
    it('creates version 1 with the default provider and returns metadata only', async () => {
      const co = await createCompany(t);
      const value = `plain-${randomUUID()}`;
      const res = await t.http
        .post(`/api/companies/${co.id}/secrets`)
        .send({ name: 'OPENAI_API_KEY', value, description: 'llm' })
        .expect(201);
      expect(res.body).toEqual({
        id: expect.any(String),
        companyId: co.id,
        name: 'OPENAI_API_KEY',
        key: 'OPENAI_API_KEY',
        scope: 'company',
        status: 'active',
        provider: 'local_encrypted',
        externalRef: null,
        latestVersion: 1,
        description: 'llm',
        createdByAgentId: null,
        createdByUserId: 'local-board',
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      });
      expect(res.text).not.toContain(value);
    });

    it('stores AES-256-GCM ciphertext with a 96-bit IV, auth tag, key fingerprint and SHA-256 of the value', async () => {
      const co = await createCompany(t);
      const s = await createSecret(t, co.id);
      const [v] = await t.dataSource.query(`SELECT * FROM company_secret_versions WHERE secret_id = $1`, [s.id]);
      expect(v.version).toBe(1);
      expect(v.iv).toHaveLength(12);
      expect(v.auth_tag).toHaveLength(16);
      expect(v.ciphertext.toString('utf8')).not.toContain(s.plaintext);
      expect(v.key_fingerprint).toBe(t.config.secretsMasterKeyFingerprint);
      expect(v.value_sha256).toBe(sha256(s.plaintext));
    });

    it('uses a fresh IV for every version even for the same value', async () => {
      const co = await createCompany(t);
      const s = await createSecret(t, co.id, { value: 'same-value-123' });
      await t.http.post(`/api/secrets/${s.id}/rotate`).send({ value: 'same-value-123' }).expect(200);
      const rows = await t.dataSource.query(`SELECT iv, ciphertext FROM company_secret_versions WHERE secret_id = $1 ORDER BY version`, [
        s.id,
      ]);
      expect(rows[0].iv.equals(rows[1].iv)).toBe(false);
      expect(rows[0].ciphertext.equals(rows[1].ciphertext)).toBe(false);
    });

    it('rejects a duplicate name in the same company with 409, allows it in another company', async () => {
      const co = await createCompany(t);
      const other = await createCompany(t);
      const s = await createSecret(t, co.id);
      const res = await t.http.post(`/api/companies/${co.id}/secrets`).send({ name: s.name, value: 'x-other' }).expect(409);
      expect(res.body.code).toBe('secret_name_taken');
      await t.http.post(`/api/companies/${other.id}/secrets`).send({ name: s.name, value: 'x-other' }).expect(201);
    });

    it('creates exactly one of 10 concurrent creates with the same name', async () => {
      const co = await createCompany(t);
      const results = await Promise.all(
        Array.from({ length: 10 }, (_, i) => t.http.post(`/api/companies/${co.id}/secrets`).send({ name: 'RACE', value: `v-${i}` })),
      );
      expect(results.filter((r) => r.status === 201)).toHaveLength(1);
      expect(results.filter((r) => r.status === 409)).toHaveLength(9);
    });

    it('validates the body (400)', async () => {
      const co = await createCompany(t);
      await t.http.post(`/api/companies/${co.id}/secrets`).send({ value: 'v' }).expect(400);
      await t.http.post(`/api/companies/${co.id}/secrets`).send({ name: 'N1' }).expect(400);
      await t.http.post(`/api/companies/${co.id}/secrets`).send({ name: 'N2', value: '' }).expect(400);
      await t.http.post(`/api/companies/${co.id}/secrets`).send({ name: 'N3', value: 42 }).expect(400);
      const unknown = await t.http.post(`/api/companies/${co.id}/secrets`).send({ name: 'N4', value: 'v', provider: 'nope' }).expect(400);
      expect(unknown.body.code).toBe('unknown_secret_provider');
    });

    it('rejects an unconfigured external provider with 422 secret_provider_not_configured', async () => {
      const co = await createCompany(t);
      const res = await t.http
        .post(`/api/companies/${co.id}/secrets`)
        .send({ name: 'V', value: 'v', provider: 'vault', externalRef: 'kv/x' })
        .expect(422);
      expect(res.body.code).toBe('secret_provider_not_configured');
    });

    it('env provider: requires externalRef, needs the variable set, stores no value', async () => {
      const co = await createCompany(t);
      await t.http.post(`/api/companies/${co.id}/secrets`).send({ name: 'E0', value: '', provider: 'env' }).expect(400);
      const missing = await t.http
        .post(`/api/companies/${co.id}/secrets`)
        .send({ name: 'E1', value: '', provider: 'env', externalRef: 'SECRETS_E2E_UNSET_VAR' })
        .expect(422);
      expect(missing.body.code).toBe('secret_external_ref_unresolvable');
      const ok = await t.http
        .post(`/api/companies/${co.id}/secrets`)
        .send({ name: 'E2', value: '', provider: 'env', externalRef: 'SECRETS_E2E_ENV_VALUE' })
        .expect(201);
      expect(ok.body).toMatchObject({ provider: 'env', externalRef: 'SECRETS_E2E_ENV_VALUE', latestVersion: 1 });
      const [v] = await t.dataSource.query(`SELECT ciphertext, value_sha256 FROM company_secret_versions WHERE secret_id = $1`, [
        ok.body.id,
      ]);
      expect(v.ciphertext).toBeNull();
      expect(v.value_sha256).toBe(sha256('from-service-env-4242'));
    });

    it('rejects agent tokens with 403 and changes nothing', async () => {
      const co = await createCompany(t);
      const agent = await insertAgent(t, co.id);
      await t.http.post(`/api/companies/${co.id}/secrets`).set(bearer(agent.token)).send({ name: 'X', value: 'v' }).expect(403);
      await t.http.get(`/api/companies/${co.id}/secrets`).set(bearer(agent.token)).expect(403);
      await t.http.get(`/api/companies/${co.id}/secret-providers`).set(bearer(agent.token)).expect(403);
      expect((await t.http.get(`/api/companies/${co.id}/secrets`).expect(200)).body).toEqual([]);
    });
  });

  describe('GET /api/companies/:companyId/secrets', () => {
    it("lists metadata newest first, only the company's own, without values", async () => {
      const co = await createCompany(t);
      const other = await createCompany(t);
      const a = await createSecret(t, co.id);
      const b = await createSecret(t, co.id);
      await createSecret(t, other.id);
      const res = await t.http.get(`/api/companies/${co.id}/secrets`).expect(200);
      expect(res.body.map((s: { id: string }) => s.id)).toEqual([b.id, a.id]);
      expect(res.text).not.toContain(a.plaintext);
      expect(res.text).not.toContain(b.plaintext);
      expect(Object.keys(res.body[0]).sort()).toEqual([
        'companyId',
        'createdAt',
        'createdByAgentId',
        'createdByUserId',
        'description',
        'externalRef',
        'id',
        'key',
        'latestVersion',
        'name',
        'provider',
        'scope',
        'status',
        'updatedAt',
      ]);
    });
  });

  describe('PATCH /api/secrets/:secretId', () => {
    it('changes metadata only, creating no version', async () => {
      const co = await createCompany(t);
      const s = await createSecret(t, co.id);
      const res = await t.http.patch(`/api/secrets/${s.id}`).send({ name: 'RENAMED', description: 'new' }).expect(200);
      expect(res.body).toMatchObject({ id: s.id, name: 'RENAMED', description: 'new', latestVersion: 1 });
      const [{ n }] = await t.dataSource.query(`SELECT count(*)::int AS n FROM company_secret_versions WHERE secret_id = $1`, [s.id]);
      expect(n).toBe(1);
    });

    it('ignores a value in the body (no new version, value unchanged)', async () => {
      const co = await createCompany(t);
      const s = await createSecret(t, co.id);
      await t.http.patch(`/api/secrets/${s.id}`).send({ value: 'sneaky' }).expect(200);
      const [v] = await t.dataSource.query(`SELECT value_sha256 FROM company_secret_versions WHERE secret_id = $1`, [s.id]);
      expect(v.value_sha256).toBe(sha256(s.plaintext));
    });

    it('rejects a rename onto an existing name with 409; same name is fine', async () => {
      const co = await createCompany(t);
      const s = await createSecret(t, co.id);
      const other = await createSecret(t, co.id);
      await t.http.patch(`/api/secrets/${s.id}`).send({ name: other.name }).expect(409);
      await t.http.patch(`/api/secrets/${s.id}`).send({ name: s.name }).expect(200);
    });

    it('answers 404 for unknown or malformed ids and 403 for agents', async () => {
      const co = await createCompany(t);
      const s = await createSecret(t, co.id);
      const agent = await insertAgent(t, co.id);
      await t.http.patch(`/api/secrets/${randomUUID()}`).send({ description: 'x' }).expect(404);
      await t.http.patch('/api/secrets/not-a-uuid').send({ description: 'x' }).expect(404);
      await t.http.patch(`/api/secrets/${s.id}`).set(bearer(agent.token)).send({ description: 'x' }).expect(403);
      await t.http.patch(`/api/secrets/${s.id}`).send({ name: '' }).expect(400);
    });
  });

  describe('POST /api/secrets/:secretId/rotate', () => {
    it('adds an immutable version on the same id; old versions remain', async () => {
      const co = await createCompany(t);
      const s = await createSecret(t, co.id);
      const res = await t.http.post(`/api/secrets/${s.id}/rotate`).send({ value: 'rotated-value-2' }).expect(200);
      expect(res.body).toMatchObject({ id: s.id, latestVersion: 2 });
      expect(res.text).not.toContain('rotated-value-2');
      const rows = await t.dataSource.query(
        `SELECT version, value_sha256 FROM company_secret_versions WHERE secret_id = $1 ORDER BY version`,
        [s.id],
      );
      expect(rows).toEqual([
        { version: 1, value_sha256: sha256(s.plaintext) },
        { version: 2, value_sha256: sha256('rotated-value-2') },
      ]);
      await expect(
        t.dataSource.query(`UPDATE company_secret_versions SET value_sha256 = 'x' WHERE secret_id = $1`, [s.id]),
      ).rejects.toThrow(/immutable/);
    });

    it('numbers 8 concurrent rotations 2..9 without gaps or collisions', async () => {
      const co = await createCompany(t);
      const s = await createSecret(t, co.id);
      const results = await Promise.all(
        Array.from({ length: 8 }, (_, i) => t.http.post(`/api/secrets/${s.id}/rotate`).send({ value: `v-${i}` })),
      );
      expect(results.every((r) => r.status === 200)).toBe(true);
      expect(results.map((r) => r.body.latestVersion).sort((a, b) => a - b)).toEqual([2, 3, 4, 5, 6, 7, 8, 9]);
    });

    it('keeps externalRef when omitted and replaces it when given (env provider)', async () => {
      const co = await createCompany(t);
      process.env.SECRETS_E2E_ENV_OTHER = 'other-env-value';
      const s = (
        await t.http
          .post(`/api/companies/${co.id}/secrets`)
          .send({ name: 'ENVREF', value: '', provider: 'env', externalRef: 'SECRETS_E2E_ENV_VALUE' })
          .expect(201)
      ).body;
      expect((await t.http.post(`/api/secrets/${s.id}/rotate`).send({ value: '' }).expect(200)).body.externalRef).toBe(
        'SECRETS_E2E_ENV_VALUE',
      );
      expect(
        (await t.http.post(`/api/secrets/${s.id}/rotate`).send({ value: '', externalRef: 'SECRETS_E2E_ENV_OTHER' }).expect(200)).body,
      ).toMatchObject({ externalRef: 'SECRETS_E2E_ENV_OTHER', latestVersion: 3 });
      delete process.env.SECRETS_E2E_ENV_OTHER;
    });

    it('requires a value (400), 404 for unknown secrets, 403 for agents', async () => {
      const co = await createCompany(t);
      const s = await createSecret(t, co.id);
      const agent = await insertAgent(t, co.id);
      await t.http.post(`/api/secrets/${s.id}/rotate`).send({}).expect(400);
      await t.http.post(`/api/secrets/${randomUUID()}/rotate`).send({ value: 'v' }).expect(404);
      await t.http.post(`/api/secrets/${s.id}/rotate`).set(bearer(agent.token)).send({ value: 'v' }).expect(403);
      expect((await t.http.get(`/api/companies/${co.id}/secrets`)).body[0].latestVersion).toBe(1);
    });
  });

  describe('DELETE /api/secrets/:secretId', () => {
    it('hard-deletes the secret and its versions', async () => {
      const co = await createCompany(t);
      const s = await createSecret(t, co.id);
      await t.http.post(`/api/secrets/${s.id}/rotate`).send({ value: 'v2-value' }).expect(200);
      await t.http.delete(`/api/secrets/${s.id}`).expect(200);
      expect(await t.dataSource.query(`SELECT 1 FROM company_secrets WHERE id = $1`, [s.id])).toHaveLength(0);
      expect(await t.dataSource.query(`SELECT 1 FROM company_secret_versions WHERE secret_id = $1`, [s.id])).toHaveLength(0);
      await t.http.delete(`/api/secrets/${s.id}`).expect(404);
    });

    it('rejects agents with 403', async () => {
      const co = await createCompany(t);
      const s = await createSecret(t, co.id);
      const agent = await insertAgent(t, co.id);
      await t.http.delete(`/api/secrets/${s.id}`).set(bearer(agent.token)).expect(403);
      await t.http
        .get(`/api/companies/${co.id}/secrets`)
        .expect(200)
        .expect((r) => expect(r.body).toHaveLength(1));
    });
  });

  describe('activity of secret mutations', () => {
    it('records create, update, rotate and delete without any value', async () => {
      const co = await createCompany(t);
      const s = await createSecret(t, co.id);
      await t.http.patch(`/api/secrets/${s.id}`).send({ description: 'd' }).expect(200);
      await t.http.post(`/api/secrets/${s.id}/rotate`).send({ value: 'rotation-plaintext-77' }).expect(200);
      await t.http.delete(`/api/secrets/${s.id}`).expect(200);
      const rows = await t.dataSource.query(
        `SELECT action, details FROM activity_log WHERE company_id = $1 AND entity_id = $2 ORDER BY created_at`,
        [co.id, s.id],
      );
      expect(rows.map((r: { action: string }) => r.action)).toEqual([
        'secret.created',
        'secret.updated',
        'secret.rotated',
        'secret.deleted',
      ]);
      const text = JSON.stringify(rows);
      expect(text).not.toContain(s.plaintext);
      expect(text).not.toContain('rotation-plaintext-77');
    });
  });
});

describe('secrets: master key', () => {
  it('a service with another master key refuses to decrypt with an error naming both fingerprints', async () => {
    const keyA = randomBytes(32).toString('hex');
    const a = await createTestApp({ env: { SERVICE_SECRETS_MASTER_KEY: keyA } });
    let databaseUrl: string;
    let secretId: string;
    let companyId: string;
    try {
      const co = await createCompany(a);
      companyId = co.id;
      secretId = (await createSecret(a, co.id)).id;
      databaseUrl = a.databaseUrl;
    } finally {
      await a.close();
    }
    const b = await createTestApp({ databaseUrl: databaseUrl!, env: { SERVICE_SECRETS_MASTER_KEY: randomBytes(32).toString('hex') } });
    try {
      const { SecretsService } = await import('../../src/modules/secrets/secrets.service');
      const err = (await b.app
        .get(SecretsService)
        .resolveValue(companyId!, secretId!, 'latest')
        .catch((e: unknown) => e)) as { code: string; message: string };
      expect(err.code).toBe('secret_master_key_mismatch');
      expect(err.message).toContain(b.config.secretsMasterKeyFingerprint);
      expect(err.message).toMatch(/fingerprint [0-9a-f]{16}/);
    } finally {
      await b.close();
    }
  });

  it('a tampered ciphertext fails authentication instead of yielding garbage', async () => {
    const t = await createTestApp();
    try {
      const co = await createCompany(t);
      const s = await createSecret(t, co.id);
      // versions are immutable: bypass the trigger to simulate tampering at rest
      await t.dataSource.query(`ALTER TABLE company_secret_versions DISABLE TRIGGER company_secret_versions_no_update`);
      await t.dataSource.query(
        `UPDATE company_secret_versions SET ciphertext = set_byte(ciphertext, 0, get_byte(ciphertext, 0) # 1) WHERE secret_id = $1`,
        [s.id],
      );
      const { SecretsService } = await import('../../src/modules/secrets/secrets.service');
      const err = (await t.app
        .get(SecretsService)
        .resolveValue(co.id, s.id, 1)
        .catch((e: unknown) => e)) as { code: string; message: string };
      expect(err.code).toBe('secret_decryption_failed');
      expect(err.message).toContain(t.config.secretsMasterKeyFingerprint);
    } finally {
      await t.close();
    }
  });
});

describe('secrets: deployment default provider', () => {
  it('uses SERVICE_SECRETS_DEFAULT_PROVIDER when valid, else local_encrypted', async () => {
    process.env.SECRETS_E2E_DEFAULT_ENV = 'default-env-value';
    const t = await createTestApp({ env: { SERVICE_SECRETS_DEFAULT_PROVIDER: 'env' } });
    const bad = await createTestApp({ env: { SERVICE_SECRETS_DEFAULT_PROVIDER: 'vault' } });
    try {
      const co = await createCompany(t);
      const withRef = await t.http
        .post(`/api/companies/${co.id}/secrets`)
        .send({ name: 'D1', value: '', externalRef: 'SECRETS_E2E_DEFAULT_ENV' })
        .expect(201);
      expect(withRef.body.provider).toBe('env');
      const noRef = await t.http.post(`/api/companies/${co.id}/secrets`).send({ name: 'D2', value: 'local-value' }).expect(201);
      expect(noRef.body.provider).toBe('local_encrypted');
      const co2 = await createCompany(bad);
      expect((await bad.http.post(`/api/companies/${co2.id}/secrets`).send({ name: 'D3', value: 'v' }).expect(201)).body.provider).toBe(
        'local_encrypted',
      );
    } finally {
      delete process.env.SECRETS_E2E_DEFAULT_ENV;
      await t.close();
      await bad.close();
    }
  });
});

describe('secrets: authenticated mode', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: { SERVICE_DEPLOYMENT_MODE: 'authenticated' } });
  });
  afterAll(() => t.close());

  it('answers 401 without credentials on every secrets route', async () => {
    const id = randomUUID();
    await t.http.get(`/api/companies/${id}/secret-providers`).expect(401);
    await t.http.get(`/api/companies/${id}/secrets`).expect(401);
    await t.http.post(`/api/companies/${id}/secrets`).send({ name: 'x', value: 'v' }).expect(401);
    await t.http.patch(`/api/secrets/${id}`).send({}).expect(401);
    await t.http.post(`/api/secrets/${id}/rotate`).send({ value: 'v' }).expect(401);
    await t.http.delete(`/api/secrets/${id}`).expect(401);
    await t.http.get('/api/agents/me/secrets').expect(401);
    await t.http.post('/api/agents/me/secrets/X/value').expect(401);
  });

  it('turns strict mode on by default', () => {
    expect(t.config.secretsStrictMode).toBe(true);
  });
});
