import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { ROOT } from '../support/source-files';

/**
 * No hard-coded /tmp in src or test: folders come from `os.tmpdir()` (test/support/tmp.ts) or a
 * folder the test made. With TMPDIR set elsewhere (macOS, many CI systems) the service's default
 * workspace roots hold that folder, not /tmp, and a test using `/tmp/…` got 422 path_not_allowed
 * (test/e2e/tmpdir.e2e-spec.ts runs the helpers with TMPDIR elsewhere).
 */
const ALLOWED = new Set([
  // a traversal probe: it resolves to /etc wherever the temporary folder is
  'test/e2e/path-roots.e2e-spec.ts: /tmp/../etc',
]);

function sources(dir: string): string[] {
  const out: string[] = [];
  const walk = (abs: string): void => {
    for (const name of readdirSync(abs)) {
      const p = join(abs, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (/\.(ts|js)$/.test(name) && !name.endsWith('.d.ts')) out.push(relative(ROOT, p).split(sep).join('/'));
    }
  };
  walk(join(ROOT, dir));
  return out;
}

/** String and template literals that start with /tmp (`'/tmp/x'`, `` `/tmp/${id}` ``), as `file: text`. */
function hardCodedTmp(file: string): string[] {
  const text = readFileSync(join(ROOT, file), 'utf8');
  return [...text.matchAll(/(['"`])(\/tmp(?:\/[^'"`$]*)?)(?=['"`$])/g)].map((m) => `${file}: ${m[2]}`);
}

describe('temporary folders', () => {
  it('src and test never hard-code /tmp', () => {
    const found = [...sources('src'), ...sources('test')]
      .filter((f) => f !== 'test/unit/tmpdir.spec.ts')
      .flatMap(hardCodedTmp)
      .filter((f) => !ALLOWED.has(f));
    expect(found).toEqual([]);
  });
});
