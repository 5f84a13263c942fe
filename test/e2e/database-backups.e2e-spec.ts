import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { DataSource } from 'typeorm';
import { dataSourceOptions, runMigrations } from '../../src/database/data-source';
import { EmbeddedPostgres } from '../../src/database/embedded-postgres';
import { emptyDatabase, restoreCli, sqlClient, tableFingerprints } from '../support/backups';
import { createCompany } from '../support/factories';
import { insertAgent, sleep, waitFor } from '../support/heartbeat';
import { startService } from '../support/service-process';
import { createTestApp, TestApp } from '../support/test-app';
import { auth, AUTHENTICATED, insertAgentWithKey, instanceAdmin, signUp } from '../support/users';

jest.setTimeout(180_000);

let dbCounter = 0;
const freshName = () => `restore_${process.pid}_${Date.now().toString(36)}_${dbCounter++}`;
/** The backup's own row and its audit record (with the company's activity chain head) are written after its snapshot. */
const WRITTEN_AFTER_SNAPSHOT = ['database_backups', 'activity_log', 'activity_chain_heads'];

/** Some rows in many tables: company, agent, issue with a comment, a secret, activity. */
async function seed(t: TestApp): Promise<{ companyId: string }> {
  const company = await createCompany(t, { name: 'Backup Co', budgetMonthlyCents: 5000 });
  await insertAgent(t, company.id, { adapterType: 'process', adapterConfig: { command: 'true' }, name: 'Bob' });
  const issue = await t.http
    .post(`/api/companies/${company.id}/issues`)
    .send({ title: 'Back me up', description: 'with "quotes", üñíçødé and \\ backslashes' })
    .expect(201);
  await t.http.post(`/api/issues/${issue.body.id}/comments`).send({ body: 'a comment\nwith lines' }).expect(201);
  await t.http.post(`/api/companies/${company.id}/secrets`).send({ name: 'API_TOKEN', value: 'super-secret-value-123' }).expect(201);
  return { companyId: company.id };
}

