import type { Client } from 'pg';

/** The statements the CLI runs on the service's database (the commands that must: doctor, claim, restore checks). */
export class CliRepository {
  constructor(private readonly c: Client) {}

  async serverVersion(): Promise<{ version: string; num: number }> {
    const { rows } = await this.c.query<{ v: string; n: string }>(
      `SELECT current_setting('server_version') AS v, current_setting('server_version_num') AS n`,
    );
    return { version: rows[0].v, num: Number(rows[0].n) };
  }

  /** Names of the applied migrations (none when the table does not exist yet). */
  async appliedMigrations(): Promise<string[]> {
    const { rows: exists } = await this.c.query<{ t: string | null }>(`SELECT to_regclass('public.schema_migrations')::text AS t`);
    if (!exists[0].t) return [];
    const { rows } = await this.c.query<{ name: string }>(`SELECT name FROM schema_migrations ORDER BY timestamp, id`);
    return rows.map((r) => r.name);
  }

  /** Whether the instance has an owner (an instance admin). */
  async hasInstanceAdmin(): Promise<boolean> {
    const { rows } = await this.c.query<{ n: number }>(`SELECT count(*)::int AS n FROM users WHERE instance_role IS NOT NULL`);
    return rows[0].n > 0;
  }

  /** A board claim (its token's hash) valid for `hours`. */
  async insertClaim(tokenHash: string, hours: number): Promise<Date> {
    const { rows } = await this.c.query<{ expires_at: Date }>(
      `INSERT INTO board_claims (token_hash, expires_at) VALUES ($1, now() + make_interval(hours => $2)) RETURNING expires_at`,
      [tokenHash, hours],
    );
    return rows[0].expires_at;
  }

  /** Relative paths (under the data directory) of the run logs the database refers to. */
  async runLogPaths(): Promise<string[]> {
    const { rows } = await this.c.query<{ log_path: string }>(`SELECT log_path FROM heartbeat_runs WHERE log_path IS NOT NULL`);
    return rows.map((r) => r.log_path);
  }

  /** Stored secret versions per master key fingerprint (local encrypted ones). */
  async secretKeyFingerprints(): Promise<Array<{ fingerprint: string; versions: number }>> {
    const { rows } = await this.c.query<{ fingerprint: string; versions: number }>(
      `SELECT key_fingerprint AS fingerprint, count(*)::int AS versions FROM company_secret_versions
        WHERE key_fingerprint IS NOT NULL GROUP BY key_fingerprint ORDER BY key_fingerprint`,
    );
    return rows;
  }
}
