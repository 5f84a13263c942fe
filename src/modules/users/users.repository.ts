import { Injectable } from '@nestjs/common';
import { InstanceRepository } from '../../database/company-scoped.repository';
import { Db } from '../../database/db.service';
import { recordColumns } from '../../database/row-mapping';
import { UserRecord } from '../instance/user.types';

const USER_COLUMNS = 'id, email, name, slug, image, bio, password_hash, instance_role, created_at, updated_at';
const COLS = recordColumns(USER_COLUMNS);

export interface ClaimRecord {
  id: string;
  expiresAt: Date;
  claimedAt: Date | null;
}

export interface AttemptCount {
  key: string;
  attempts: number;
  retryAfter: number;
}

export type ProfileChanges = Partial<Record<'name' | 'image' | 'bio', unknown>>;

/** Tables users, board_claims and auth_rate_limits. */
@Injectable()
export class UsersRepository extends InstanceRepository {
  constructor(db: Db) {
    super(db);
  }

  // ---- users

  /** Whether any user has a password (sign-up may be closed once one has). */
  async anyWithPassword(): Promise<boolean> {
    const [any] = await this.rows(`SELECT 1 FROM users WHERE password_hash IS NOT NULL LIMIT 1`);
    return Boolean(any);
  }

  /** `email` already normalised (lower case). */
  async findByEmail(email: string): Promise<UserRecord | undefined> {
    const [user] = await this.rows<UserRecord>(`SELECT ${COLS} FROM users WHERE lower(email) = $1`, [email]);
    return user;
  }

  async emailTaken(email: string): Promise<boolean> {
    const [taken] = await this.rows(`SELECT 1 FROM users WHERE lower(email) = $1`, [email]);
    return Boolean(taken);
  }

  /** `lock`: FOR UPDATE, for the rest of the transaction. */
  async findById(userId: string, lock = false): Promise<UserRecord | undefined> {
    const [row] = await this.rows<UserRecord>(`SELECT ${COLS} FROM users WHERE id = $1 ${lock ? 'FOR UPDATE' : ''}`, [userId]);
    return row;
  }

  /** Up to 500 users, oldest first; `pattern` (an ILIKE pattern) matches email, name or slug. */
  list(pattern: string | null): Promise<UserRecord[]> {
    return this.rows<UserRecord>(
      `SELECT ${COLS} FROM users
        WHERE $1::text IS NULL OR email ILIKE $1 OR name ILIKE $1 OR slug ILIKE $1
        ORDER BY created_at, id LIMIT 500`,
      [pattern],
    );
  }

  /** An instance admin (an owner stays owner). */
  promote(userId: string): Promise<UserRecord> {
    return this.setInstanceRole(userId, `coalesce(instance_role, 'admin')`);
  }

  /** The ids of the instance owners and admins, locked for the rest of the transaction. */
  async lockInstanceAdmins(): Promise<string[]> {
    const admins = await this.rows<{ id: string }>(`SELECT id FROM users WHERE instance_role IS NOT NULL ORDER BY id FOR UPDATE`);
    return admins.map((a) => a.id);
  }

  /** No instance role any more. */
  demote(userId: string): Promise<UserRecord> {
    return this.setInstanceRole(userId, 'NULL');
  }

  /** The new user, or undefined when the email or slug is taken (ON CONFLICT DO NOTHING). */
  async insertWithPassword(email: string, name: string, slug: string, passwordHash: string): Promise<UserRecord | undefined> {
    const [row] = await this.rows<UserRecord>(
      `INSERT INTO users (email, name, slug, password_hash) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING RETURNING ${COLS}`,
      [email, name, slug, passwordHash],
    );
    return row;
  }

  /** A profile row for a user without one (the local board): its id is also its slug. */
  async insertProfileIfMissing(userId: string, name: string): Promise<void> {
    await this.rows(`INSERT INTO users (id, name, slug) VALUES ($1, $2, $1) ON CONFLICT DO NOTHING`, [userId, name]);
  }

  /** Sets the given fields (undefined ones are left as they are); nothing is written when none is given. */
  async updateProfile(userId: string, changes: ProfileChanges): Promise<void> {
    const sets: string[] = [];
    const params: unknown[] = [userId];
    for (const field of ['name', 'image', 'bio'] as const) {
      if (changes[field] === undefined) continue;
      params.push(changes[field]);
      sets.push(`${field} = $${params.length}`);
    }
    if (sets.length) await this.rows(`UPDATE users SET ${sets.join(', ')}, updated_at = now() WHERE id = $1`, params);
  }

