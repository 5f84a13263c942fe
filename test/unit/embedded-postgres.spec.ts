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
});
