import { Injectable } from '@nestjs/common';
import { Db } from '../../database/db.service';
import { forbidden, notFound } from '../errors/domain-error';
import { isUuid } from '../http/uuid';
import type { Actor } from './actor';
import { AuthRegistry } from './auth-registry';

/** Tenancy: every company-scoped route and every lookup of a company-owned record passes here first. */
@Injectable()
export class CompanyAccessService {
  constructor(
    private readonly db: Db,
    private readonly registry: AuthRegistry,
  ) {}

  async companyExists(companyId: string): Promise<boolean> {
    if (!isUuid(companyId)) return false;
    const rows = await this.db.query('SELECT 1 FROM companies WHERE id = $1', [companyId]);
    return rows.length > 0;
  }

  async canAccess(actor: Actor, companyId: string): Promise<boolean> {
    if (actor.kind === 'agent') return actor.companyId === companyId;
    if (actor.source === 'local_implicit' || actor.isInstanceAdmin) return true;
    const checker = this.registry.membershipChecker;
    return checker ? checker.canAccessCompany(actor, companyId) : false;
  }

  /** 404 for an unknown company, 403 for one the caller cannot reach. */
  async assertCompanyAccess(actor: Actor, companyId: string): Promise<void> {
    if (!(await this.companyExists(companyId))) throw notFound('Company');
    await this.assertAccessToKnownCompany(actor, companyId);
  }

  /** For records already loaded: the record's company exists; only the caller's access is checked. */
  async assertAccessToKnownCompany(actor: Actor, companyId: string): Promise<void> {
    if (!(await this.canAccess(actor, companyId))) {
      throw forbidden('No access to this company', { reason: 'deny_company_boundary' });
    }
  }

  /** Company ids a caller may list; undefined means every company. */
  async accessibleCompanyIds(actor: Actor): Promise<string[] | undefined> {
    if (actor.kind === 'agent') return [actor.companyId];
    if (actor.source === 'local_implicit' || actor.isInstanceAdmin) return undefined;
    const checker = this.registry.membershipChecker;
    return checker ? checker.accessibleCompanyIds(actor) : [];
  }
}
