import { Injectable } from '@nestjs/common';
import type { Actor } from '../../common/auth/actor';
import { CompanyAccessService } from '../../common/auth/company-access.service';
import { AuthorizationService } from '../authorization/authorization.service';
import type { AuthzAction } from '../authorization/authorization.types';

/**
 * Which of the tools' authorization decisions allow the caller anything, for tools/list: the
 * decision the tools' routes make (AuthorizationService), asked for some target instead of one. An
 * agent acts in its company; a person in each company they can reach (a tool is listed when one of
 * them allows it; the local board and instance admins are allowed by the decision itself).
 */
@Injectable()
export class McpToolAuthority {
  constructor(
    private readonly authz: AuthorizationService,
    private readonly access: CompanyAccessService,
  ) {}

  async allowed(actor: Actor, actions: AuthzAction[]): Promise<Set<AuthzAction>> {
    const out = new Set<AuthzAction>();
    if (!actions.length) return out;
    // undefined: every company (the local board, an instance admin), decided before any company is read
    const companies = actor.kind === 'agent' ? [actor.companyId] : ((await this.access.accessibleCompanyIds(actor)) ?? ['']);
    for (const action of new Set(actions))
      for (const companyId of companies)
        if (await this.authz.allowsSome({ actor, action, companyId })) {
          out.add(action);
          break;
        }
    return out;
  }
}
