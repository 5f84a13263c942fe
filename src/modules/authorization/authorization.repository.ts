import { Injectable } from '@nestjs/common';
import { CompanyScopedRepository } from '../../database/company-scoped.repository';
import { Db } from '../../database/db.service';

export interface AuthzAgentRecord {
  id: string;
  reportsTo: string | null;
  status: string;
  role: string;
  permissions: Record<string, unknown> | null;
}

export interface AuthzGrantRecord {
  permissionKey: string;
  scope: unknown;
}

/**
 * What the authorization decision reads. It owns no table: it reads agents (owned by agents),
 * company_memberships and principal_permission_grants (owned by access) and projects (owned by
 * projects), which import this module, so the reads live here rather than behind their services
 * (FOREIGN_READS in src/database/table-owners.ts).
 */
@Injectable()
export class AuthorizationRepository extends CompanyScopedRepository {
  constructor(db: Db) {
    super(db);
  }

  // reads agents (owned by agents)
  agentsOfCompany(companyId: string): Promise<AuthzAgentRecord[]> {
    return this.rows<AuthzAgentRecord>(
      companyId,
      `SELECT id, reports_to AS "reportsTo", status, role, permissions FROM agents WHERE company_id = $1`,
    );
  }

  // reads company_memberships (owned by access)
  membership(companyId: string, principalType: string, principalId: string): Promise<{ membershipRole: string; status: string } | null> {
    return this.row<{ membershipRole: string; status: string }>(
      companyId,
      `SELECT membership_role AS "membershipRole", status FROM company_memberships WHERE company_id = $1 AND principal_type = $2 AND principal_id = $3`,
      [principalType, principalId],
    );
  }

  // reads principal_permission_grants (owned by access)
  grants(companyId: string, principalType: string, principalId: string, permissionKeys: string[]): Promise<AuthzGrantRecord[]> {
    return this.rows<AuthzGrantRecord>(
      companyId,
      `SELECT permission_key AS "permissionKey", scope FROM principal_permission_grants
        WHERE company_id = $1 AND principal_type = $2 AND principal_id = $3 AND permission_key = ANY($4)`,
      [principalType, principalId, permissionKeys],
    );
  }

  // reads company_memberships (owned by access)
  async isActiveUserMember(companyId: string, userId: string): Promise<boolean> {
    const rows = await this.rows(
      companyId,
      `SELECT 1 FROM company_memberships WHERE company_id = $1 AND principal_type = 'user' AND principal_id = $2 AND status = 'active'`,
      [userId],
    );
    return rows.length > 0;
  }

  /** A project's execution workspace policy; null when the project is not in the company. */
  // reads projects (owned by projects)
  async projectPolicy(companyId: string, projectId: string): Promise<unknown> {
    const row = await this.row<{ execution_workspace_policy: unknown }>(
      companyId,
      `SELECT execution_workspace_policy FROM projects WHERE company_id = $1 AND id = $2`,
      [projectId],
    );
    return row?.execution_workspace_policy ?? null;
  }
}
