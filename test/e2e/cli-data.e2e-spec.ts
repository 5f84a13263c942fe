import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { emptyDatabase, tableFingerprints } from '../support/backups';
import { aos, call } from '../support/cli';
import { waitFor } from '../support/heartbeat';
import { ServiceProcess, startService } from '../support/service-process';
import { createTestDatabase } from '../support/test-app';

jest.setTimeout(240_000);

const tmpDir = (prefix: string) => fs.mkdtempSync(path.join(os.tmpdir(), prefix));
let dbCounter = 0;
const freshName = () => `clidata_${process.pid}_${Date.now().toString(36)}_${dbCounter++}`;

describe('aos backup / restore and export / import (local_trusted service)', () => {
  let svc: ServiceProcess;
  let dataDir: string;
  let databaseUrl: string;
  let companyId: string;
  beforeAll(async () => {
    dataDir = tmpDir('cli-data-');
    databaseUrl = await createTestDatabase();
    svc = await startService({
      DATABASE_URL: databaseUrl,
      SERVICE_DATA_DIR: dataDir,
      SERVICE_BACKUP_ENGINE: 'builtin',
      SERVICE_HEARTBEAT_TICK_MS: '200',
    });
    const company = await call(svc.baseUrl, 'POST', '/api/companies', { name: `Round Trip ${Date.now()}` });
    companyId = company.body.id;
    const agent = await call(svc.baseUrl, 'POST', `/api/companies/${companyId}/agents`, {
      name: 'Echo',
      role: 'general',
      adapterType: 'process',
      adapterConfig: { command: 'sh', args: ['-c', 'echo hello from the run'] },
    });
    expect(agent.status).toBe(201);
    await call(svc.baseUrl, 'POST', `/api/companies/${companyId}/secrets`, { name: 'API_TOKEN', value: 'round-trip-secret' });
    // one finished run: its log is a file of the data directory, not a row
    const wake = await call(svc.baseUrl, 'POST', `/api/agents/${agent.body.id}/wakeup`, { source: 'on_demand', triggerDetail: 'manual' });
    await waitFor(
      async () => (await call(svc.baseUrl, 'GET', `/api/heartbeat-runs/${wake.body.id}`)).body.status === 'succeeded',
      'run done',
    );
  });
  afterAll(async () => {
    await svc.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  const keyFile = () => path.join(dataDir, 'keys', 'secrets-master-key');

  it('backup through the service, then restore into an empty database: same rows, no warning with the same key and data directory', async () => {
    const b = await aos(['--json', 'backup', '--url', svc.baseUrl]);
    expect(b.code).toBe(0);
    expect(b.json).toMatchObject({ status: 'succeeded', engine: 'builtin' });
    expect(b.json.path).toBe(path.join(dataDir, 'backups', b.json.fileName));
    const target = await emptyDatabase(process.env.TEST_PG_ADMIN_URL!, freshName());
    const r = await aos(['restore', b.json.path, '--database-url', target], {
      SERVICE_DATA_DIR: dataDir,
      SERVICE_SECRETS_MASTER_KEY_FILE: keyFile(),
    });
    expect(r.code).toBe(0);
    const lines = r.lines();
    expect(lines.find((l) => l.result)?.msg).toMatch(/^restored .* \(builtin, \d+ tables, \d+ rows\) in \d+ ms$/);
    expect(lines.filter((l) => l.level >= 40)).toEqual([]);
    const [source, restored] = await Promise.all([tableFingerprints(databaseUrl), tableFingerprints(target)]);
    for (const table of ['companies', 'agents', 'heartbeat_runs', 'company_secret_versions'])
      expect(restored[table]).toEqual(source[table]);
  });

  it('restore warns when the run logs are not in the data directory and when the secrets key differs', async () => {
    const b = await aos(['--json', 'backup', '--direct', '--out', path.join(tmpDir('cli-direct-'), 'direct.ndjson.gz')], {
      DATABASE_URL: databaseUrl,
      SERVICE_DATA_DIR: dataDir,
      SERVICE_SECRETS_MASTER_KEY_FILE: keyFile(),
    });
    expect(b.code).toBe(0);
    expect(b.json).toMatchObject({ engine: 'builtin', tables: expect.any(Number), rows: expect.any(Number) });
    const target = await emptyDatabase(process.env.TEST_PG_ADMIN_URL!, freshName());
    const otherDir = tmpDir('cli-other-');
    const r = await aos(['restore', b.json.path, '--database-url', target], { SERVICE_DATA_DIR: otherDir });
    expect(r.code).toBe(0);
    const warnings = r.lines().filter((l) => l.level === 40);
    expect(warnings).toHaveLength(2);
    expect(warnings[0].msg).toMatch(
      /the backup's secrets were encrypted with master key [0-9a-f]{16}, this configuration has [0-9a-f]{16}/,
    );
    expect(warnings[1]).toMatchObject({ runLogsMissing: 1, runLogs: 1 });
    expect(warnings[1].msg).toMatch(/1 of 1 run logs are not in .*run-logs: a backup holds the database only/);
    expect(r.stdout).not.toContain(fs.readFileSync(keyFile(), 'utf8').trim());
  });

  it('restore refuses a database that is not empty and a missing file (exit 1, one error line)', async () => {
    const missing = await aos(['--json', 'restore', '/nonexistent/backup.gz', '--database-url', databaseUrl]);
    expect(missing).toMatchObject({ code: 1, json: { code: 'file_not_found' } });
    const b = await aos(['--json', 'backup', '--url', svc.baseUrl]);
    const r = await aos(['--json', 'restore', b.json.path, '--database-url', databaseUrl], { SERVICE_DATA_DIR: dataDir });
    expect(r.code).toBe(1);
    expect(r.json.error).toMatch(/not empty/);
  });

  it('export a company to a .tar.gz and import it as a new company; --dry-run changes nothing', async () => {
    const out = path.join(tmpDir('cli-export-'), 'company.tar.gz');
    const e = await aos(['--json', 'export', companyId, '--out', out, '--url', svc.baseUrl]);
    expect(e.code).toBe(0);
    expect(e.json).toEqual({ file: out, sizeBytes: fs.statSync(out).size });
    const before = (await call(svc.baseUrl, 'GET', '/api/companies')).body.length;
    const dry = await aos(['--json', 'import', out, '--name', 'Imported Co', '--dry-run', '--url', svc.baseUrl]);
    expect(dry.code).toBe(0);
    expect(dry.json).toMatchObject({ mode: 'new_company', companyId: null, companyName: 'Imported Co' });
    expect(dry.json.counts['agent.create']).toBe(1);
    expect((await call(svc.baseUrl, 'GET', '/api/companies')).body.length).toBe(before);
    const imp = await aos(['--json', 'import', out, '--name', 'Imported Co', '--url', svc.baseUrl]);
    expect(imp.code).toBe(0);
    const agents = await call(svc.baseUrl, 'GET', `/api/companies/${imp.json.companyId}/agents`);
    expect(agents.body.map((a: { name: string }) => a.name)).toEqual(['Echo']);
    expect(imp.json.secretsToSet).toEqual([]);
  });

  it('export to a folder and import it into the same company with skip', async () => {
    const dir = path.join(tmpDir('cli-export-dir-'), 'pkg');
    const e = await aos(['--json', 'export', companyId, '--dir', '--out', dir, '--url', svc.baseUrl]);
    expect(e.code).toBe(0);
    expect(fs.existsSync(path.join(dir, 'COMPANY.md'))).toBe(true);
    const imp = await aos(['--json', 'import', dir, '--into', companyId, '--collision', 'skip', '--url', svc.baseUrl]);
    expect(imp.code).toBe(0);
    expect(imp.json).toMatchObject({ mode: 'existing_company', companyId, collisionStrategy: 'skip' });
    expect(imp.json.creates).toEqual([]);
  });

  it('export of an unknown company and import of a non-package are clear errors', async () => {
    const e = await aos([
      '--json',
      'export',
      '00000000-0000-4000-8000-000000000000',
      '--out',
      path.join(tmpDir('x-'), 'x.tar.gz'),
      '--url',
      svc.baseUrl,
    ]);
    expect(e.code).toBe(1);
    expect(e.json.error).toMatch(/answered 404/);
    const junk = path.join(tmpDir('cli-junk-'), 'junk.tar.gz');
    fs.writeFileSync(junk, 'not an archive');
    const i = await aos(['--json', 'import', junk, '--url', svc.baseUrl]);
    expect(i).toMatchObject({ code: 1, json: { code: 'bad_package' } });
  });
});
