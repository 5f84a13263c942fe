import { createHash, randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import * as tar from 'tar';
import { MANIFEST_FILE, parseManifest, PluginManifest } from './manifest';
import { pluginError } from './plugins.errors';
import type { PluginSourceKind } from './plugins.repository';

export interface PackageSource { localPath?: string; packageName?: string; version?: string }
export interface UnpackedPackage { manifest: PluginManifest; installPath: string; sourceKind: PluginSourceKind; sourceRef: string }

const MAX_TARBALL_BYTES = 50 * 1024 * 1024;
const NPM_NAME = /^(@[a-z0-9][a-z0-9._-]*\/)?[a-z0-9][a-z0-9._-]*$/;

/**
 * Unpacks a plugin package into `<installDir>/<key>/<version>-<random>` and validates its manifest:
 * a local folder (copied), a local tarball (`.tgz`/`.tar.gz`, npm pack layout with `package/`
 * or flat), or an npm package fetched from the configured registry base URL.
 */
export async function unpackPackage(src: PackageSource, installDir: string, npmRegistry: string): Promise<UnpackedPackage> {
  const staging = path.join(installDir, '.staging', randomUUID());
  fs.mkdirSync(staging, { recursive: true, mode: 0o755 });
  try {
    let sourceKind: PluginSourceKind;
    let sourceRef: string;
    if (src.localPath) {
      const abs = path.resolve(src.localPath);
      let st: fs.Stats;
      try {
        st = fs.statSync(abs);
      } catch {
        throw pluginError('plugin_source_invalid', `No file or folder at ${src.localPath}`);
      }
      if (st.isDirectory()) {
        fs.cpSync(abs, staging, { recursive: true, filter: (p) => !p.split(path.sep).includes('.git') });
        sourceKind = 'local';
      } else if (st.isFile() && /\.(tgz|tar\.gz|tar)$/.test(abs)) {
        await extract(abs, staging);
        sourceKind = 'tarball';
      } else {
        throw pluginError('plugin_source_invalid', 'localPath must be a folder or a .tgz/.tar.gz/.tar file');
      }
      sourceRef = abs;
    } else if (src.packageName) {
      if (!NPM_NAME.test(src.packageName)) throw pluginError('plugin_source_invalid', `Not an npm package name: ${src.packageName}`);
      const tgz = path.join(staging, '..', `${path.basename(staging)}.tgz`);
      const resolved = await fetchNpm(npmRegistry, src.packageName, src.version, tgz);
      try {
        await extract(tgz, staging);
      } finally {
        fs.rmSync(tgz, { force: true });
      }
      sourceKind = 'npm';
      sourceRef = `${src.packageName}@${resolved}`;
    } else {
      throw pluginError('plugin_source_invalid', 'Give localPath (folder or tarball) or packageName');
    }
    const manifest = readManifest(staging);
    if (!fs.existsSync(path.join(staging, manifest.entry))) throw pluginError('plugin_manifest_invalid', `entry ${manifest.entry} not found in the package`, { problems: [`entry ${manifest.entry} missing`] });
    const installPath = path.join(installDir, manifest.key, `${manifest.version}-${randomUUID().slice(0, 8)}`);
    fs.mkdirSync(path.dirname(installPath), { recursive: true, mode: 0o755 });
    fs.renameSync(staging, installPath);
    return { manifest, installPath, sourceKind, sourceRef };
  } catch (err) {
    fs.rmSync(staging, { recursive: true, force: true });
    throw err;
  }
}

export function readManifest(dir: string): PluginManifest {
  let raw: unknown;
  try {
    raw = JSON.parse(fs.readFileSync(path.join(dir, MANIFEST_FILE), 'utf8'));
  } catch (err) {
    throw pluginError('plugin_manifest_invalid', `${MANIFEST_FILE} missing or not JSON: ${(err as Error).message}`, { problems: [`${MANIFEST_FILE} unreadable`] });
  }
  const parsed = parseManifest(raw);
  if (!parsed.manifest) throw pluginError('plugin_manifest_invalid', `Invalid plugin manifest: ${parsed.problems.join('; ')}`, { problems: parsed.problems });
  return parsed.manifest;
}

/** Removes an unpacked version (best effort). */
export function removeInstall(installPath: string, installDir: string): void {
  const abs = path.resolve(installPath);
  if (!abs.startsWith(path.resolve(installDir) + path.sep)) return;
  fs.rmSync(abs, { recursive: true, force: true });
}

async function extract(file: string, dest: string): Promise<void> {
  try {
    await tar.x({ file, cwd: dest, strict: true, filter: (p) => !p.split('/').includes('..') });
  } catch (err) {
    throw pluginError('plugin_source_invalid', `Cannot unpack the tarball: ${(err as Error).message}`);
  }
  // npm pack puts everything under package/
  const inner = path.join(dest, 'package');
  if (!fs.existsSync(path.join(dest, MANIFEST_FILE)) && fs.existsSync(path.join(inner, MANIFEST_FILE))) {
    for (const name of fs.readdirSync(inner)) fs.renameSync(path.join(inner, name), path.join(dest, name));
    fs.rmdirSync(inner);
  }
}

async function fetchNpm(registry: string, name: string, version: string | undefined, to: string): Promise<string> {
  const metaUrl = `${registry}/${name.replace('/', '%2f')}`;
  const meta = await fetch(metaUrl, { headers: { accept: 'application/json' }, signal: AbortSignal.timeout(30_000) }).catch((err: Error) => {
    throw pluginError('plugin_source_invalid', `npm registry unreachable: ${err.message}`);
  });
  if (!meta.ok) throw pluginError('plugin_source_invalid', `npm registry answered ${meta.status} for ${name}`);
  const doc = (await meta.json()) as { 'dist-tags'?: Record<string, string>; versions?: Record<string, { dist?: { tarball?: string; integrity?: string; shasum?: string } }> };
  const v = version ? (doc['dist-tags']?.[version] ?? version) : doc['dist-tags']?.latest;
  const dist = v ? doc.versions?.[v]?.dist : undefined;
  const tarball = dist?.tarball;
  if (!v || !tarball) throw pluginError('plugin_source_invalid', `${name}@${version ?? 'latest'} not found in the registry`);
  const res = await fetch(tarball, { signal: AbortSignal.timeout(60_000) });
  if (!res.ok || !res.body) throw pluginError('plugin_source_invalid', `tarball download answered ${res.status}`);
  // the registry's digest of the tarball (sha512 integrity, else the legacy sha1 shasum) must match what arrived
  const sri = /^sha512-([A-Za-z0-9+/=]+)$/.exec(dist?.integrity?.split(/\s+/).find((i) => i.startsWith('sha512-')) ?? '');
  const expected = sri ? { algo: 'sha512', digest: Buffer.from(sri[1], 'base64').toString('hex') } : dist?.shasum ? { algo: 'sha1', digest: dist.shasum.toLowerCase() } : null;
  if (!expected) throw pluginError('plugin_source_invalid', `${name}@${v}: the registry gives no integrity or shasum for the tarball`);
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
    throw pluginError('plugin_source_invalid', `${name}@${v}: the downloaded tarball does not match the registry's ${expected.algo} digest`);
  }
  return v;
}
