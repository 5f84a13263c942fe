import { Injectable } from '@nestjs/common';
import type { Actor } from '../../common/auth/actor';
import { forbidden } from '../../common/errors/domain-error';
import { MembershipsRepository } from './memberships.repository';
import type { PermissionKey } from './permission-keys';
import { AuthorizationService } from '../authorization/authorization.service';
import type { AuthzAction } from '../authorization/authorization.types';

/**
 * Company-wide permission keys of the access area (`users:invite`, `users:manage_permissions`,
 * `joins:approve`), decided by the AuthorizationService like every other permission, and the
 * owner-only rule for giving or taking the owner role.
 */
/** The local board and instance admins hold every key in every company. */
const holdsEverything = (actor: Actor) => actor.kind === 'board' && (actor.source === 'local_implicit' || actor.isInstanceAdmin);

/** Member administration keys and the decision's actions for them. */
const KEY_ACTIONS = {
  'users:invite': 'users.invite',
  'users:manage_permissions': 'users.manage_permissions',
  'joins:approve': 'joins.approve',
} as const satisfies Record<string, AuthzAction>;

@Injectable()
export class AccessPermissions {
  constructor(
    private readonly memberships: MembershipsRepository,
    private readonly authz: AuthorizationService,
  ) {}

  /** 403 `{ reason }` unless the caller holds the key in the company: asked of the one authorization decision. */
  async assert(actor: Actor, companyId: string, key: PermissionKey): Promise<void> {
    const action = KEY_ACTIONS[key as keyof typeof KEY_ACTIONS];
    if (!action) throw forbidden(`Missing permission ${key}`, { reason: 'deny_unsupported_action', permissionKey: key });
    const d = await this.authz.decide({ actor, action, companyId });
    if (!d.allowed) throw forbidden(`Missing permission ${key}`, { reason: d.reason, permissionKey: key });
  }

  /** Whether the caller holds the key in the company (the same decision as `assert`, without the error). */
  async holds(actor: Actor, companyId: string, key: keyof typeof KEY_ACTIONS): Promise<boolean> {
    return (await this.authz.decide({ actor, action: KEY_ACTIONS[key], companyId })).allowed;
  }

  /** The caller's membership role in the company: `owner` for the local board and instance admins, null for agents and non-members. */
  async roleOf(actor: Actor, companyId: string): Promise<string | null> {
    if (holdsEverything(actor)) return 'owner';
    return actor.kind === 'board' ? this.memberships.activeUserRole(companyId, actor.userId) : null;
  }

  /** The owner role is given and taken only by owners (and instance admins): an admin cannot make itself owner. */
  async assertOwner(actor: Actor, companyId: string): Promise<void> {
    if (holdsEverything(actor)) return;
    if (actor.kind === 'board') {
      if ((await this.memberships.activeUserRole(companyId, actor.userId)) === 'owner') return;
    }
    throw forbidden('Only an owner may give or take the owner role', { reason: 'deny_missing_grant' });
  }
}
