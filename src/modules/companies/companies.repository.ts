import { Injectable } from '@nestjs/common';
import { Db } from '../../database/db.service';
import { CompanyEntity } from './company.entity';

export interface CompanyInsert {
  name: string;
  description: string | null;
  issuePrefix: string;
  budgetMonthlyCents: number;
  requireBoardApprovalForNewAgents: boolean;
  brandColor: string | null;
}

export interface CompanyCountsRow {
  id: string;
  agent_count: number;
  issue_count: number;
}

/** The only place the `companies` table is read and written (it is the tenant itself, so not company-scoped). */
@Injectable()
export class CompaniesRepository {
  constructor(private readonly db: Db) {}

  private get repo() {
    return this.db.repo(CompanyEntity);
  }

  /** Oldest first; `ids` undefined means every company. */
  list(includeArchived: boolean, ids: string[] | undefined): Promise<CompanyEntity[]> {
    const qb = this.repo.createQueryBuilder('c').orderBy('c.created_at', 'ASC');
    if (!includeArchived) qb.andWhere(`c.status <> 'archived'`);
    if (ids) qb.andWhere('c.id = ANY(:ids)', { ids });
    return qb.getMany();
  }

  /** Agent (non-terminated) and issue counts per company; `ids` null means every company. */
  // reads agents (owned by agents) and issues (owned by issues) for the companies page
  counts(ids: string[] | null): Promise<CompanyCountsRow[]> {
    return this.db.query<CompanyCountsRow>(
      `SELECT c.id,
              (SELECT count(*)::int FROM agents a WHERE a.company_id = c.id AND a.status <> 'terminated') AS agent_count,
              ${this.issueCountSql()} AS issue_count
         FROM companies c
        WHERE ($1::uuid[] IS NULL OR c.id = ANY($1::uuid[]))`,
      [ids],
    );
  }

  /** Issues of the company, hidden ones included. */
  private issueCountSql(): string {
    return `(SELECT count(*)::int FROM issues i WHERE i.company_id = c.id)`;
  }

  findById(companyId: string): Promise<CompanyEntity | null> {
    return this.repo.findOne({ where: { id: companyId } });
  }

  /** The company row locked for update (until commit). */
  lockById(companyId: string): Promise<CompanyEntity | null> {
    return this.repo.createQueryBuilder('c').setLock('pessimistic_write').where('c.id = :id', { id: companyId }).getOne();
  }

  save(company: CompanyEntity): Promise<CompanyEntity> {
    return this.repo.save(company);
  }

  /** Hard delete (the company's rows go with it through the foreign keys). */
  async delete(companyId: string): Promise<void> {
    await this.repo.delete({ id: companyId });
  }

  /** Creates of one prefix base take turns (until commit); other bases are not held up. */
  async lockIssuePrefix(base: string): Promise<void> {
    await this.db.query(`SELECT pg_advisory_xact_lock(hashtext('company_issue_prefix:' || $1))`, [base]);
  }

  /** The highest suffix in use for this base (BASE counts as 1, none 0): an index range scan on the prefix. */
  async topPrefixSuffix(base: string): Promise<number> {
    const [{ top }] = await this.db.query<{ top: number }>(
      `SELECT COALESCE(MAX(CASE WHEN issue_prefix = $1 THEN 1 ELSE substring(issue_prefix FROM $2::int)::int END), 0)::int AS top
         FROM companies WHERE issue_prefix LIKE $1 || '%' AND issue_prefix ~ ('^' || $1 || '[0-9]*$')`,
      [base, base.length + 1],
    );
    return top;
  }

  /** The new company's id. */
  async insert(c: CompanyInsert): Promise<string> {
    const [row] = await this.db.query<{ id: string }>(
      `INSERT INTO companies (name, description, issue_prefix, budget_monthly_cents, require_board_approval_for_new_agents, brand_color)
       VALUES ($1, $2, $3, $4, $5, $6) RETURNING id`,
      [c.name, c.description, c.issuePrefix, c.budgetMonthlyCents, c.requireBoardApprovalForNewAgents, c.brandColor],
    );
    return row.id;
  }

  // reads agents (owned by agents)
  async isCeoAgent(agentId: string, companyId: string): Promise<boolean> {
    const rows = await this.db.query(`SELECT 1 FROM agents WHERE id = $1 AND company_id = $2 AND role = 'ceo' AND status <> 'terminated'`, [
      agentId,
      companyId,
    ]);
    return rows.length > 0;
  }

  /** Active agents of an archived company are paused with reason `company_archived`. */
  // writes agents (owned by agents)
  async pauseAgentsOfArchivedCompany(companyId: string): Promise<void> {
    await this.db.query(
      `UPDATE agents SET status = 'paused', pause_reason = 'company_archived', updated_at = now()
          WHERE company_id = $1 AND status IN ('active', 'idle', 'running', 'error')`,
      [companyId],
    );
  }
}
