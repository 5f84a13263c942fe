import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { PackageSource, stagePackage } from '../../common/packages/package-source';
import { MANIFEST_FILE, parseManifest, PluginManifest } from './manifest';
import { pluginError } from './plugins.errors';
import type { PluginSourceKind } from './plugins.repository';

export type { PackageSource };
export interface UnpackedPackage {
  manifest: PluginManifest;
  installPath: string;
  sourceKind: PluginSourceKind;
  sourceRef: string;
}

/**
 * Unpacks a plugin package into `<installDir>/<key>/<version>-<random>` and validates its manifest:
 * a local folder (copied), a local tarball (`.tgz`/`.tar.gz`, npm pack layout with `package/`
 * or flat), or an npm package fetched from the configured registry base URL.
 */
export async function unpackPackage(src: PackageSource, installDir: string, npmRegistry: string): Promise<UnpackedPackage> {
  const staging = path.join(installDir, '.staging', randomUUID());
  fs.mkdirSync(staging, { recursive: true, mode: 0o755 });
  try {
    const { sourceKind, sourceRef } = await stagePackage(
      src,
      staging,
      npmRegistry,
      (m) => pluginError('plugin_source_invalid', m),
      MANIFEST_FILE,
    );
    const manifest = readManifest(staging);
    if (!fs.existsSync(path.join(staging, manifest.entry)))
      throw pluginError('plugin_manifest_invalid', `entry ${manifest.entry} not found in the package`, {
        problems: [`entry ${manifest.entry} missing`],
      });
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
