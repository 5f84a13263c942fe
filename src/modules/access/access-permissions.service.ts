import { Injectable } from '@nestjs/common';
import type { Actor } from '../../common/auth/actor';
import { forbidden } from '../../common/errors/domain-error';
import { Db } from '../../database/db.service';
import type { PermissionKey } from './permission-keys';

/**
 * Company-wide permission keys of the access area (`users:invite`, `users:manage_permissions`,
 * `joins:approve`). These gate member administration, not agent or assignment mutations, which go
 * through the AuthorizationService. Company access itself was already checked by the guard.
 */
/** The local board and instance admins hold every key in every company. */
const holdsEverything = (actor: Actor) => actor.kind === 'board' && (actor.source === 'local_implicit' || actor.isInstanceAdmin);

@Injectable()
export class AccessPermissions {
  constructor(private readonly db: Db) {}

  /** 403 `{ reason }` unless the caller holds the key in the company. */
  async assert(actor: Actor, companyId: string, key: PermissionKey): Promise<void> {
    if (holdsEverything(actor)) return;
    const type = actor.kind === 'agent' ? 'agent' : 'user';
    const principalId = actor.kind === 'agent' ? actor.agentId : actor.userId;
    const [row] = await this.db.query<{ role: string | null; status: string | null; granted: boolean }>(
      `SELECT m.membership_role AS role, m.status,
              EXISTS (SELECT 1 FROM principal_permission_grants g
                       WHERE g.company_id = $1 AND g.principal_type = $2 AND g.principal_id = $3
                         AND g.permission_key = $4 AND g.scope IS NULL) AS granted
         FROM (SELECT 1) one
         LEFT JOIN company_memberships m ON m.company_id = $1 AND m.principal_type = $2 AND m.principal_id = $3`,
      [companyId, type, principalId, key],
    );
    // agents are members of their company by construction; users need an active membership
    if (type === 'user' && row.status !== 'active') {
      throw forbidden('An active membership in the company is required', { reason: 'deny_missing_membership' });
    }
    // an owner always holds every key, so that a company cannot lock itself out of administration
    if (row.granted || (row.role === 'owner' && row.status === 'active')) return;
    throw forbidden(`Missing permission ${key}`, { reason: 'deny_missing_grant', permissionKey: key });
  }

  /** The owner role is given and taken only by owners (and instance admins): an admin cannot make itself owner. */
  async assertOwner(actor: Actor, companyId: string): Promise<void> {
    if (holdsEverything(actor)) return;
    if (actor.kind === 'board') {
      const [m] = await this.db.query<{ membership_role: string }>(
        `SELECT membership_role FROM company_memberships WHERE company_id = $1 AND principal_type = 'user' AND principal_id = $2 AND status = 'active'`,
        [companyId, actor.userId],
      );
      if (m?.membership_role === 'owner') return;
    }
    throw forbidden('Only an owner may give or take the owner role', { reason: 'deny_missing_grant' });
  }
}
