import { Injectable } from '@nestjs/common';
import { CompanyScopedRepository } from '../../database/company-scoped.repository';
import { Db } from '../../database/db.service';

/** How many records of each kind a company holds, by kind (see FidelityRepository.counts). */
export type CompanyInventory = Record<(typeof KINDS)[number], number>;

const KINDS = [
  'agents',
  'terminatedAgents',
  'projects',
  'goals',
  'labels',
  'budgetPolicies',
  'routines',
  'skills',
  'bundledSkills',
  'issues',
  'hiddenIssues',
  'comments',
  'documents',
  'documentRevisions',
  'secrets',
  'agentApiKeys',
  'costEvents',
  'financeEvents',
  'activityEntries',
  'heartbeatRuns',
  'approvals',
  'attachments',
  'workProducts',
  'interactions',
  'budgetIncidents',
] as const;

/**
 * The export fidelity page's counts: what a company holds, by kind, so the page can say what a
 * package keeps and drops. One statement of indexed counts over the owning modules' tables (a read
 * model listed in FOREIGN_READS).
 */
@Injectable()
export class FidelityRepository extends CompanyScopedRepository {
  constructor(db: Db) {
    super(db);
  }

  async counts(companyId: string): Promise<CompanyInventory> {
    const c = (sql: string) => `(SELECT count(*)::int FROM ${sql})`;
    const row = await this.row<CompanyInventory>(
      companyId,
      `SELECT ${c(`agents WHERE company_id = $1 AND status <> 'terminated'`)} AS "agents",
              ${c(`agents WHERE company_id = $1 AND status = 'terminated'`)} AS "terminatedAgents",
              ${c('projects WHERE company_id = $1')} AS "projects",
              ${c('goals WHERE company_id = $1')} AS "goals",
              ${c('labels WHERE company_id = $1')} AS "labels",
              ${c('budget_policies WHERE company_id = $1')} AS "budgetPolicies",
              ${c('routines WHERE company_id = $1')} AS "routines",
              ${c('company_skills WHERE company_id = $1 AND NOT bundled')} AS "skills",
              ${c('company_skills WHERE company_id = $1 AND bundled')} AS "bundledSkills",
              ${c('issues WHERE company_id = $1 AND hidden_at IS NULL')} AS "issues",
              ${c('issues WHERE company_id = $1 AND hidden_at IS NOT NULL')} AS "hiddenIssues",
              ${c('issue_comments WHERE company_id = $1')} AS "comments",
              ${c('issue_documents WHERE company_id = $1')} AS "documents",
              ${c('issue_document_revisions WHERE company_id = $1')} AS "documentRevisions",
              ${c('company_secrets WHERE company_id = $1')} AS "secrets",
              ${c('agent_api_keys WHERE company_id = $1 AND revoked_at IS NULL')} AS "agentApiKeys",
              ${c('cost_events WHERE company_id = $1')} AS "costEvents",
              ${c('finance_events WHERE company_id = $1')} AS "financeEvents",
              ${c('activity_log WHERE company_id = $1')} AS "activityEntries",
              ${c('heartbeat_runs WHERE company_id = $1')} AS "heartbeatRuns",
              ${c('approvals WHERE company_id = $1')} AS "approvals",
              ${c('issue_attachments WHERE company_id = $1')} AS "attachments",
              ${c('issue_work_products WHERE company_id = $1')} AS "workProducts",
              ${c('issue_interactions WHERE company_id = $1')} AS "interactions",
              ${c('budget_incidents WHERE company_id = $1')} AS "budgetIncidents"`,
    );
    return row ?? (Object.fromEntries(KINDS.map((k) => [k, 0])) as CompanyInventory);
  }
}
