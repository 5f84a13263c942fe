import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/**
 * The suite runs wherever the user's temporary folder is. With TMPDIR pointing at another folder
 * (macOS, many CI systems) the service's default workspace roots are HOME, that folder and /srv;
 * test helpers that made workspaces at a hard-coded /tmp/<uuid> got 422 path_not_allowed (about 20
 * tests of workspaces, projects and company references failed). os.tmpdir() cannot be moved inside
 * a jest worker (its process.env is a copy), so this runs test/tmpdir/*.tmpdir-spec.ts in a child
 * jest with TMPDIR set, on this run's database server; test/unit/tmpdir.spec.ts keeps /tmp out of
 * src and test.
 */
describe('the tests with TMPDIR pointing at another folder', () => {
  it('pass: the helpers take their folders from os.tmpdir()', async () => {
    const elsewhere = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-tmpdir-'));
    fs.chmodSync(elsewhere, 0o755);
    try {
      const root = path.join(__dirname, '..', '..');
      const env: NodeJS.ProcessEnv = { ...process.env, TMPDIR: elsewhere, JEST_WORKERS: '1' };
      delete env.JEST_WORKER_ID;
      const child = spawn(process.execPath, [require.resolve('jest/bin/jest'), '-c', 'test/tmpdir/jest.config.js', '--runInBand', '--ci'], {
        cwd: root,
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      child.stdout.on('data', (d) => (out += d));
      child.stderr.on('data', (d) => (out += d));
      const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
      expect({ code, out }).toEqual({ code: 0, out: expect.stringMatching(/Tests:\s+3 passed, 3 total/) });
    } finally {
      fs.rmSync(elsewhere, { recursive: true, force: true });
    }
  }, 180_000);
});
