import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { PackageSource, stagePackage } from '../../common/packages/package-source';
import { CodeOwner, copySource, hashTree, insecureSourceReason, sealTree, unsealableReason } from '../../common/packages/sealed-code';
import { MANIFEST_FILE, parseManifest, PluginManifest } from './manifest';
import { pluginError } from './plugins.errors';
import type { PluginSourceKind } from './plugins.repository';

export type { PackageSource };
export interface UnpackedPackage {
  manifest: PluginManifest;
  installPath: string;
  sourceKind: PluginSourceKind;
  sourceRef: string;
  /** sha256 of the sealed tree (see hashTree) */
  codeHash: string;
}

/**
 * Seals a plugin package into `<installDir>/<key>/<version>-<random>` and validates its manifest:
 * a local folder (copied, never used in place), a local tarball (`.tgz`/`.tar.gz`, npm pack layout
 * with `package/` or flat), or an npm package fetched from the configured registry base URL. A local
 * source writable by others is refused (422 install_source_insecure). The copy is owned by the
 * service, readable by `owner.gid` (the plugin worker group), writable by no one else; its tree hash
 * is answered for the record.
 */
export async function unpackPackage(
  src: PackageSource,
  installDir: string,
  npmRegistry: string,
  owner: CodeOwner,
): Promise<UnpackedPackage> {
  const fail = (m: string) => pluginError('plugin_source_invalid', m);
  if (src.localPath) {
    const local = path.resolve(src.localPath);
    if (fs.existsSync(local) && fs.statSync(local).isDirectory() && !fs.existsSync(path.join(local, MANIFEST_FILE)))
      throw pluginError('plugin_manifest_invalid', `${MANIFEST_FILE} missing in ${src.localPath}`, {
        problems: [`${MANIFEST_FILE} missing`],
      });
    const why = insecureSourceReason(src.localPath);
    if (why) throw pluginError('install_source_insecure', `Refusing to install from ${src.localPath}: ${why}`, { reason: why });
  }
  const staging = path.join(installDir, '.staging', randomUUID());
  fs.mkdirSync(path.dirname(staging), { recursive: true, mode: 0o700 });
  fs.mkdirSync(staging, { mode: 0o700 });
  try {
    let source: { sourceKind: PluginSourceKind; sourceRef: string };
    const local = src.localPath ? path.resolve(src.localPath) : null;
    if (local && fs.existsSync(local) && fs.statSync(local).isDirectory()) {
      copySource(local, staging, fail);
      source = { sourceKind: 'local', sourceRef: local };
    } else {
      source = await stagePackage(src, staging, npmRegistry, fail, MANIFEST_FILE);
      const bad = unsealableReason(staging);
      if (bad) throw fail(`Cannot install the package: ${bad}`);
    }
    const manifest = readManifest(staging);
    if (!fs.existsSync(path.join(staging, manifest.entry)))
      throw pluginError('plugin_manifest_invalid', `entry ${manifest.entry} not found in the package`, {
        problems: [`entry ${manifest.entry} missing`],
      });
    sealTree(staging, owner);
    const codeHash = hashTree(staging);
    const installPath = path.join(installDir, manifest.key, `${manifest.version}-${randomUUID().slice(0, 8)}`);
    fs.mkdirSync(path.dirname(installPath), { recursive: true, mode: 0o750 });
    fs.chownSync(path.dirname(installPath), owner.uid, owner.gid);
    fs.chmodSync(path.dirname(installPath), 0o750);
    fs.renameSync(staging, installPath);
    return { manifest, installPath, codeHash, ...source };
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
    throw pluginError('plugin_manifest_invalid', `${MANIFEST_FILE} missing or not JSON: ${(err as Error).message}`, {
      problems: [`${MANIFEST_FILE} unreadable`],
    });
  }
  const parsed = parseManifest(raw);
  if (!parsed.manifest)
    throw pluginError('plugin_manifest_invalid', `Invalid plugin manifest: ${parsed.problems.join('; ')}`, { problems: parsed.problems });
  return parsed.manifest;
}

/** Removes an unpacked version (best effort). */
export function removeInstall(installPath: string, installDir: string): void {
  const abs = path.resolve(installPath);
  if (!abs.startsWith(path.resolve(installDir) + path.sep)) return;
  fs.rmSync(abs, { recursive: true, force: true });
}
