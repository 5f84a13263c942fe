import { Injectable } from '@nestjs/common';
import { generateToken, sha256Hex } from '../../common/auth/tokens';
import { Db } from '../../database/db.service';
import { InstanceSettingsService } from '../instance/instance-settings.service';

export interface SessionRow {
  id: string;
  user_id: string;
  expires_at: Date;
  created_at: Date;
}

export interface SessionResponse {
  id: string;
  userId: string;
  expiresAt: string;
  createdAt: string;
}

export const toSessionResponse = (s: SessionRow): SessionResponse => ({
  id: s.id,
  userId: s.user_id,
  expiresAt: new Date(s.expires_at).toISOString(),
  createdAt: new Date(s.created_at).toISOString(),
});

/** Sign-in sessions: a random `svc_ss_` token (cookie or bearer); only its SHA-256 is stored. */
@Injectable()
export class SessionsService {
  constructor(
    private readonly db: Db,
    private readonly settings: InstanceSettingsService,
  ) {}

  async create(userId: string, userAgent: string | undefined): Promise<{ token: string; session: SessionRow }> {
    const token = generateToken('ss');
    const { sessionTtlHours } = await this.settings.general();
    const [session] = await this.db.query<SessionRow>(
      `INSERT INTO user_sessions (user_id, token_hash, user_agent, expires_at)
       VALUES ($1, $2, $3, now() + make_interval(hours => $4)) RETURNING id, user_id, expires_at, created_at`,
      [userId, sha256Hex(token), userAgent?.slice(0, 500) ?? null, sessionTtlHours],
    );
    return { token, session };
  }

  async get(sessionId: string): Promise<SessionRow | undefined> {
    const [row] = await this.db.query<SessionRow>(`SELECT id, user_id, expires_at, created_at FROM user_sessions WHERE id = $1`, [
      sessionId,
    ]);
    return row;
  }

  async revoke(sessionId: string): Promise<void> {
    await this.db.query(`UPDATE user_sessions SET revoked_at = coalesce(revoked_at, now()) WHERE id = $1`, [sessionId]);
  }
}
