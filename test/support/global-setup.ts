import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { dataSourceOptions, runMigrations } from '../../src/database/data-source';
import { EmbeddedPostgres } from '../../src/database/embedded-postgres';
import { ensureTestClis } from './clis';
import globalTeardown from './global-teardown';
import { copyReadable } from './readable-for-agents';

export const TEMPLATE_DB = 'svc_test_template';

/**
 * One Postgres for the whole run (embedded, or DATABASE_URL's server), one migrated template
 * database; every test file clones it (CREATE DATABASE … TEMPLATE), so files run in parallel.
 */
export default async function globalSetup(): Promise<void> {
  // the swagger plugin's DTO metadata for the served OpenAPI document, made while Postgres starts
  const metadata = generateOpenApiMetadata();
  // the pinned coding-agent CLIs, into their cache folder once (TEST_CLIS=on-demand: when a test asks)
  const clis: Promise<unknown> = process.env.TEST_CLIS === 'on-demand' ? Promise.resolve() : ensureTestClis();
  // awaited below; one failing meanwhile (no npm registry) must not crash jest before that
  for (const p of [metadata, clis]) p.catch(() => undefined);
  try {
    await setUp(metadata, clis);
  } catch (err) {
    // jest runs no teardown after a failed setup: stop the database, remove the folders made so far
    await globalTeardown();
    throw err;
  }
}

async function setUp(metadata: Promise<void>, clis: Promise<unknown>): Promise<void> {
  let adminUrl = process.env.DATABASE_URL;
  if (!adminUrl) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-test-pg-'));
    (globalThis as { __PG_DIR__?: string }).__PG_DIR__ = dir;
    // a throwaway cluster: no durability across a host crash is needed, so commits skip the disk flush
    const pg = new EmbeddedPostgres({
      dataDir: path.join(dir, 'db'),
      settings: { fsync: 'off', synchronous_commit: 'off', full_page_writes: 'off' },
    });
    await pg.start();
    (globalThis as { __EMBEDDED_PG__?: EmbeddedPostgres }).__EMBEDDED_PG__ = pg;
    adminUrl = pg.url;
    process.env.TEST_PG_PASSWORD_FILE = pg.passwordFile;
  }
  const templateUrl = withDatabase(adminUrl, TEMPLATE_DB);
  const admin = new Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS ${TEMPLATE_DB} WITH (FORCE)`);
    await admin.query(`CREATE DATABASE ${TEMPLATE_DB}`);
  } finally {
    await admin.end();
  }
  const ds = new DataSource(dataSourceOptions(templateUrl, 2));
  await ds.initialize();
  await runMigrations(ds);
  await ds.destroy();
  await metadata;
  await clis;
  process.env.TEST_PG_ADMIN_URL = adminUrl;
  agentsCanEnterTmpdir();
  readableFixtures();
  // agents' uids, homes and run scratch of this test run (removed at teardown; host-wide by default)
  if (!process.env.SERVICE_AGENT_ROOT) {
    const agentsRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-test-agents-'));
    fs.chmodSync(agentsRoot, 0o711);
    process.env.SERVICE_AGENT_ROOT = agentsRoot;
    (globalThis as { __AGENTS_ROOT__?: string }).__AGENTS_ROOT__ = agentsRoot;
  }
  process.env.TEST_PG_TEMPLATE = TEMPLATE_DB;
}

const othersCanEnter = (dir: string): boolean => {
  for (let cur = path.resolve(dir); ; cur = path.dirname(cur)) {
    if ((fs.statSync(cur).mode & 0o001) === 0) return false;
    if (path.dirname(cur) === cur) return true;
  }
};

/**
 * As root the agents' homes and run folders (SERVICE_AGENT_ROOT) and the readable copies of the
 * fixtures are made in the temporary folder, and the agents' own uids must reach them: a TMPDIR
 * inside a private folder (root's 0700 home) would fail every agent test obscurely.
 */
function agentsCanEnterTmpdir(): void {
  if (process.getuid?.() !== 0 || othersCanEnter(os.tmpdir())) return;
  throw new Error(
    `TMPDIR ${os.tmpdir()} is inside a folder other users cannot enter; as root the tests run agents under uids of their own, ` +
      'which need to reach their homes there: point TMPDIR at a folder others can enter (e.g. unset it)',
  );
}

/**
 * Agents run under uids of their own: they must be able to read the fixture scripts they run. A
 * checkout under a folder others cannot enter (root's 0700 home, a `mktemp -d`) gets a readable
 * copy of test/fixtures, with the modules the fixtures load (TEST_FIXTURES_DIR).
 */
function readableFixtures(): void {
  const root = path.join(__dirname, '..', '..');
  const src = path.join(root, 'test', 'fixtures');
  if (process.getuid?.() !== 0 || othersCanEnter(src)) return;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-test-fixtures-'));
  fs.chmodSync(dir, 0o755);
  for (const f of fs.readdirSync(src)) copyReadable(path.join(src, f), path.join(dir, f));
  copyReadable(path.join(root, 'examples', 'agents'), path.join(dir, 'examples', 'agents'));
  const modules = fs.readdirSync(path.join(root, 'node_modules')).filter((m) => /^(pg|pg-.*|pgpass|postgres-.*|split2|xtend)$/.test(m));
  for (const m of modules) copyReadable(path.join(root, 'node_modules', m), path.join(dir, 'node_modules', m));
  process.env.TEST_FIXTURES_DIR = dir;
  (globalThis as { __FIXTURES_DIR__?: string }).__FIXTURES_DIR__ = dir;
}

export function withDatabase(url: string, db: string): string {
  const u = new URL(url);
  u.pathname = `/${db}`;
  return u.toString();
}

/** Runs scripts/openapi-metadata.js (jest's per-file transform cannot apply the swagger compiler plugin the build applies). */
function generateOpenApiMetadata(): Promise<void> {
  const script = path.join(__dirname, '..', '..', 'scripts', 'openapi-metadata.js');
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`openapi metadata generation failed (${code}): ${stderr}`))));
  });
}
