import { Injectable } from '@nestjs/common';
import { forbidden, notFound } from '../errors/domain-error';
import { isUuid } from '../http/uuid';
import type { Actor } from './actor';
import { AuthRegistry } from './auth-registry.port';
import { AuthRepository } from './auth.repository';

/** How long a company seen to exist is taken to exist without asking the database again. */
export const COMPANY_SEEN_TTL_MS = 5_000;
const MAX_SEEN = 10_000;

/**
 * Tenancy: every company-scoped route passes here first (through the guard: a `:companyId`, or the
 * company of the records a path names). Records are then read within that company, never loaded
 * from any company and checked afterwards.
 *
 * That every company-scoped request first asks whether its company exists costs a database round
 * trip per request, so a company seen to exist is remembered for COMPANY_SEEN_TTL_MS. Never the
 * absence of one. A deletion on this instance forgets it at once; one deleted through another
 * instance can be taken for existing for up to the TTL there, where its routes then find no rows
 * (404s, empty lists) or fail on foreign keys (409): its data is gone either way.
 */
@Injectable()
export class CompanyAccessService {
  private readonly seen = new Map<string, number>();

  constructor(
    private readonly repo: AuthRepository,
    private readonly registry: AuthRegistry,
  ) {}

  async companyExists(companyId: string): Promise<boolean> {
    if (!isUuid(companyId)) return false;
    const until = this.seen.get(companyId);
    if (until !== undefined && until > Date.now()) return true;
    if (!(await this.repo.companyExists(companyId))) {
      this.seen.delete(companyId);
      return false;
    }
    if (this.seen.size >= MAX_SEEN) this.seen.clear();
    this.seen.set(companyId, Date.now() + COMPANY_SEEN_TTL_MS);
    return true;
  }

  /** A company deleted here stops existing for this instance at once. */
  forget(companyId: string): void {
    this.seen.delete(companyId);
  }

  async canAccess(actor: Actor, companyId: string): Promise<boolean> {
    if (actor.kind === 'agent') return actor.companyId === companyId;
    if (actor.source === 'local_implicit' || actor.isInstanceAdmin) return true;
    const checker = this.registry.membershipChecker;
    return checker ? checker.canAccessCompany(actor, companyId) : false;
  }

  /**
   * A company in the path: 403 for one the caller cannot reach; for an unknown one 404 to callers
   * who see every company (the local board, instance admins) and the same 403 to everyone else, so
   * that a tenant cannot tell another company's id from an unknown one.
   */
  async assertCompanyAccess(actor: Actor, companyId: string): Promise<void> {
    if (!(await this.companyExists(companyId))) {
      if ((await this.accessibleCompanyIds(actor)) === undefined) throw notFound('Company');
      throw forbidden('No access to this company', { reason: 'deny_company_boundary' });
    }
    if (!(await this.canAccess(actor, companyId))) throw forbidden('No access to this company', { reason: 'deny_company_boundary' });
  }

  /** Company ids a caller may list; undefined means every company. */
  async accessibleCompanyIds(actor: Actor): Promise<string[] | undefined> {
    if (actor.kind === 'agent') return [actor.companyId];
    if (actor.source === 'local_implicit' || actor.isInstanceAdmin) return undefined;
    const checker = this.registry.membershipChecker;
    return checker ? checker.accessibleCompanyIds(actor) : [];
  }
}