/** The restored database serves the service: started as a child process on it, with the original master key. */
async function startOn(url: string, source: TestApp, companyId: string): Promise<void> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-restored-'));
  const svc = await startService({
    DATABASE_URL: url,
    SERVICE_DATA_DIR: dataDir,
    SERVICE_SECRETS_MASTER_KEY_FILE: path.join(source.dataDir, 'keys', 'secrets-master-key'),
  });
  try {
    expect((await svc.api('GET', '/api/health/ready')).status).toBe(200);
    const company = await svc.api('GET', `/api/companies/${companyId}`);
    expect(company.status).toBe(200);
    expect(company.body.name).toBe('Backup Co');
    const secrets = await svc.api('GET', `/api/companies/${companyId}/secrets`);
    expect(secrets.status).toBe(200);
    expect(secrets.body.map((s: { name: string }) => s.name)).toContain('API_TOKEN');
  } finally {
    await svc.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

describe('POST /api/instance/database-backups (built-in engine)', () => {
  let t: TestApp;
  let companyId: string;
  beforeAll(async () => {
    // no pg_dump at that path: the built-in dumper is used and says why
    t = await createTestApp({ env: { SERVICE_PG_DUMP_PATH: '/nonexistent/pg_dump' } });
    ({ companyId } = await seed(t));
  });
  afterAll(() => t.close());

  it('writes a compressed backup and answers with its file name, size and duration', async () => {
    const res = await t.http.post('/api/instance/database-backups');
    expect(res.body).toMatchObject({ engine: 'builtin', trigger: 'manual', status: 'succeeded' });
    expect(res.status).toBe(201);
    expect(res.body.fileName).toMatch(/^backup-\d{8}T\d{6}Z-manual-[0-9a-f]{8}\.ndjson\.gz$/);
    expect(res.body.sizeBytes).toBeGreaterThan(1000);
    expect(res.body.durationMs).toBeGreaterThanOrEqual(0);
    expect(res.body.engineNote).toMatch(/did not answer --version|no pg_dump/);
    const file = path.join(t.dataDir, 'backups', res.body.fileName);
    expect(fs.statSync(file).size).toBe(res.body.sizeBytes);
    expect(fs.statSync(file).mode & 0o077).toBe(0);
    const list = await t.http.get('/api/instance/database-backups').expect(200);
    expect(list.body[0]).toMatchObject({ id: res.body.id, fileName: res.body.fileName, sizeBytes: res.body.sizeBytes });
  });

  it('never contains the secrets master key nor a secret in clear', async () => {
    const res = await t.http.post('/api/instance/database-backups').expect(201);
    const text = gunzipSync(fs.readFileSync(path.join(t.dataDir, 'backups', res.body.fileName))).toString('utf8');
    const key = fs.readFileSync(path.join(t.dataDir, 'keys', 'secrets-master-key'), 'utf8').trim();
    expect(text).not.toContain(key);
    expect(text).not.toContain(Buffer.from(key, 'base64').toString('hex'));
    expect(text).not.toContain('super-secret-value-123');
    expect(text).toContain(t.config.secretsMasterKeyFingerprint); // the fingerprint only, to check the key at restore
  });

  it('restores into a fresh database with the same rows, table by table, and the service starts on it', async () => {
    const res = await t.http.post('/api/instance/database-backups').expect(201);
    const file = path.join(t.dataDir, 'backups', res.body.fileName);
    const target = await emptyDatabase(process.env.TEST_PG_ADMIN_URL!, freshName());
    const out = await restoreCli(file, target, { SERVICE_SECRETS_MASTER_KEY_FILE: path.join(t.dataDir, 'keys', 'secrets-master-key') });
    expect(out).toMatch(/restored .* \(builtin, \d+ tables, \d+ rows\)/);
    expect(out).not.toMatch(/warning/);
    const [source, restored] = await Promise.all([tableFingerprints(t.databaseUrl), tableFingerprints(target)]);
    // the backup's own row and its audit record are written after its snapshot: every other table must match exactly
    expect(Object.keys(restored).sort()).toEqual(Object.keys(source).sort());
    for (const table of Object.keys(source)) {
      if (WRITTEN_AFTER_SNAPSHOT.includes(table)) continue;
      expect({ table, ...restored[table] }).toEqual({ table, ...source[table] });
    }
    expect(restored.companies.count).toBeGreaterThan(0);
    expect(restored.issue_comments?.count ?? restored.comments?.count ?? 1).toBeGreaterThan(0);
    // schema objects come back too: same indexes, constraints and triggers
    const shape = async (url: string) => {
      const c = await sqlClient(url);
      try {
        const q = await c.query(`SELECT
          (SELECT count(*) FROM pg_indexes WHERE schemaname = 'public')::int AS indexes,
          (SELECT count(*) FROM pg_constraint co JOIN pg_namespace n ON n.oid = co.connamespace WHERE n.nspname = 'public' AND co.contype <> 'n')::int AS constraints,
          (SELECT count(*) FROM pg_trigger WHERE NOT tgisinternal)::int AS triggers`);
        return q.rows[0];
      } finally {
        await c.end();
      }
    };
    expect(await shape(target)).toEqual(await shape(t.databaseUrl));
    await startOn(target, t, companyId);
  });

  it('refuses to restore into a database that is not empty', async () => {
    const res = await t.http.post('/api/instance/database-backups').expect(201);
    await expect(restoreCli(path.join(t.dataDir, 'backups', res.body.fileName), t.databaseUrl)).rejects.toThrow(/not empty/);
  });
});

describe('database backups: access and scheduling', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: { ...AUTHENTICATED, SERVICE_BACKUP_ENGINE: 'builtin' } });
  });
  afterAll(() => t.close());

  it('needs an instance admin: 401 without credentials, 403 for users and agent tokens', async () => {
    await t.http.post('/api/instance/database-backups').expect(401);
    await t.http.get('/api/instance/database-backups').expect(401);
    const user = await signUp(t);
    await instanceAdmin(t);
    await t.http.post('/api/instance/database-backups').set(auth(user.token)).expect(403);
    await t.http.get('/api/instance/database-backups').set(auth(user.token)).expect(403);
    const company = await createCompany(t, {}, user.token);
    const agent = await insertAgentWithKey(t, company.id);
    await t.http.post('/api/instance/database-backups').set(auth(agent.token)).expect(403);
  });

  it('validates the list query and the schedule settings', async () => {
    const admin = await instanceAdmin(t);
    await t.http.get('/api/instance/database-backups?limit=0').set(auth(admin.token)).expect(400);
    await t.http.get('/api/instance/database-backups?limit=abc').set(auth(admin.token)).expect(400);
    for (const body of [{ databaseBackupIntervalMinutes: 0 }, { databaseBackupEnabled: 'yes' }, { databaseBackupRetentionDaily: -1 }]) {
      await t.http.patch('/api/instance/settings/general').set(auth(admin.token)).send(body).expect(400);
    }
  });

  it('runs a scheduled backup once across two instances and keeps the retention', async () => {
    const admin = await instanceAdmin(t);
    const env = { ...AUTHENTICATED, SERVICE_BACKUP_ENGINE: 'builtin', SERVICE_BACKUP_TICK_MS: '100' };
    const a = await createTestApp({ databaseUrl: t.databaseUrl, scheduler: true, env });
    const b = await createTestApp({ databaseUrl: t.databaseUrl, scheduler: true, env });
    try {
      await t.http
        .patch('/api/instance/settings/general')
        .set(auth(admin.token))
        .send({
          databaseBackupEnabled: true,
          databaseBackupIntervalMinutes: 60,
          databaseBackupRetentionDaily: 1,
          databaseBackupRetentionWeekly: 0,
          databaseBackupRetentionMonthly: 0,
        })
        .expect(200);
      const rows = await waitFor(
        async () => {
          const r = await t.dataSource.query(`SELECT * FROM database_backups WHERE trigger = 'scheduled'`);
          return r.length && r.every((x: { status: string }) => x.status !== 'running') ? r : null;
        },
        'a scheduled backup',
        30_000,
      );
      await sleep(1000); // a dozen more ticks of both instances
      const all = await t.dataSource.query(`SELECT * FROM database_backups WHERE trigger = 'scheduled'`);
      expect(all).toHaveLength(1);
      expect(rows[0].status).toBe('succeeded');
      const writer = [a, b].find((x) => fs.existsSync(path.join(x.dataDir, 'backups', rows[0].file_name)))!;
      expect(writer).toBeDefined();
      const list = await t.http.get('/api/instance/database-backups').set(auth(admin.token)).expect(200);
      expect(list.body.find((x: { trigger: string }) => x.trigger === 'scheduled')).toMatchObject({
        status: 'succeeded',
        engine: 'builtin',
      });

      // retention (1 day): an older scheduled backup in an instance's directory is deleted at its next tick
      const old = 'backup-20200101T000000Z-scheduled-00000000.ndjson.gz';
      fs.copyFileSync(path.join(writer.dataDir, 'backups', rows[0].file_name), path.join(writer.dataDir, 'backups', old));
      await t.dataSource.query(
        `INSERT INTO database_backups (file_name, engine, trigger, status, instance_id, created_at, finished_at) VALUES ($1, 'builtin', 'scheduled', 'succeeded', 'x', '2020-01-01', '2020-01-01')`,
        [old],
      );
      await waitFor(
        async () => {
          const [r] = await t.dataSource.query(`SELECT status FROM database_backups WHERE file_name = $1`, [old]);
          return r.status === 'deleted';
        },
        'the old backup deleted by retention',
        30_000,
      );
      const ls = (x: TestApp) => (fs.existsSync(path.join(x.dataDir, 'backups')) ? fs.readdirSync(path.join(x.dataDir, 'backups')) : []);
      const files = [...ls(a), ...ls(b)];
      expect(files).not.toContain(old);
      const listed = await t.http.get('/api/instance/database-backups').set(auth(admin.token)).expect(200);
      expect(listed.body.map((x: { fileName: string }) => x.fileName)).not.toContain(old);
    } finally {
      await t.http.patch('/api/instance/settings/general').set(auth(admin.token)).send({ databaseBackupEnabled: false });
      await Promise.all([a.close(), b.close()]);
    }
  });
});

