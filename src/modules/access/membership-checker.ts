import { Injectable } from '@nestjs/common';
import type { BoardActor } from '../../common/auth/actor';
import type { CompanyMembershipChecker } from '../../common/auth/auth-registry.port';
import { MembershipsService } from './memberships.service';

/**
 * The guard's view of memberships (spec, Authentication point 7): outside local trusted mode a
 * user reaches a company only with an active membership; instance admins pass before this is asked.
 */
@Injectable()
export class MembershipChecker implements CompanyMembershipChecker {
  constructor(private readonly memberships: MembershipsService) {}

  canAccessCompany(actor: BoardActor, companyId: string): Promise<boolean> {
    return this.memberships.isActiveMember(companyId, 'user', actor.userId);
  }

  accessibleCompanyIds(actor: BoardActor): Promise<string[]> {
    return this.memberships.activeCompanyIds(actor.userId);
  }

  /** A signed-in user who creates a company owns it (with the owner's default grants). */
  async addCreator(actor: BoardActor, companyId: string): Promise<void> {
    await this.memberships.join(companyId, 'user', actor.userId, 'owner', actor);
  }
}
