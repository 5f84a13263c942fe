import { Injectable } from '@nestjs/common';
import type { UserRecord } from './user.types';

/** What user administration needs of the users table (owned by users). */
export interface InstanceUserStore {
  /** Up to 500 users, oldest first; `pattern` (an ILIKE pattern) matches email, name or slug. */
  list(pattern: string | null): Promise<UserRecord[]>;
  /** `lock`: FOR UPDATE, for the rest of the transaction. */
  findById(userId: string, lock?: boolean): Promise<UserRecord | undefined>;
  /** An instance admin (an owner stays owner). */
  promote(userId: string): Promise<UserRecord>;
  /** The ids of the instance owners and admins, locked for the rest of the transaction. */
  lockInstanceAdmins(): Promise<string[]>;
  demote(userId: string): Promise<UserRecord>;
}

/**
 * The users table as user administration sees it. The users module imports this one (for the
 * settings), so instance cannot import users: users registers its store here at start-up.
 */
@Injectable()
export class InstanceUsers {
  private store?: InstanceUserStore;

  register(store: InstanceUserStore): void {
    this.store = store;
  }

  get users(): InstanceUserStore {
    if (!this.store) throw new Error('InstanceUsers: the users module has not registered its store');
    return this.store;
  }
}
