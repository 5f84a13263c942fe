import { Injectable } from '@nestjs/common';
import { CompanyReferencesRepository } from './company-references.repository';
import { goalError } from './goals.errors';

/** Ids a record points at must belong to the record's company: 422 otherwise (like a foreign logo asset). */
@Injectable()
export class CompanyReferences {
  constructor(private readonly repo: CompanyReferencesRepository) {}

  async assertAgentOfCompany(companyId: string, agentId: string, field: string): Promise<void> {
    if (!(await this.repo.agentOfCompanyExists(companyId, agentId)))
      throw goalError('invalid_reference', `${field} must reference an agent of this company`, { field });
  }

  /** The given goal ids, all of the company, de-duplicated in order; 422 names the first foreign or unknown one. */
  async assertGoalsOfCompany(companyId: string, goalIds: string[], field: string): Promise<string[]> {
    const unique = [...new Set(goalIds)];
    if (!unique.length) return unique;
    const found = new Set(await this.repo.goalIdsOfCompany(companyId, unique));
    const missing = unique.find((id) => !found.has(id));
    if (missing) throw goalError('invalid_reference', `${field} must reference goals of this company (${missing} is not)`, { field });
    return unique;
  }

  /** Serialises structural changes of one company's goal tree (cycles, the default flag) across instances. */
  lockCompanyGoals(companyId: string): Promise<void> {
    return this.repo.lockCompanyGoals(companyId);
  }
}