const PG15 = '/usr/lib/postgresql/15/bin';
const havePg15 = fs.existsSync(path.join(PG15, 'postgres')) && fs.existsSync(path.join(PG15, 'pg_dump'));

(havePg15 ? describe : describe.skip)('POST /api/instance/database-backups (pg_dump engine, PostgreSQL 15 server)', () => {
  let pg: EmbeddedPostgres;
  let pgDir: string;
  let t: TestApp;
  let companyId: string;
  beforeAll(async () => {
    pgDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-pg15-'));
    pg = new EmbeddedPostgres({ dataDir: path.join(pgDir, 'db'), binDir: PG15 });
    await pg.start();
    const url = await emptyDatabase(pg.url, 'service');
    const ds = new DataSource(dataSourceOptions(url, 2));
    await ds.initialize();
    await runMigrations(ds);
    await ds.destroy();
    t = await createTestApp({
      databaseUrl: url,
      env: { SERVICE_BACKUP_ENGINE: 'pg_dump', SERVICE_PG_DUMP_PATH: path.join(PG15, 'pg_dump') },
    });
    ({ companyId } = await seed(t));
  });
  afterAll(async () => {
    await t?.close();
    await pg?.stop();
    fs.rmSync(pgDir, { recursive: true, force: true });
  });

  it('uses pg_dump, and the archive restores with the same rows; the service starts on it', async () => {
    const res = await t.http.post('/api/instance/database-backups').expect(201);
    expect(res.body).toMatchObject({ engine: 'pg_dump', status: 'succeeded' });
    expect(res.body.fileName).toMatch(/\.dump$/);
    const file = path.join(t.dataDir, 'backups', res.body.fileName);
    expect(fs.readFileSync(file).subarray(0, 5).toString()).toBe('PGDMP');
    const target = await emptyDatabase(pg.url, freshName());
    const out = await restoreCli(file, target, { SERVICE_PG_DUMP_PATH: path.join(PG15, 'pg_dump') });
    expect(out).toMatch(/restored .* \(pg_dump\)/);
    const [source, restored] = await Promise.all([tableFingerprints(t.databaseUrl), tableFingerprints(target)]);
    expect(Object.keys(restored).sort()).toEqual(Object.keys(source).sort());
    for (const table of Object.keys(source)) {
      if (WRITTEN_AFTER_SNAPSHOT.includes(table)) continue;
      expect({ table, ...restored[table] }).toEqual({ table, ...source[table] });
    }
    await startOn(target, t, companyId);
  });

  it('the built-in engine round trips on this server too', async () => {
    const b = await createTestApp({ databaseUrl: t.databaseUrl, env: { SERVICE_BACKUP_ENGINE: 'builtin' } });
    try {
      const res = await b.http.post('/api/instance/database-backups').expect(201);
      expect(res.body.engine).toBe('builtin');
      const target = await emptyDatabase(pg.url, freshName());
      await restoreCli(path.join(b.dataDir, 'backups', res.body.fileName), target);
      const [source, restored] = await Promise.all([tableFingerprints(t.databaseUrl), tableFingerprints(target)]);
      for (const table of Object.keys(source)) {
        if (WRITTEN_AFTER_SNAPSHOT.includes(table)) continue;
        expect({ table, ...restored[table] }).toEqual({ table, ...source[table] });
      }
    } finally {
      await b.close();
    }
  });
});

describe('SERVICE_BACKUP_ENGINE=pg_dump without a usable pg_dump', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: { SERVICE_BACKUP_ENGINE: 'pg_dump', SERVICE_PG_DUMP_PATH: '/nonexistent/pg_dump' } });
  });
  afterAll(() => t.close());

  it('answers 422 backup_engine_unavailable instead of falling back', async () => {
    const res = await t.http.post('/api/instance/database-backups').expect(422);
    expect(res.body.code).toBe('backup_engine_unavailable');
  });
});
