import * as fs from 'node:fs';
import * as path from 'node:path';
import { FIXTURES, insertAgent, runLogText, scratchDir, TERMINAL, waitRun, wakeRun } from '../support/heartbeat';
import { createCompany } from '../support/factories';
import { createTestApp, TestApp } from '../support/test-app';

const asRoot = process.getuid?.() === 0;
const PG_MODULE = process.env.TEST_FIXTURES_DIR
  ? path.join(process.env.TEST_FIXTURES_DIR, 'node_modules', 'pg')
  : path.dirname(require.resolve('pg/package.json'));

function probeResult(log: string): Record<string, any> {
  const line = log.split('\n').find((l) => l.startsWith('PROBE '));
  if (!line) throw new Error(`no probe output in log:\n${log}`);
  return JSON.parse(line.slice('PROBE '.length));
}

describe("agent processes cannot read the service's data or database", () => {
  let t: TestApp;
  let companyId: string;
  let work: string;
  const pgPort = Number(new URL(process.env.TEST_PG_ADMIN_URL as string).port);

  beforeAll(async () => {
    t = await createTestApp({ listen: true, env: { SERVICE_HEARTBEAT_KEEPALIVE_MS: '100' } });
    companyId = (await createCompany(t)).id;
    work = scratchDir('isolation-cwd-');
  });
  afterAll(async () => {
    await t.close();
    fs.rmSync(work, { recursive: true, force: true });
  });

  const probeAgent = (extra: Record<string, unknown> = {}) => {
    const keys = path.join(t.dataDir, 'keys');
    const args = JSON.stringify({
      readFiles: [
        path.join(keys, 'secrets-master-key'),
        path.join(keys, 'jwt-secret'),
        process.env.TEST_PG_PASSWORD_FILE ?? '/nonexistent',
      ],
      pgPort,
      pgModule: PG_MODULE,
      passFile: process.env.TEST_PG_PASSWORD_FILE ?? '/nonexistent',
    });
    return insertAgent(t, companyId, {
      adapterConfig: { command: process.execPath, args: [path.join(FIXTURES, 'agent-isolation-probe.js'), args], cwd: work, ...extra },
    });
  };

  it('keeps the data directory 0700 and its key files 0600', () => {
    expect(fs.statSync(t.dataDir).mode & 0o777).toBe(0o700);
    expect(fs.statSync(path.join(t.dataDir, 'keys')).mode & 0o777).toBe(0o700);
    for (const f of ['secrets-master-key', 'jwt-secret']) expect(fs.statSync(path.join(t.dataDir, 'keys', f)).mode & 0o777).toBe(0o600);
    if (process.env.TEST_PG_PASSWORD_FILE) expect(fs.statSync(process.env.TEST_PG_PASSWORD_FILE).mode & 0o777).toBe(0o600);
  });

  (asRoot ? it : it.skip)(
    'as root: the process runs as the unprivileged agent user; the master key, the password file and the database are out of reach, and the run still works',
    async () => {
      const agent = await probeAgent();
      const runId = await wakeRun(t, agent.id);
      expect(await waitRun(t, runId, TERMINAL)).toMatchObject({ status: 'succeeded' });
      const probe = probeResult(await runLogText(t, runId));
      expect(probe.uid).not.toBe(0);
      expect(probe.gid).not.toBe(0);
      expect(probe.groups).not.toContain(0);
      // readable by nobody but the service
      for (const result of Object.values(probe.reads)) expect(result).toBe('EACCES');
      // no well-known credentials, and the password file is unreadable
      expect(probe.db.legacyDefault).toBe('28P01');
      expect(probe.db.postgresUser).toBe('28P01');
      expect(probe.db.passFile).not.toBe('connected');
      expect(probe.db.passFilePathAsPassword).toBe('28P01');
      // a HOME and a working directory of its own that it may write
      expect(probe.writes).toBe('ok');
      expect(probe.home).toContain(path.join(process.env.SERVICE_AGENT_ROOT as string, 'homes'));
      expect(probe.cwd).toBe(work);
    },
  );

  (asRoot ? it : it.skip)('a working directory the agent user cannot enter fails the run with a clear error naming the path', async () => {
    const closed = fs.mkdtempSync(path.join(work, 'closed-'));
    fs.chmodSync(closed, 0o700);
    const agent = await insertAgent(t, companyId, { adapterConfig: { command: 'true', cwd: closed } });
    const row = await waitRun(t, await wakeRun(t, agent.id), TERMINAL);
    expect(row).toMatchObject({ status: 'failed', error_code: 'adapter_cwd_not_accessible' });
    expect(row.error).toContain(closed);
    expect(row.error).toMatch(/agent-[0-9a-f]{8}/);
  });

  (asRoot ? it : it.skip)('SERVICE_AGENT_ISOLATION=false (single-user machines) runs agent processes as the service user', async () => {
    const optOut = await createTestApp({ listen: true, env: { SERVICE_AGENT_ISOLATION: 'false' } });
    try {
      const co = (await createCompany(optOut)).id;
      const file = path.join(work, `optout-${Date.now()}.json`);
      const agent = await insertAgent(optOut, co, {
        adapterConfig: {
          command: process.execPath,
          args: ['-e', `require('fs').writeFileSync(${JSON.stringify(file)}, String(process.getuid()))`],
        },
      });
      expect(await waitRun(optOut, await wakeRun(optOut, agent.id), TERMINAL)).toMatchObject({ status: 'succeeded' });
      expect(fs.readFileSync(file, 'utf8')).toBe('0');
    } finally {
      await optOut.close();
    }
  });
});
