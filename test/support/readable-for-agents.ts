import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

/**
 * `file` (inside the installed package `pkgRoot`) as a path the agents' own uids can run. In a
 * checkout others cannot enter (root's 0700 home, a `mktemp -d`; global-setup then sets
 * TEST_FIXTURES_DIR), the package is copied once per test run into that readable folder.
 */
export function readableForAgents(file: string, pkgRoot: string): string {
  const base = process.env.TEST_FIXTURES_DIR;
  if (!base) return file;
  const dest = path.join(base, 'cli', path.basename(path.dirname(pkgRoot)) + '__' + path.basename(pkgRoot));
  if (!fs.existsSync(dest)) copyReadable(pkgRoot, dest);
  return path.join(dest, path.relative(pkgRoot, file));
}

/** Copies `src` to `dest`, readable (and folders enterable) by everyone; atomic, first copy wins. */
export function copyReadable(src: string, dest: string): void {
  fs.mkdirSync(path.dirname(dest), { recursive: true, mode: 0o755 });
  const tmp = `${dest}.${process.pid}.${Date.now()}`;
  fs.cpSync(src, tmp, { recursive: true });
  execFileSync('chmod', ['-R', 'a+rX', tmp]);
  try {
    fs.renameSync(tmp, dest);
  } catch {
    // another test file copied it meanwhile
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}
