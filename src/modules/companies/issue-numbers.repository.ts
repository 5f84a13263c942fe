import { Injectable } from '@nestjs/common';
import { CompanyScopedRepository } from '../../database/company-scoped.repository';
import { Db } from '../../database/db.service';

/** The numbers taken from a company's issue counter: its prefix and the first number. */
export interface IssueNumbers {
  issuePrefix: string;
  first: number;
}

/**
 * The company's issue counter (`companies.issue_counter`), for the issues module: it numbers
 * imported issues (a single create takes its number inside its INSERT, through the same database
 * function `take_issue_numbers`). The UPDATE takes the company row lock, which serialises concurrent creates until the
 * caller's transaction commits (numbers unique and gap-free: a failed create rolls its number back).
 */
@Injectable()
export class IssueNumbersRepository extends CompanyScopedRepository {
  constructor(db: Db) {
    super(db);
  }

  /** Takes `count` numbers of the company's issue counter at once; the first one and the prefix (null for an unknown company). */
  async take(companyId: string, count: number): Promise<IssueNumbers | null> {
    const [n] = await this.returning<IssueNumbers>(
      companyId,
      `SELECT issue_prefix AS "issuePrefix", first FROM take_issue_numbers($1, $2::int)`,
      [count],
    );
    return n ? { issuePrefix: n.issuePrefix, first: Number(n.first) } : null;
  }
}
