import { ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createCompany } from '../support/factories';
import { FIXTURES } from '../support/heartbeat';
import { createProject, createWorkspace } from '../support/projects';
import { skillMd } from '../support/skills';
import { createTestApp, TestApp } from '../support/test-app';

/**
 * Issue 41, door 1: the service reads a tenant's local folders as root. A tenant's process swaps a
 * name between a symbolic link to a root-only file and a hard link of a plain file while the owner
 * imports the folder again and again; the root-only content must never come back, and entries that
 * vanish during a walk never make a 500.
 */
const asRoot = process.getuid?.() === 0;
const rootIt = asRoot ? it : it.skip;
/** the tenant's uid and gid (no passwd entry needed) */
const TENANT = 2_999_041;
const SWAP_SECONDS = 12;
const SWAPPED = ['notes.md', 'n2.md', 'n3.md', 'n4.md'];

/** A swapper process under the tenant's uid in `dir` (see test/fixtures/link-swapper.js). */
function startSwapper(dir: string, target: string, extra: string[] = []): { child: ChildProcess; swaps: Promise<number> } {
  const child = spawn(
    'setpriv',
    [
      '--reuid',
      String(TENANT),
      '--regid',
      String(TENANT),
      '--clear-groups',
      '--',
      process.execPath,
      path.join(FIXTURES, 'link-swapper.js'),
      dir,
      target,
      String(SWAP_SECONDS),
      ...SWAPPED,
      ...extra,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  const swaps = new Promise<number>((resolve) => child.on('exit', () => resolve(Number(out) || 0)));
  return { child, swaps };
}

describe('local reads for a tenant never follow a swapped link (issue 41)', () => {
  let t: TestApp;
  let base: string;
  const secrets: string[] = [];
  const targets: string[] = [];
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    t = await createTestApp();
    base = fs.mkdtempSync(path.join(os.tmpdir(), 'tenant-files-'));
    fs.chmodSync(base, 0o755);
    // a root-only file in the data directory (the db-password) and one outside it
    const outside = fs.mkdtempSync(path.join(os.tmpdir(), 'root-secret-'));
    fs.chmodSync(outside, 0o755);
    for (const file of [path.join(t.dataDir, 'db-password'), path.join(outside, 'root-secret')]) {
      const secret = `ROOT-ONLY-${randomBytes(8).toString('hex')}`;
      fs.writeFileSync(file, secret, { mode: 0o600 });
      secrets.push(secret);
      targets.push(file);
    }
  });
  afterAll(async () => {
    for (const c of children) c.kill('SIGKILL');
    await t.close();
    fs.rmSync(base, { recursive: true, force: true });
    fs.rmSync(path.dirname(targets[1]), { recursive: true, force: true });
  });

  /** `<parent>/<name>`: a skill whose references/ folder belongs to the tenant. */
  function tenantSkill(parent: string, name: string): string {
    const dir = path.join(parent, name);
    const refs = path.join(dir, 'references');
    fs.mkdirSync(refs, { recursive: true, mode: 0o755 });
    fs.writeFileSync(path.join(dir, 'SKILL.md'), skillMd(name));
    fs.writeFileSync(path.join(refs, 'plain.src'), 'plain reference\n', { mode: 0o644 });
    for (const n of SWAPPED) fs.writeFileSync(path.join(refs, n), 'plain reference\n', { mode: 0o644 });
    for (const p of [refs, ...fs.readdirSync(refs).map((f) => path.join(refs, f))]) fs.chownSync(p, TENANT, TENANT);
    return dir;
  }

  /** Races `act` against two swappers (one per root-only target) until they stop; returns every body read and status. */
  async function race(refs: string, act: () => Promise<Array<{ status: number; text: string }>>, extra: string[] = []) {
    const swappers = targets.map((target, i) => startSwapper(refs, target, i === 0 ? extra : []));
    children.push(...swappers.map((s) => s.child));
    const seen: Array<{ status: number; text: string }> = [];
    let rounds = 0;
    const done = Promise.all(swappers.map((s) => s.swaps));
    let finished = false;
    void done.then(() => (finished = true));
    while (!finished) {
      seen.push(...(await act()));
      rounds++;
    }
    const swaps = await done;
    return { seen, rounds, swaps };
  }

  rootIt(
    'POST skills/import: a swapped link never hands the tenant a root-only file; vanishing entries are skipped (never 500)',
    async () => {
      const c = await createCompany(t);
      const dir = tenantSkill(base, 'swapped-skill');
      const { seen, rounds, swaps } = await race(
        path.join(dir, 'references'),
        async () => {
          const res = await t.http.post(`/api/companies/${c.id}/skills/import`).send({ source: dir });
          const out = [{ status: res.status, text: res.text }];
          const id = res.body?.imported?.[0]?.id;
          if (id) {
            for (const n of SWAPPED) {
              const f = await t.http.get(`/api/companies/${c.id}/skills/${id}/files`).query({ path: `references/${n}` });
              out.push({ status: f.status === 404 ? 200 : f.status, text: f.text });
            }
          }
          return out;
        },
        ['--vanish'],
      );
      expect(swaps.every((n) => n > 0)).toBe(true);
      expect(rounds).toBeGreaterThan(3);
      for (const s of seen) {
        expect(s.status === 200 ? 200 : s).toBe(200);
        for (const secret of secrets) expect(s.text).not.toContain(secret);
      }
    },
  );

  rootIt('POST skills/scan-projects: the same race through a project workspace', async () => {
    const c = await createCompany(t);
    const ws = fs.mkdtempSync(path.join(base, 'ws-'));
    fs.chmodSync(ws, 0o755);
    fs.mkdirSync(path.join(ws, 'skills'), { mode: 0o755 });
    const dir = tenantSkill(path.join(ws, 'skills'), 'scanned-skill');
    const p = await createProject(t, c.id);
    await createWorkspace(t, p.id, { cwd: ws });
    const { seen, rounds } = await race(path.join(dir, 'references'), async () => {
      const res = await t.http.post(`/api/companies/${c.id}/skills/scan-projects`).send({});
      const out = [{ status: res.status, text: res.text }];
      const list = await t.http.get(`/api/companies/${c.id}/skills`);
      const id = (list.body as Array<{ id: string; slug: string }>).find((s) => s.slug === 'scanned-skill')?.id;
      if (id) {
        for (const n of SWAPPED) {
          const f = await t.http.get(`/api/companies/${c.id}/skills/${id}/files`).query({ path: `references/${n}` });
          out.push({ status: f.status === 404 ? 200 : f.status, text: f.text });
        }
      }
      return out;
    });
    expect(rounds).toBeGreaterThan(3);
    for (const s of seen) {
      expect(s.status === 200 ? 200 : s).toBe(200);
      for (const secret of secrets) expect(s.text).not.toContain(secret);
    }
  });
});
