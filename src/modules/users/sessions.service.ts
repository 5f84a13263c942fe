import { Injectable } from '@nestjs/common';
import { generateToken, sha256Hex } from '../../common/auth/tokens';
import { InstanceSettingsService } from '../instance/instance-settings.service';
import { SessionRecord, SessionsRepository } from './sessions.repository';

/** Sign-in sessions: a random `svc_ss_` token (cookie or bearer); only its SHA-256 is stored. */
@Injectable()
export class SessionsService {
  constructor(
    private readonly repo: SessionsRepository,
    private readonly settings: InstanceSettingsService,
  ) {}

  async create(userId: string, userAgent: string | undefined): Promise<{ token: string; session: SessionRecord }> {
    const token = generateToken('ss');
    const { sessionTtlHours } = await this.settings.general();
    const session = await this.repo.insertSession(userId, sha256Hex(token), userAgent?.slice(0, 500) ?? null, sessionTtlHours);
    return { token, session };
  }

  get(sessionId: string): Promise<SessionRecord | undefined> {
    return this.repo.findSession(sessionId);
  }

  revoke(sessionId: string): Promise<void> {
    return this.repo.revokeSession(sessionId);
  }
}
