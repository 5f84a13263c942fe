import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import * as tar from 'tar';

/** Where a package comes from: a local folder or tarball (`localPath`), or an npm package name (and version or tag). */
export interface PackageSource {
  localPath?: string;
  packageName?: string;
  version?: string;
}
export type PackageSourceKind = 'local' | 'tarball' | 'npm';

const MAX_TARBALL_BYTES = 50 * 1024 * 1024;
export const NPM_NAME = /^(@[a-z0-9][a-z0-9._-]*\/)?[a-z0-9][a-z0-9._-]*$/;

/**
 * Fills `staging` (an empty directory) with a package: a local folder (copied, `.git` left out), a
 * local tarball (`.tgz`/`.tar.gz`/`.tar`, npm pack layout with `package/` or flat), or an npm package
 * fetched from `npmRegistry` (a base URL, e.g. a private registry or a test server). `marker` is the
 * file at the package root (it decides whether `package/` is unwrapped). Errors come from `fail`, so
 * each caller answers with its own error code. Shared by plugins and external adapters.
 */
export async function stagePackage(
  src: PackageSource,
  staging: string,
  npmRegistry: string,
  fail: (message: string) => Error,
  marker: string,
): Promise<{ sourceKind: PackageSourceKind; sourceRef: string }> {
  if (src.localPath) {
    const abs = path.resolve(src.localPath);
    let st: fs.Stats;
    try {
      st = fs.statSync(abs);
    } catch {
      throw fail(`No file or folder at ${src.localPath}`);
    }
    if (st.isDirectory()) {
      fs.cpSync(abs, staging, { recursive: true, filter: (p) => !p.split(path.sep).includes('.git') });
      return { sourceKind: 'local', sourceRef: abs };
    }
    if (st.isFile() && /\.(tgz|tar\.gz|tar)$/.test(abs)) {
      await extract(abs, staging, fail, marker);
      return { sourceKind: 'tarball', sourceRef: abs };
    }
    throw fail('localPath must be a folder or a .tgz/.tar.gz/.tar file');
  }
  if (src.packageName) {
    if (!NPM_NAME.test(src.packageName)) throw fail(`Not an npm package name: ${src.packageName}`);
    const tgz = `${staging}.tgz`;
    const resolved = await fetchNpm(npmRegistry, src.packageName, src.version, tgz, fail);
    try {
      await extract(tgz, staging, fail, marker);
    } finally {
      fs.rmSync(tgz, { force: true });
    }
    return { sourceKind: 'npm', sourceRef: `${src.packageName}@${resolved}` };
  }
  throw fail('Give localPath (folder or tarball) or packageName');
}

async function extract(file: string, dest: string, fail: (message: string) => Error, marker: string): Promise<void> {
  try {
    await tar.x({ file, cwd: dest, strict: true, filter: (p) => !p.split('/').includes('..') });
  } catch (err) {
    throw fail(`Cannot unpack the tarball: ${(err as Error).message}`);
  }
  // npm pack puts everything under package/
  const inner = path.join(dest, 'package');
  if (!fs.existsSync(path.join(dest, marker)) && fs.existsSync(path.join(inner, marker))) {
    for (const name of fs.readdirSync(inner)) fs.renameSync(path.join(inner, name), path.join(dest, name));
    fs.rmdirSync(inner);
  }
}

async function fetchNpm(
  registry: string,
  name: string,
  version: string | undefined,
  to: string,
  fail: (message: string) => Error,
): Promise<string> {
  const metaUrl = `${registry}/${name.replace('/', '%2f')}`;
  const meta = await fetch(metaUrl, { headers: { accept: 'application/json' }, signal: AbortSignal.timeout(30_000) }).catch(
    (err: Error) => {
      throw fail(`npm registry unreachable: ${err.message}`);
    },
  );
  if (!meta.ok) throw fail(`npm registry answered ${meta.status} for ${name}`);
  const doc = (await meta.json()) as {
    'dist-tags'?: Record<string, string>;
    versions?: Record<string, { dist?: { tarball?: string; integrity?: string; shasum?: string } }>;
  };
  const v = version ? (doc['dist-tags']?.[version] ?? version) : doc['dist-tags']?.latest;
  const dist = v ? doc.versions?.[v]?.dist : undefined;
  const tarball = dist?.tarball;
  if (!v || !tarball) throw fail(`${name}@${version ?? 'latest'} not found in the registry`);
  const res = await fetch(tarball, { signal: AbortSignal.timeout(60_000) });
  if (!res.ok || !res.body) throw fail(`tarball download answered ${res.status}`);
  // the registry's digest of the tarball (sha512 integrity, else the legacy sha1 shasum) must match what arrived
  const sri = /^sha512-([A-Za-z0-9+/=]+)$/.exec(dist?.integrity?.split(/\s+/).find((i) => i.startsWith('sha512-')) ?? '');
  const expected = sri
    ? { algo: 'sha512', digest: Buffer.from(sri[1], 'base64').toString('hex') }
    : dist?.shasum
      ? { algo: 'sha1', digest: dist.shasum.toLowerCase() }
      : null;
  if (!expected) throw fail(`${name}@${v}: the registry gives no integrity or shasum for the tarball`);
  const hash = createHash(expected.algo);
  let bytes = 0;
  const body = Readable.fromWeb(res.body as never).on('data', (c: Buffer) => {
    bytes += c.length;
    hash.update(c);
    if (bytes > MAX_TARBALL_BYTES) body.destroy(new Error('tarball larger than 50 MB'));
  });
  await pipeline(body, fs.createWriteStream(to));
  if (hash.digest('hex') !== expected.digest) {
    fs.rmSync(to, { force: true });
    throw fail(`${name}@${v}: the downloaded tarball does not match the registry's ${expected.algo} digest`);
  }
  return v;
}
