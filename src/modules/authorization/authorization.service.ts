import { Injectable } from '@nestjs/common';
import { forbidden } from '../../common/errors/domain-error';
import { Db } from '../../database/db.service';
import { AuthzDecision, AuthzRequest } from './authorization.types';

/**
 * The one authorization decision (spec, Authentication point 9): every mutation touching an
 * agent or an issue assignment asks here and gets allow/deny with exactly one reason.
 */
@Injectable()
export class AuthorizationService {
  constructor(private readonly db: Db) {}

  async decide(req: AuthzRequest): Promise<AuthzDecision> {
    const actor = req.actor;
    if (!actor) return { allowed: false, reason: 'deny_unauthenticated' };
    if (actor.kind === 'board') {
      if (actor.source === 'local_implicit') return { allowed: true, reason: 'allow_local_board' };
      if (actor.isInstanceAdmin) return { allowed: true, reason: 'allow_instance_admin' };
      return { allowed: false, reason: 'deny_missing_membership' };
    }
    if (actor.companyId !== req.companyId) return { allowed: false, reason: 'deny_company_boundary' };
    if (req.targetAgentId && req.targetAgentId === actor.agentId && req.action !== 'agent.create') {
      return { allowed: true, reason: 'allow_self' };
    }
    const [me] = await this.db.query<{ role: string; permissions: { canCreateAgents?: boolean } }>(
      `SELECT role, permissions FROM agents WHERE id = $1 AND company_id = $2`,
      [actor.agentId, req.companyId],
    );
    if (me && (me.role === 'ceo' || me.permissions?.canCreateAgents === true)) {
      return { allowed: true, reason: 'allow_legacy_agent_creator' };
    }
    return { allowed: false, reason: 'deny_missing_grant' };
  }

  /** decide(), throwing 403 `{ error, code: "forbidden", reason }` on deny. */
  async assert(req: AuthzRequest): Promise<AuthzDecision> {
    const d = await this.decide(req);
    if (!d.allowed) throw forbidden(`Not allowed: ${req.action} (${d.reason})`, { reason: d.reason });
    return d;
  }
}
