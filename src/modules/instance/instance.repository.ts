import { Injectable } from '@nestjs/common';
import { Db } from '../../database/db.service';
import { UserRow } from './user.types';

/**
 * Table instance_settings, and the reads and writes of user administration. The users table is
 * owned by the users module, which imports this one (for the settings), so it cannot be asked:
 * those statements stay here.
 */
@Injectable()
export class InstanceRepository {
  constructor(private readonly db: Db) {}

  // ---- instance_settings

  /** The stored JSON of a settings block, or undefined when none was ever written. */
  async readSettings(key: string): Promise<Record<string, unknown> | undefined> {
    const [row] = await this.db.query<{ value: Record<string, unknown> }>(`SELECT value FROM instance_settings WHERE key = $1`, [key]);
    return row?.value;
  }

  /** Merges the patch into the stored block in the database (`value || patch`), so concurrent patches of different fields both survive. */
  async mergeSettings(key: string, patch: Record<string, unknown>): Promise<void> {
    await this.db.query(
      `INSERT INTO instance_settings (key, value) VALUES ($1, $2::jsonb)
       ON CONFLICT (key) DO UPDATE SET value = instance_settings.value || EXCLUDED.value, updated_at = now()`,
      [key, JSON.stringify(patch)],
    );
  }

  // ---- users (owned by users)

  /** Up to 500 users, oldest first; `pattern` (an ILIKE pattern) matches email, name or slug. */
  listUsers(pattern: string | null): Promise<UserRow[]> {
    // reads users (owned by users)
    return this.db.query<UserRow>(
      `SELECT * FROM users
        WHERE $1::text IS NULL OR email ILIKE $1 OR name ILIKE $1 OR slug ILIKE $1
        ORDER BY created_at, id LIMIT 500`,
      [pattern],
    );
  }

  async findUser(userId: string, lock = false): Promise<UserRow | undefined> {
    // reads users (owned by users)
    const [row] = await this.db.query<UserRow>(`SELECT * FROM users WHERE id = $1 ${lock ? 'FOR UPDATE' : ''}`, [userId]);
    return row;
  }

  /** An instance admin (an owner stays owner). */
  async promoteUser(userId: string): Promise<UserRow> {
    // writes users (owned by users)
    const [row] = await this.db.query<UserRow>(
      `WITH changed AS (UPDATE users SET instance_role = coalesce(instance_role, 'admin'), updated_at = now() WHERE id = $1 RETURNING *) SELECT * FROM changed`,
      [userId],
    );
    return row;
  }

  /** The ids of the instance owners and admins, locked for the rest of the transaction. */
  async lockInstanceAdmins(): Promise<string[]> {
    // reads users (owned by users)
    const admins = await this.db.query<{ id: string }>(`SELECT id FROM users WHERE instance_role IS NOT NULL ORDER BY id FOR UPDATE`);
    return admins.map((a) => a.id);
  }

  async demoteUser(userId: string): Promise<UserRow> {
    // writes users (owned by users)
    const [row] = await this.db.query<UserRow>(
      `WITH changed AS (UPDATE users SET instance_role = NULL, updated_at = now() WHERE id = $1 RETURNING *) SELECT * FROM changed`,
      [userId],
    );
    return row;
  }

  // ---- companies (owned by companies)

  /** Which of the ids are companies. */
  async existingCompanyIds(ids: string[]): Promise<string[]> {
    // reads companies (owned by companies)
    const found = await this.db.query<{ id: string }>(`SELECT id FROM companies WHERE id = ANY($1::uuid[])`, [ids]);
    return found.map((f) => f.id);
  }
}
