import { execFileSync } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { DomainError } from '../../src/common/errors/domain-error';
import { redactValues } from '../../src/modules/secrets/secret-binding';
import { SecretBindingsService } from '../../src/modules/secrets/secret-bindings.service';
import { createCompany } from '../support/factories';
import {
  createSecret,
  dumpDatabase,
  finishRun,
  insertAgent,
  runHeaders,
  secretRef,
  setAgentEnv,
  SqlAgent,
  startRun,
} from '../support/secrets';
import { createTestApp, TestApp } from '../support/test-app';
import { tmpPath } from '../support/tmp';

const sha256 = (v: string) => createHash('sha256').update(v).digest('hex');

async function caught(p: Promise<unknown>): Promise<DomainError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(err instanceof DomainError)) throw new Error(`expected a DomainError, got ${String(err)}`);
  return err;
}

describe('secret bindings and run-bound access', () => {
  let t: TestApp;
  let bindings: SecretBindingsService;
  beforeAll(async () => {
    t = await createTestApp();
    bindings = t.app.get(SecretBindingsService);
  });
  afterAll(() => t.close());

  /** An agent bound to `env`, with a live run. */
  async function agentWithRun(
    companyId: string,
    env: Record<string, unknown>,
    opts: Parameters<typeof insertAgent>[2] = {},
    run: Parameters<typeof startRun>[2] = {},
  ) {
    const agent = await insertAgent(t, companyId, { ...opts, adapterConfig: { command: 'true', env } });
    const runId = await startRun(t, agent, run);
    return { agent, runId };
  }

  const list = (agent: SqlAgent, runId?: string) => t.http.get('/api/agents/me/secrets').set(runHeaders(agent, runId));
  const read = (agent: SqlAgent, runId: string | undefined, key: string) =>
    t.http.post(`/api/agents/me/secrets/${encodeURIComponent(key)}/value`).set(runHeaders(agent, runId));

  describe('SecretBindingsService.validateEnvBindings (agents and projects call it on save)', () => {
    it('normalises references (latest, delivery both, inferred projectionClass) and keeps inline values', async () => {
      const co = await createCompany(t);
      const s = await createSecret(t, co.id);
      const env = await bindings.validateEnvBindings(co.id, {
        OPENAI_API_KEY: secretRef(s.id),
        DB_URL: secretRef(s.id, 1, { delivery: 'api' }),
        CUSTOM: secretRef(s.id, 'latest', { delivery: 'env', projectionClass: 'certificate' }),
        PLAIN: 'inline-ok',
        PORT: 8080,
        WRAPPED: { type: 'plain', value: 'w' },
      });
      expect(env).toEqual({
        OPENAI_API_KEY: { type: 'secret_ref', secretId: s.id, version: 'latest', delivery: 'both', projectionClass: 'api_key' },
        DB_URL: { type: 'secret_ref', secretId: s.id, version: 1, delivery: 'api', projectionClass: 'connection_string' },
        CUSTOM: { type: 'secret_ref', secretId: s.id, version: 'latest', delivery: 'env', projectionClass: 'certificate' },
        PLAIN: 'inline-ok',
        PORT: 8080,
        WRAPPED: 'w',
      });
    });

    it("rejects another company's secret and unknown ids with 422 naming the field", async () => {
      const co = await createCompany(t);
      const other = await createCompany(t);
      const foreign = await createSecret(t, other.id);
      for (const id of [foreign.id, randomUUID(), 'not-a-uuid']) {
        const err = await caught(bindings.validateEnvBindings(co.id, { KEY: secretRef(id, 'latest') }, { field: 'adapterConfig.env' }));
        expect(err.status).toBe(422);
        expect(err.code).toBe('invalid_secret_reference');
        expect(err.extra.field).toBe('adapterConfig.env.KEY.secretId');
      }
    });

    it('rejects bad versions, deliveries, projection classes, fields and shapes', async () => {
      const co = await createCompany(t);
      const s = await createSecret(t, co.id);
      const cases: Array<[unknown, number, string]> = [
        [{ K: secretRef(s.id, 2) }, 422, 'env.K.version'],
        [{ K: { type: 'secret_ref', secretId: s.id, version: 0 } }, 400, 'env.K.version'],
        [{ K: { type: 'secret_ref', secretId: s.id, version: 'v1' } }, 400, 'env.K.version'],
        [{ K: { type: 'secret_ref', secretId: s.id, version: 1.5 } }, 400, 'env.K.version'],
        [{ K: secretRef(s.id, 'latest', { delivery: 'disk' }) }, 400, 'env.K.delivery'],
        [{ K: secretRef(s.id, 'latest', { projectionClass: 'raw' }) }, 400, 'env.K.projectionClass'],
        [{ K: secretRef(s.id, 'latest', { extra: 1 }) }, 400, 'env.K'],
        [{ K: { type: 'secret_ref' } }, 400, 'env.K.secretId'],
        [{ 'BAD-NAME': secretRef(s.id) }, 400, 'env.BAD-NAME'],
        [{ K: ['a'] }, 400, 'env.K'],
        [{ K: { other: 1 } }, 400, 'env.K'],
        [['x'], 400, 'env'],
      ];
      for (const [env, status, field] of cases) {
        const err = await caught(bindings.validateEnvBindings(co.id, env));
        expect({ status: err.status, field: err.extra.field }).toEqual({ status, field });
      }
    });

    it('accepts a numeric pin up to the latest version', async () => {
      const co = await createCompany(t);
      const s = await createSecret(t, co.id);
      await t.http.post(`/api/secrets/${s.id}/rotate`).send({ value: 'second' }).expect(200);
      await expect(bindings.validateEnvBindings(co.id, { K: secretRef(s.id, 2) })).resolves.toBeDefined();
    });

    it('strict mode rejects inline values for sensitive-looking keys, pointing to secret refs', async () => {
      const co = await createCompany(t);
      for (const key of ['OPENAI_API_KEY', 'GITHUB_TOKEN', 'CLIENT_SECRET', 'DB_PASSWORD', 'password']) {
        const err = await caught(bindings.validateEnvBindings(co.id, { [key]: 'sk-inline' }, { strict: true, field: 'adapterConfig.env' }));
        expect(err.status).toBe(422);
        expect(err.code).toBe('inline_secret_not_allowed');
        expect(err.message).toContain(`adapterConfig.env.${key}`);
        expect(err.message).toContain('secret_ref');
      }
      const s = await createSecret(t, co.id);
      await expect(
        bindings.validateEnvBindings(
          co.id,
          { OPENAI_API_KEY: secretRef(s.id), HOME_DIR: tmpPath(), KEYBOARD: 'x', EMPTY_TOKEN: '' },
          { strict: true },
        ),
      ).resolves.toBeDefined();
    });

    it('legacy: inline sensitive values remain accepted when strict mode is off (local trusted default)', async () => {
      const co = await createCompany(t);
      expect(t.config.secretsStrictMode).toBe(false);
      await expect(bindings.validateEnvBindings(co.id, { OPENAI_API_KEY: 'sk-inline' })).resolves.toEqual({ OPENAI_API_KEY: 'sk-inline' });
    });

    it('SERVICE_SECRETS_STRICT=true turns strict mode on in local trusted mode', async () => {
      const strict = await createTestApp({ env: { SERVICE_SECRETS_STRICT: 'true' } });
      try {
        const co = await createCompany(strict);
        const err = await caught(strict.app.get(SecretBindingsService).validateEnvBindings(co.id, { API_TOKEN: 'inline' }));
        expect(err.code).toBe('inline_secret_not_allowed');
      } finally {
        await strict.close();
      }
    });
  });

  describe('SecretBindingsService.normalizeSchemaConfig (format: "secret-ref" fields)', () => {
    const schema = {
      type: 'object',
      properties: {
        apiKey: { type: 'string', format: 'secret-ref' },
        model: { type: 'string' },
        auth: { type: 'object', properties: { password: { type: 'string', format: 'secret-ref' } } },
      },
    };

    it('stores raw values as new secrets and replaces them by their ids; keeps references and other fields', async () => {
      const co = await createCompany(t);
      const existing = await createSecret(t, co.id);
      const out = await bindings.normalizeSchemaConfig(co.id, schema, {
        apiKey: 'sk-raw-value-1',
        model: 'm',
        auth: { password: existing.id },
      });
      expect(out.model).toBe('m');
      expect(out.auth).toEqual({ password: existing.id });
      const created = await t.http.get(`/api/companies/${co.id}/secrets`).expect(200);
      const stored = created.body.find((s: { id: string }) => s.id === out.apiKey);
      expect(stored).toMatchObject({ latestVersion: 1, provider: 'local_encrypted' });
      expect(stored.name).toMatch(/^adapterConfig\.apiKey-/);
      const v = await t.app.get(SecretBindingsService).resolveBinding(co.id, {
        secretId: out.apiKey as string,
        versionSelector: 'latest',
        secret: { ...stored, createdAt: new Date(), updatedAt: new Date() },
      });
      expect(v.value).toBe('sk-raw-value-1');
    });

    it('rejects a UUID that is not a secret of the company (422)', async () => {
      const co = await createCompany(t);
      const other = await createCompany(t);
      const foreign = await createSecret(t, other.id);
      const err = await caught(bindings.normalizeSchemaConfig(co.id, schema, { auth: { password: foreign.id } }));
      expect(err.status).toBe(422);
      expect(err.extra.field).toBe('adapterConfig.auth.password');
    });
  });

  describe('SecretBindingsService.resolveForLaunch (called by the heartbeat engine before the process starts)', () => {
    it('injects env/both bindings decrypted plus inline values; api-only values are only redacted', async () => {
      const co = await createCompany(t);
      const both = await createSecret(t, co.id);
      const envOnly = await createSecret(t, co.id);
      const apiOnly = await createSecret(t, co.id);
      const agent = await insertAgent(t, co.id, {
        adapterConfig: {
          command: 'true',
          env: {
            BOTH: secretRef(both.id),
            ENV_ONLY: secretRef(envOnly.id, 1, { delivery: 'env' }),
            API_ONLY: secretRef(apiOnly.id, 'latest', { delivery: 'api' }),
            PLAIN: 'x',
            SERVICE_TOKEN: 'inline-token-1',
          },
        },
      });
      const launch = await bindings.resolveForLaunch(co.id, agent.id);
      expect(launch.env).toEqual({ BOTH: both.plaintext, ENV_ONLY: envOnly.plaintext, PLAIN: 'x', SERVICE_TOKEN: 'inline-token-1' });
      expect(launch.redactValues.sort()).toEqual([both.plaintext, envOnly.plaintext, apiOnly.plaintext, 'inline-token-1'].sort());
      expect(launch.bindings).toEqual(
        expect.arrayContaining([
          { key: 'BOTH', secretName: both.name, version: 1, delivery: 'both', projectionClass: 'generic' },
          { key: 'ENV_ONLY', secretName: envOnly.name, version: 1, delivery: 'env', projectionClass: 'generic' },
        ]),
      );
    });

    it('a process launched with the env receives the secret (it prints only its hash); logs are redacted', async () => {
      const co = await createCompany(t);
      const s = await createSecret(t, co.id);
      const agent = await insertAgent(t, co.id, { adapterConfig: { command: 'sh', env: { DELIVERED_SECRET: secretRef(s.id) } } });
      const launch = await bindings.resolveForLaunch(co.id, agent.id);
      const hash = execFileSync('sh', ['-c', 'printf %s "$DELIVERED_SECRET" | sha256sum | cut -d" " -f1'], {
        env: { PATH: process.env.PATH, ...launch.env },
      })
        .toString()
        .trim();
      expect(hash).toBe(sha256(s.plaintext));
      const careless = execFileSync('sh', ['-c', 'echo "debug: $DELIVERED_SECRET"'], {
        env: { PATH: process.env.PATH, ...launch.env },
      }).toString();
      expect(redactValues(careless, launch.redactValues)).toBe('debug: [redacted]\n');
    });

    it('latest follows rotation; a numeric pin keeps its version', async () => {
      const co = await createCompany(t);
      const s = await createSecret(t, co.id);
      const agent = await insertAgent(t, co.id, {
        adapterConfig: { env: { FOLLOW: secretRef(s.id, 'latest'), PINNED: secretRef(s.id, 1) } },
      });
      await t.http.post(`/api/secrets/${s.id}/rotate`).send({ value: 'rotated-v2' }).expect(200);
      const launch = await bindings.resolveForLaunch(co.id, agent.id);
      expect(launch.env).toEqual({ FOLLOW: 'rotated-v2', PINNED: s.plaintext });
    });

    it('fails with secret_not_found naming the binding when the secret was deleted', async () => {
      const co = await createCompany(t);
      const s = await createSecret(t, co.id);
      const agent = await insertAgent(t, co.id, { adapterConfig: { env: { GONE: secretRef(s.id) } } });
      await t.http.delete(`/api/secrets/${s.id}`).expect(200);
      const err = await caught(bindings.resolveForLaunch(co.id, agent.id));
      expect(err.code).toBe('secret_not_found');
      expect(err.extra.key).toBe('GONE');
      expect(err.message).toContain('GONE');
    });

    it("never resolves a reference to another company's secret stored behind validation's back", async () => {
      const co = await createCompany(t);
      const other = await createCompany(t);
      const foreign = await createSecret(t, other.id);
      const agent = await insertAgent(t, co.id, { adapterConfig: { env: { FOREIGN: secretRef(foreign.id) } } });
      const err = await caught(bindings.resolveForLaunch(co.id, agent.id));
      expect(err.code).toBe('secret_not_found');
      expect(err.message).not.toContain(foreign.plaintext);
    });

    it("merges the run's project env under the agent's own env", async () => {
      const co = await createCompany(t);
      const p1 = await createSecret(t, co.id);
      const a1 = await createSecret(t, co.id);
      const [project] = await t.dataSource.query(
        `INSERT INTO projects (company_id, name, url_key, env) VALUES ($1, 'P', 'p', $2) RETURNING id`,
        [co.id, JSON.stringify({ PROJECT_ONLY: secretRef(p1.id), SHARED: 'project-inline', OVERRIDDEN: secretRef(p1.id) })],
      );
      const agent = await insertAgent(t, co.id, { adapterConfig: { env: { SHARED: secretRef(a1.id), OVERRIDDEN: 'agent-inline' } } });
      const launch = await bindings.resolveForLaunch(co.id, agent.id, { projectId: project.id });
      expect(launch.env).toEqual({ PROJECT_ONLY: p1.plaintext, SHARED: a1.plaintext, OVERRIDDEN: 'agent-inline' });
    });
  });

  describe('GET /api/agents/me/secrets', () => {
    it('rejects board callers, agents without a run, and finished or foreign runs', async () => {
      const co = await createCompany(t);
      const s = await createSecret(t, co.id);
      const { agent, runId } = await agentWithRun(co.id, { S: secretRef(s.id) });
      const peer = await agentWithRun(co.id, {});
      await t.http.get('/api/agents/me/secrets').expect(403);
      await list(agent).expect(403);
      await list(agent, peer.runId).expect(403);
      await finishRun(t, runId);
      await list(agent, runId).expect(403);
    });

    it('lists granted entries without values, secret ids or config paths', async () => {
      const co = await createCompany(t);
      const s = await createSecret(t, co.id, { description: 'granted one' });
      const { agent, runId } = await agentWithRun(co.id, { GRANTED_SECRET: secretRef(s.id, 'latest'), PLAIN: 'inline' });
      const res = await list(agent, runId).expect(200);
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.body).toEqual({
        secrets: [
          {
            // the alias is the secret's key (its name), not the variable that binds it (SPEC: the config path is omitted)
            key: s.name,
            name: s.name,
            description: 'granted one',
            delivery: 'both',
            projectionClass: 'generic',
            latestVersion: 1,
            versionSelector: 'latest',
            resolvedVersion: 1,
          },
        ],
      });
      expect(res.text).not.toContain(s.plaintext);
      expect(res.text).not.toContain(s.id);
      expect(res.text).not.toContain('GRANTED_SECRET');
    });

    it('grants a secret bound by several variables once, under its own alias, deliveries added up', async () => {
      const co = await createCompany(t);
      const s = await createSecret(t, co.id);
      const { agent, runId } = await agentWithRun(co.id, {
        FIRST_VAR: secretRef(s.id, 'latest', { delivery: 'env' }),
        SECOND_VAR: secretRef(s.id, 'latest', { delivery: 'api' }),
      });
      const res = await list(agent, runId).expect(200);
      expect(res.body.secrets).toEqual([expect.objectContaining({ key: s.name, delivery: 'both' })]);
      expect((await read(agent, runId, s.name).expect(200)).body).toEqual({ key: s.name, value: s.plaintext, version: 1 });
      for (const variable of ['FIRST_VAR', 'SECOND_VAR'])
        expect((await read(agent, runId, variable).expect(403)).body.code).toBe('secret_alias_not_granted');
    });

    it('shows latest following rotation and a pin staying; deleted secrets disappear', async () => {
      const co = await createCompany(t);
      const follow = await createSecret(t, co.id);
      const pinned = await createSecret(t, co.id);
      const gone = await createSecret(t, co.id);
      const { agent, runId } = await agentWithRun(co.id, {
        FOLLOWS: secretRef(follow.id),
        PINNED: secretRef(pinned.id, 1),
        GONE: secretRef(gone.id),
      });
      await t.http.post(`/api/secrets/${follow.id}/rotate`).send({ value: 'follow-v2' }).expect(200);
      await t.http.post(`/api/secrets/${pinned.id}/rotate`).send({ value: 'pinned-v2' }).expect(200);
      await t.http.delete(`/api/secrets/${gone.id}`).expect(200);
      const res = await list(agent, runId).expect(200);
      const byKey = Object.fromEntries(res.body.secrets.map((e: { key: string }) => [e.key, e]));
      expect(Object.keys(byKey).sort()).toEqual([follow.name, pinned.name].sort());
      expect(byKey[follow.name]).toMatchObject({ versionSelector: 'latest', latestVersion: 2, resolvedVersion: 2 });
      expect(byKey[pinned.name]).toMatchObject({ versionSelector: 1, latestVersion: 2, resolvedVersion: 1 });
    });

    it("includes the project bindings of the run's project", async () => {
      const co = await createCompany(t);
      const p = await createSecret(t, co.id);
      const [project] = await t.dataSource.query(
        `INSERT INTO projects (company_id, name, url_key, env) VALUES ($1, 'P', 'p', $2) RETURNING id`,
        [co.id, JSON.stringify({ PROJECT_KEY: secretRef(p.id, 'latest', { delivery: 'api' }) })],
      );
      const { agent, runId } = await agentWithRun(co.id, {}, {}, { context: { projectId: project.id } });
      const res = await list(agent, runId).expect(200);
      expect(res.body.secrets).toEqual([expect.objectContaining({ key: p.name, delivery: 'api', projectionClass: 'api_key' })]);
      expect((await read(agent, runId, p.name).expect(200)).body.value).toBe(p.plaintext);
    });
  });

  describe('POST /api/agents/me/secrets/:key/value', () => {
    it('is refused before a run (403), served during it (200), refused after it (403)', async () => {
      const co = await createCompany(t);
      const s = await createSecret(t, co.id);
      const agent = await insertAgent(t, co.id, { adapterConfig: { env: { API_KEY: secretRef(s.id) } } });
      const before = await read(agent, undefined, s.name).expect(403);
      expect(before.text).not.toContain(s.plaintext);
      const runId = await startRun(t, agent);
      const during = await read(agent, runId, s.name).expect(200);
      expect(during.body).toEqual({ key: s.name, value: s.plaintext, version: 1 });
      expect(during.headers['cache-control']).toBe('no-store');
      await finishRun(t, runId);
      const after = await read(agent, runId, s.name).expect(403);
      expect(after.text).not.toContain(s.plaintext);
      await read(agent, undefined, s.name).expect(403);
    });

    it('rejects board callers with 403', async () => {
      await t.http.post('/api/agents/me/secrets/ANY/value').expect(403);
    });

    it('writes the security audit trail and an activity record, never the value', async () => {
      const co = await createCompany(t);
      const s = await createSecret(t, co.id);
      const { agent, runId } = await agentWithRun(co.id, { AUDITED: secretRef(s.id) });
      await read(agent, runId, s.name).expect(200);
      const audit = await t.dataSource.query(`SELECT * FROM secret_access_events WHERE company_id = $1`, [co.id]);
      expect(audit).toEqual([
        expect.objectContaining({
          secret_id: s.id,
          secret_name: s.name,
          binding_key: s.name,
          version: 1,
          action: 'value_read',
          agent_id: agent.id,
          run_id: runId,
          credential_source: 'api_key',
          request_id: expect.any(String),
        }),
      ]);
      const acts = await t.http.get(`/api/companies/${co.id}/activity`).expect(200);
      const rec = acts.body.find((r: { action: string }) => r.action === 'secret.value_read');
      expect(rec).toMatchObject({ actorType: 'agent', actorId: agent.id, entityType: 'secret', entityId: s.id, runId });
      expect(rec.details).toEqual({ key: s.name, secretName: s.name, version: 1, delivery: 'both' });
      expect(JSON.stringify(acts.body)).not.toContain(s.plaintext);
    });

    it('serves latest after rotation and the pinned old version', async () => {
      const co = await createCompany(t);
      const follow = await createSecret(t, co.id);
      const pinned = await createSecret(t, co.id);
      const { agent, runId } = await agentWithRun(co.id, { FOLLOWS: secretRef(follow.id), PINNED: secretRef(pinned.id, 1) });
      await t.http.post(`/api/secrets/${follow.id}/rotate`).send({ value: 'follow-v2' }).expect(200);
      await t.http.post(`/api/secrets/${pinned.id}/rotate`).send({ value: 'pinned-v2' }).expect(200);
      expect((await read(agent, runId, follow.name).expect(200)).body).toEqual({ key: follow.name, value: 'follow-v2', version: 2 });
      expect((await read(agent, runId, pinned.name).expect(200)).body).toEqual({ key: pinned.name, value: pinned.plaintext, version: 1 });
    });

    it("answers 403 for aliases not granted: unknown, another secret's name, a variable name, env-only delivery, another agent's binding", async () => {
      const co = await createCompany(t);
      const granted = await createSecret(t, co.id);
      const notGranted = await createSecret(t, co.id);
      const envOnly = await createSecret(t, co.id);
      const { agent, runId } = await agentWithRun(co.id, {
        ONLY_THIS: secretRef(granted.id),
        ENV_ONLY: secretRef(envOnly.id, 'latest', { delivery: 'env' }),
      });
      await agentWithRun(co.id, { PEER_KEY: secretRef(notGranted.id) });
      for (const alias of [
        'no-such-alias',
        notGranted.name,
        granted.name.toLowerCase(),
        envOnly.name,
        'ENV_ONLY',
        'ONLY_THIS',
        'PEER_KEY',
      ]) {
        const res = await read(agent, runId, alias).expect(403);
        expect(res.body.code).toBe('secret_alias_not_granted');
        expect(res.text).not.toContain(notGranted.plaintext);
        expect(res.text).not.toContain(envOnly.plaintext);
      }
      expect(await t.dataSource.query(`SELECT 1 FROM secret_access_events WHERE company_id = $1`, [co.id])).toHaveLength(0);
    });

    it('denies skill-test runs and low-trust review agents (403)', async () => {
      const co = await createCompany(t);
      const s = await createSecret(t, co.id);
      const skill = await agentWithRun(co.id, { K: secretRef(s.id) }, {}, { context: { skillTest: true } });
      expect((await read(skill.agent, skill.runId, 'K').expect(403)).body.code).toBe('skill_test_run_denied');
      await list(skill.agent, skill.runId).expect(403);
      const skillSource = await agentWithRun(co.id, { K: secretRef(s.id) }, {}, { invocationSource: 'skill_test' });
      await read(skillSource.agent, skillSource.runId, 'K').expect(403);
      for (const opts of [{ metadata: { trustLevel: 'low' } }, { metadata: { reviewOnly: true } }, { role: 'reviewer' }]) {
        const review = await agentWithRun(co.id, { K: secretRef(s.id) }, opts);
        const res = await read(review.agent, review.runId, 'K').expect(403);
        expect(res.body.code).toBe('low_trust_agent_denied');
        expect(res.text).not.toContain(s.plaintext);
      }
    });

    it('grants nothing for a deleted secret or a foreign one stored behind validation: not listed, 403 under any alias', async () => {
      const co = await createCompany(t);
      const other = await createCompany(t);
      const s = await createSecret(t, co.id);
      const foreign = await createSecret(t, other.id);
      const { agent, runId } = await agentWithRun(co.id, { DELETED: secretRef(s.id) });
      await setAgentEnv(t, agent.id, { DELETED: secretRef(s.id), FOREIGN: secretRef(foreign.id) });
      await t.http.delete(`/api/secrets/${s.id}`).expect(200);
      expect((await list(agent, runId).expect(200)).body.secrets).toEqual([]);
      for (const alias of [s.name, 'DELETED', foreign.name, 'FOREIGN']) {
        const res = await read(agent, runId, alias).expect(403);
        expect(res.body.code).toBe('secret_alias_not_granted');
        expect(res.text).not.toContain(foreign.plaintext);
      }
    });
  });

  describe('security: the plaintext is only ever in the value response', () => {
    it('no table, activity record, response or data-dir file holds a plaintext; the database holds ciphertext only', async () => {
      const co = await createCompany(t);
      const value1 = `needle-one-${randomUUID()}`;
      const value2 = `needle-two-${randomUUID()}`;
      const created = await t.http.post(`/api/companies/${co.id}/secrets`).send({ name: 'NEEDLE_TOKEN', value: value1 }).expect(201);
      const rotated = await t.http.post(`/api/secrets/${created.body.id}/rotate`).send({ value: value2 }).expect(200);
      const patched = await t.http.patch(`/api/secrets/${created.body.id}`).send({ description: 'd' }).expect(200);
      const normalized = await bindings.validateEnvBindings(co.id, { PINNED: secretRef(created.body.id, 1) });
      const { agent, runId } = await agentWithRun(co.id, normalized);
      const listed = await list(agent, runId).expect(200);
      const v1 = await read(agent, runId, 'NEEDLE_TOKEN').expect(200);
      await t.dataSource.query(
        `UPDATE agents SET adapter_config = jsonb_set(adapter_config, '{env,PINNED,version}', '"latest"') WHERE id = $1`,
        [agent.id],
      );
      const v2 = await read(agent, runId, 'NEEDLE_TOKEN').expect(200);
      expect([v2.body.value, v1.body.value]).toEqual([value2, value1]);
      await bindings.resolveForLaunch(co.id, agent.id);
      const bad = await t.http.post(`/api/companies/${co.id}/secrets`).send({ name: 'NEEDLE_TOKEN', value: value1 }).expect(409);
      const acts = await t.http.get(`/api/companies/${co.id}/activity`).expect(200);
      const list2 = await t.http.get(`/api/companies/${co.id}/secrets`).expect(200);

      for (const res of [created, rotated, patched, listed, bad, acts, list2]) {
        expect(res.text).not.toContain(value1);
        expect(res.text).not.toContain(value2);
      }
      const dump = await dumpDatabase(t);
      expect(dump).toContain(created.body.id); // the dump does see the secret rows
      for (const v of [value1, value2]) {
        expect(dump).not.toContain(v);
        expect(dump).not.toContain(Buffer.from(v).toString('hex'));
        expect(dump).not.toContain(Buffer.from(v).toString('base64'));
      }
      const files = fs.readdirSync(t.dataDir, { recursive: true }) as string[];
      for (const f of files) {
        const p = path.join(t.dataDir, f);
        if (!fs.statSync(p).isFile()) continue;
        const content = fs.readFileSync(p, 'utf8');
        expect(content).not.toContain(value1);
        expect(content).not.toContain(value2);
      }
    });
  });
});
