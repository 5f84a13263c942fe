import { Injectable } from '@nestjs/common';
import { CompanyScopedRepository } from '../../database/company-scoped.repository';
import { Db } from '../../database/db.service';
import { isoRequired, recordColumns } from '../../database/row-mapping';
import type { GrantDto, MembershipDto } from '../agents/dto/agent.dto';
import type { AgentMembershipStore } from '../agents/agent-memberships.port';
import { MEMBERSHIP_COLUMNS } from './memberships.repository';

/** The membership as selected: the DTO with its timestamps still Dates. */
type SelectedMembership = Omit<MembershipDto, 'createdAt' | 'updatedAt'> & { createdAt: Date; updatedAt: Date };
/** The grant as selected: the DTO with its timestamp still a Date and its scope maybe missing. */
type SelectedGrant = Omit<GrantDto, 'createdAt' | 'scope'> & { scope: unknown; createdAt: Date };

const MEMBERSHIP_SELECT = recordColumns(MEMBERSHIP_COLUMNS);
const GRANT_COLUMNS = recordColumns('id, permission_key, scope, granted_by, created_at');

const toMembership = (m: SelectedMembership): MembershipDto => ({
  ...m,
  createdAt: isoRequired(m.createdAt),
  updatedAt: isoRequired(m.updatedAt),
});

const toGrant = (g: SelectedGrant): GrantDto => ({ ...g, scope: g.scope ?? null, createdAt: isoRequired(g.createdAt) });

/**
 * An agent's company membership and permission grants, as the agents routes read and change them
 * (access owns these tables; the agents module reaches them through its AgentMemberships port,
 * which AgentMembershipsRegistration fills in at start-up).
 */
@Injectable()
export class AgentMembershipsRepository extends CompanyScopedRepository implements AgentMembershipStore {
  constructor(db: Db) {
    super(db);
  }

  async findMembership(companyId: string, agentId: string): Promise<MembershipDto | null> {
    const m = await this.row<SelectedMembership>(
      companyId,
      `SELECT ${MEMBERSHIP_SELECT} FROM company_memberships WHERE company_id = $1 AND principal_type = 'agent' AND principal_id = $2`,
      [agentId],
    );
    return m ? toMembership(m) : null;
  }

  async listGrants(companyId: string, agentId: string): Promise<GrantDto[]> {
    const grants = await this.rows<SelectedGrant>(
      companyId,
      `SELECT ${GRANT_COLUMNS} FROM principal_permission_grants
        WHERE company_id = $1 AND principal_type = 'agent' AND principal_id = $2 ORDER BY created_at, id`,
      [agentId],
    );
    return grants.map(toGrant);
  }

  /** An active `member` membership (no grants); an inactive one is reactivated. */
  async ensureMembership(companyId: string, agentId: string): Promise<void> {
    await this.rows(
      companyId,
      `INSERT INTO company_memberships (company_id, principal_type, principal_id, membership_role, status)
       VALUES ($1, 'agent', $2, 'member', 'active')
       ON CONFLICT (company_id, principal_type, principal_id) DO UPDATE SET status = 'active', updated_at = now()
       WHERE company_memberships.status <> 'active'`,
      [agentId],
    );
  }

  async deleteTaskAssignGrant(companyId: string, agentId: string): Promise<void> {
    await this.rows(
      companyId,
      `DELETE FROM principal_permission_grants
        WHERE company_id = $1 AND principal_type = 'agent' AND principal_id = $2 AND permission_key = 'tasks:assign'`,
      [agentId],
    );
  }

  /** A company-wide tasks:assign grant. */
  async insertTaskAssignGrant(companyId: string, agentId: string, grantedBy: string): Promise<void> {
    await this.rows(
      companyId,
      `INSERT INTO principal_permission_grants (company_id, principal_type, principal_id, permission_key, scope, granted_by)
       VALUES ($1, 'agent', $2, 'tasks:assign', NULL, $3)`,
      [agentId, grantedBy],
    );
  }

  /** A deleted agent's grants and membership go. */
  async deleteAll(companyId: string, agentId: string): Promise<void> {
    await this.rows(
      companyId,
      `DELETE FROM principal_permission_grants WHERE company_id = $1 AND principal_type = 'agent' AND principal_id = $2`,
      [agentId],
    );
    await this.rows(companyId, `DELETE FROM company_memberships WHERE company_id = $1 AND principal_type = 'agent' AND principal_id = $2`, [
      agentId,
    ]);
  }
}
