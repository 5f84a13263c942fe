import type { Client } from 'pg';
import { OperatorRepository } from '../database/company-scoped.repository';

const CATALOG = 'operator CLI: the server and the migration catalog, not a table of any module';
const INSTANCE_WIDE = 'operator CLI (aos doctor), run without the service: instance-wide facts across every company';

/**
 * The statements the CLI runs on the service's database (the commands that must: doctor, claim,
 * restore checks). It runs in its own process without the service, so the owners' repositories are
 * not there to ask: each statement says why it reads (or, for `aos claim-token`, writes) here.
 */
export class CliRepository extends OperatorRepository {
  constructor(client: Client) {
    super(client);
  }

  async serverVersion(): Promise<{ version: string; num: number }> {
    const rows = await this.unscoped<{ v: string; n: string }>(
      CATALOG,
      `SELECT current_setting('server_version') AS v, current_setting('server_version_num') AS n`,
    );
    return { version: rows[0].v, num: Number(rows[0].n) };
  }

  /** Names of the applied migrations (none when the table does not exist yet). */
  async appliedMigrations(): Promise<string[]> {
    const exists = await this.unscoped<{ t: string | null }>(CATALOG, `SELECT to_regclass('public.schema_migrations')::text AS t`);
    if (!exists[0].t) return [];
    const rows = await this.unscoped<{ name: string }>(CATALOG, `SELECT name FROM schema_migrations ORDER BY timestamp, id`);
    return rows.map((r) => r.name);
  }

  /** Whether the instance has an owner (an instance admin). */
  async hasInstanceAdmin(): Promise<boolean> {
    const rows = await this.unscoped<{ n: number }>(INSTANCE_WIDE, `SELECT count(*)::int AS n FROM users WHERE instance_role IS NOT NULL`);
    return rows[0].n > 0;
  }

  /** A board claim (its token's hash) valid for `hours`. */
  async insertClaim(tokenHash: string, hours: number): Promise<Date> {
    const rows = await this.unscoped<{ expires_at: Date }>(
      'aos claim-token: the operator issues the first board claim before any user exists, with the service stopped or not',
      `INSERT INTO board_claims (token_hash, expires_at) VALUES ($1, now() + make_interval(hours => $2)) RETURNING expires_at`,
      [tokenHash, hours],
    );
    return rows[0].expires_at;
  }

  /** Relative paths (under the data directory) of the run logs the database refers to. */
  async runLogPaths(): Promise<string[]> {
    const rows = await this.unscoped<{ log_path: string }>(INSTANCE_WIDE, `SELECT log_path FROM heartbeat_runs WHERE log_path IS NOT NULL`);
    return rows.map((r) => r.log_path);
  }

  /** Stored secret versions per master key fingerprint (local encrypted ones). */
  async secretKeyFingerprints(): Promise<Array<{ fingerprint: string; versions: number }>> {
    return this.unscoped<{ fingerprint: string; versions: number }>(
      INSTANCE_WIDE,
      `SELECT key_fingerprint AS fingerprint, count(*)::int AS versions FROM company_secret_versions
        WHERE key_fingerprint IS NOT NULL GROUP BY key_fingerprint ORDER BY key_fingerprint`,
    );
  }
}