  /** A user of a company by slug (preferred) or id, with their membership there. */
  async findCompanyProfile(
    companyId: string,
    userSlug: string,
  ): Promise<(UserRecord & { membershipRole: string; membershipStatus: string }) | undefined> {
    const row = await this.unscopedRow<UserRecord & { membershipRole: string; membershipStatus: string }>(
      "the profile page of a company's user: joins their membership of that company ($1) (read of access's table, FOREIGN_READS)",
      `SELECT ${recordColumns(USER_COLUMNS, 'u')}, m.membership_role AS "membershipRole", m.status AS "membershipStatus"
         FROM users u JOIN company_memberships m ON m.principal_type = 'user' AND m.principal_id = u.id AND m.company_id = $1
        WHERE u.slug = $2 OR u.id = $2
        ORDER BY (u.slug = $2) DESC LIMIT 1`,
      [companyId, userSlug],
    );
    return row ?? undefined;
  }

  /** Whether the instance has an owner or admin. */
  async hasInstanceAdmin(): Promise<boolean> {
    const rows = await this.rows(`SELECT 1 FROM users WHERE instance_role IS NOT NULL LIMIT 1`);
    return rows.length > 0;
  }

  makeOwner(userId: string): Promise<UserRecord> {
    return this.setInstanceRole(userId, `'owner'`);
  }

  /** The user with `instance_role` set to the SQL expression `role` (a constant of this class). */
  private async setInstanceRole(userId: string, role: string): Promise<UserRecord> {
    const [row] = await this.rows<UserRecord>(
      `WITH changed AS (UPDATE users SET instance_role = ${role}, updated_at = now() WHERE id = $1 RETURNING ${COLS}) SELECT * FROM changed`,
      [userId],
    );
    return row;
  }

  // ---- board_claims

  async insertClaim(tokenHash: string, validityHours: number): Promise<void> {
    await this.rows(`INSERT INTO board_claims (token_hash, expires_at) VALUES ($1, now() + make_interval(hours => $2))`, [
      tokenHash,
      validityHours,
    ]);
  }

  /** Serialises claims for the rest of the transaction (one instance-wide advisory lock). */
  async lockClaims(): Promise<void> {
    await this.rows(`SELECT pg_advisory_xact_lock(hashtext('board_claim'))`);
  }

  async findClaim(tokenHash: string, lock = false): Promise<ClaimRecord | undefined> {
    const [row] = await this.rows<ClaimRecord>(
      `SELECT id, expires_at AS "expiresAt", claimed_at AS "claimedAt" FROM board_claims WHERE token_hash = $1 ${lock ? 'FOR UPDATE' : ''}`,
      [tokenHash],
    );
    return row;
  }

  async markClaimed(claimId: string, userId: string): Promise<void> {
    await this.rows(`UPDATE board_claims SET claimed_at = now(), claimed_by_user_id = $2 WHERE id = $1`, [claimId, userId]);
  }

  // ---- auth_rate_limits

  /**
   * One attempt more for each key (a new window once the key's is over), in one atomic upsert.
   * Outside any transaction (straight on the pool): the count must commit even when the request fails.
   */
  async countAttempts(keys: string[], windowSec: number): Promise<AttemptCount[]> {
    return this.rows<AttemptCount>(
      `INSERT INTO auth_rate_limits AS l (key, attempts, window_start)
       SELECT k, 1, now() FROM unnest($1::text[]) AS k
       ON CONFLICT (key) DO UPDATE SET
         attempts = CASE WHEN l.window_start < now() - make_interval(secs => $2) THEN 1 ELSE l.attempts + 1 END,
         window_start = CASE WHEN l.window_start < now() - make_interval(secs => $2) THEN now() ELSE l.window_start END
       RETURNING key, attempts, ceil(extract(epoch FROM l.window_start + make_interval(secs => $2) - now()))::int AS "retryAfter"`,
      [keys, windowSec],
      { detached: true },
    );
  }

  async deleteAttempts(keys: string[]): Promise<void> {
    await this.rows(`DELETE FROM auth_rate_limits WHERE key = ANY($1::text[])`, [keys]);
  }

  /** One attempt fewer for the key (never below zero). */
  async takeBackAttempt(key: string): Promise<void> {
    await this.rows(`UPDATE auth_rate_limits SET attempts = greatest(attempts - 1, 0) WHERE key = $1`, [key]);
  }
}
