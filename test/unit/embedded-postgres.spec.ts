import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client } from 'pg';
import { EmbeddedPostgres } from '../../src/database/embedded-postgres';

async function encodingOf(url: string): Promise<string> {
  const c = new Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query('SHOW server_encoding')).rows[0].server_encoding;
  } finally {
    await c.end();
  }
}

describe('EmbeddedPostgres launcher', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pg-launcher-'));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('initialises a UTF8 cluster once, restarts on it, and recovers from a stale postmaster.pid', async () => {
    const dataDir = path.join(dir, 'db');
    const first = new EmbeddedPostgres({ dataDir });
    await first.start();
    expect(await encodingOf(first.url)).toBe('UTF8');
    const version = fs.readFileSync(path.join(dataDir, 'PG_VERSION'), 'utf8');
    await first.stop();
    expect(fs.existsSync(path.join(dataDir, 'postmaster.pid'))).toBe(false);

    // a crash leaves postmaster.pid naming a process that no longer exists
    fs.writeFileSync(path.join(dataDir, 'postmaster.pid'), '999999\n' + dataDir + '\n');
    const second = new EmbeddedPostgres({ dataDir });
    await second.start();
    expect(fs.readFileSync(path.join(dataDir, 'PG_VERSION'), 'utf8')).toBe(version);
    expect(await encodingOf(second.url)).toBe('UTF8');
    await second.stop();
  });

  it('uses a random superuser password kept 0600 beside the cluster, and moves an old cluster off the well-known one', async () => {
    const dataDir = path.join(dir, 'legacy');
    // a cluster initialised the old way, with the well-known password
    const old = new EmbeddedPostgres({ dataDir, password: 'service' });
    await old.start();
    const port = old.port;
    await old.stop();
    const pg = new EmbeddedPostgres({ dataDir, port });
    await pg.start();
    try {
      const file = `${dataDir}-password`;
      expect(fs.statSync(file).mode & 0o777).toBe(0o600);
      expect(fs.readFileSync(file, 'utf8').trim()).toBe(pg.password);
      expect(pg.password).toMatch(/^[A-Za-z0-9_-]{32}$/);
      expect(await encodingOf(pg.url)).toBe('UTF8');
      await expect(encodingOf(`postgres://service:service@127.0.0.1:${pg.port}/postgres`)).rejects.toThrow(
        /password authentication failed/,
      );
    } finally {
      await pg.stop();
    }
  });
});
