import { Injectable, OnModuleInit } from '@nestjs/common';
import { RecordCompany, RecordCompanyResolvers } from '../../common/references/record-company-resolvers';
import { CompanyScopedRepository } from '../../database/company-scoped.repository';
import { Db } from '../../database/db.service';

const RESOLVE = 'which company records belong to: the reference check of request bodies and routes without :companyId';

/** Which company approvals belong to, registered with the reference check (`RecordCompanyResolvers`) at start-up. */
@Injectable()
export class ApprovalCompanyRepository extends CompanyScopedRepository implements OnModuleInit {
  constructor(
    db: Db,
    private readonly resolvers: RecordCompanyResolvers,
  ) {
    super(db);
  }

  onModuleInit(): void {
    this.resolvers.register('approval', (ids) =>
      this.unscoped<RecordCompany>(
        RESOLVE,
        `SELECT id::text AS id, company_id::text AS company_id FROM approvals WHERE id = ANY($1::uuid[])`,
        [ids],
      ),
    );
  }
}
