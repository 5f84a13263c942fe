import { Injectable } from '@nestjs/common';
import type { Actor, BoardActor } from '../../common/auth/actor';
import { LOCAL_BOARD_USER_ID } from '../../common/auth/actor';
import { notFound, unauthorized } from '../../common/errors/domain-error';
import { Db } from '../../database/db.service';
import { InstanceSettingsService } from '../instance/instance-settings.service';
import { CompanyUserProfileDto, GetSessionDto, SignInDto, SignUpDto, UpdateProfileDto } from './dto/auth.dto';
import { LoginRateLimiter, normalizeEmail } from './login-rate-limiter';
import { hashPassword, verifyPassword } from './password-hasher';
import { SessionRecord, toSessionResponse } from './sessions.repository';
import { SessionsService } from './sessions.service';
import { toUserResponse, UserResponseDto, UserRecord } from '../instance/user.types';
import { slugify } from '../../common/http/slug';
import { userError } from './users.errors';
import { UsersRepository } from './users.repository';

export interface SignedIn {
  user: UserResponseDto;
  session: SessionRecord;
  token: string;
}

/** The local trusted board has no user row until it edits its profile. */
const LOCAL_BOARD_PROFILE: UserRecord = {
  id: LOCAL_BOARD_USER_ID,
  email: null,
  name: 'Local board',
  slug: LOCAL_BOARD_USER_ID,
  image: null,
  bio: null,
  passwordHash: null,
  instanceRole: 'owner',
  createdAt: new Date(0),
  updatedAt: new Date(0),
};

/** Sign-up, sign-in, sign-out, the session and the caller's profile (spec: Health, identity; Authentication). */
@Injectable()
export class AuthService {
  constructor(
    private readonly db: Db,
    private readonly users: UsersRepository,
    private readonly sessions: SessionsService,
    private readonly limiter: LoginRateLimiter,
    private readonly settings: InstanceSettingsService,
  ) {}

  /** New user with an email and a password, signed in at once. The first user may always sign up. */
  async signUp(dto: SignUpDto, userAgent?: string): Promise<SignedIn> {
    const email = normalizeEmail(dto.email);
    // reads and hashing before the transaction's first write: scrypt never holds a connection in a transaction
    await this.db.detached(async () => {
      const { allowSignUp } = await this.settings.general();
      if (allowSignUp) return;
      if (await this.users.anyWithPassword()) throw userError('sign_up_disabled', 'Sign-up is disabled on this instance');
    });
    const passwordHash = await hashPassword(dto.password);
    const name = dto.name?.trim() || email.split('@')[0];
    const user = await this.insertUser(email, name, passwordHash);
    const { token, session } = await this.sessions.create(user.id, userAgent);
    return { user: toUserResponse(user), session, token };
  }

  /** Rate limited per address and per IP in the database; the same 401 for an unknown address and a wrong password. */
  async signIn(dto: SignInDto, ip: string, userAgent?: string): Promise<SignedIn> {
    // the attempt was counted by LoginRateLimitGuard before this transaction began
    const email = normalizeEmail(dto.email);
    // read outside the transaction, so that verifying (scrypt) holds no connection in a transaction
    const user = await this.db.detached(() => this.users.findByEmail(email));
    // verified even without a user (a dummy derivation), so an unknown address takes as long as a wrong password
    if (!(await verifyPassword(dto.password, user?.passwordHash)) || !user) {
      throw userError('invalid_credentials', 'Invalid email or password');
    }
    await this.limiter.succeeded(email, ip);
    const { token, session } = await this.sessions.create(user.id, userAgent);
    return { user: toUserResponse(user), session, token };
  }

  /** Ends the calling session (a board token or the local board has none to end). */
  async signOut(actor: Actor | undefined): Promise<{ success: true; revoked: boolean }> {
    if (actor?.kind === 'board' && actor.source === 'session' && actor.credentialId) {
      await this.sessions.revoke(actor.credentialId);
      return { success: true, revoked: true };
    }
    return { success: true, revoked: false };
  }

  async getSession(actor: Actor | undefined): Promise<GetSessionDto> {
    if (actor?.kind !== 'board') return { session: null, user: null, credential: null };
    const user = await this.profile(actor);
    const session = actor.source === 'session' && actor.credentialId ? await this.sessions.get(actor.credentialId) : undefined;
    return { session: session ? toSessionResponse(session) : null, user, credential: actor.source };
  }

  async profile(actor: BoardActor): Promise<UserResponseDto> {
    const row = await this.users.findById(actor.userId);
    if (row) return toUserResponse(actor.source === 'local_implicit' ? { ...row, instanceRole: 'owner' } : row);
    if (actor.source === 'local_implicit') return toUserResponse(LOCAL_BOARD_PROFILE);
    throw unauthorized('User no longer exists');
  }

  /** Name, image, bio. The local board's first edit stores a profile row for it. */
  async updateProfile(actor: BoardActor, dto: UpdateProfileDto): Promise<UserResponseDto> {
    if (actor.source === 'local_implicit') {
      await this.users.insertProfileIfMissing(LOCAL_BOARD_USER_ID, LOCAL_BOARD_PROFILE.name);
    }
    await this.users.updateProfile(actor.userId, {
      name: dto.name?.trim(),
      image: dto.image,
      bio: dto.bio,
    });
    return this.profile(actor);
  }

  /** Another user's profile, visible inside a company they belong to (by slug or id). */
  async companyUserProfile(companyId: string, userSlug: string): Promise<CompanyUserProfileDto> {
    const row = await this.users.findCompanyProfile(companyId, userSlug);
    if (!row) throw notFound('User');
    return {
      id: row.id,
      name: row.name,
      slug: row.slug,
      image: row.image,
      bio: row.bio,
      membershipRole: row.membershipRole,
      membershipStatus: row.membershipStatus,
    };
  }

  /** Slug from the name, with a numeric suffix when taken; a taken email is 409. */
  private async insertUser(email: string, name: string, passwordHash: string): Promise<UserRecord> {
    const slug = slugify(name, 40, 'user');
    // the local board's profile row owns its slug
    const base = slug === LOCAL_BOARD_USER_ID ? `${slug}-user` : slug;
    for (let n = 1; n < 1000; n++) {
      if (await this.users.emailTaken(email)) throw userError('email_taken', 'An account with this email already exists');
      const row = await this.users.insertWithPassword(email, name, n === 1 ? base : `${base}-${n}`, passwordHash);
      if (row) return row;
    }
    throw userError('slug_taken', 'Could not find a free profile slug');
  }
}
