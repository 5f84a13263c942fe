import { Injectable, OnModuleInit, Type } from '@nestjs/common';
import { CompanyScopedRepository } from '../../database/company-scoped.repository';
import { Db } from '../../database/db.service';
import { RECORD_KEYS, RECORD_TABLES, TABLE_OWNERS, type RecordKind, type TableName } from '../../database/table-owners';
import { RecordCompany, RecordCompanyResolvers } from './record-company-resolvers.port';

const RESOLVE = 'which company records belong to: the reference check of request bodies and routes without :companyId';
const RESOLVE_KEY =
  'which company the record a path names by its key (an issue identifier, unique per instance) belongs to: routes without :companyId';

/** The record kinds whose tables `owner` owns, with their tables (RECORD_TABLES of the owner map). */
export function recordKindsOf(owner: string): Array<[RecordKind, TableName]> {
  return (Object.entries(RECORD_TABLES) as Array<[RecordKind, TableName]>).filter(([, table]) => TABLE_OWNERS[table].owner === owner);
}

/**
 * The provider through which a module tells the reference check which company its records belong
 * to (`RecordCompanyResolvers`), generated from the owner map instead of a repository per module:
 * `recordCompanies('goals')` among GoalsModule's providers registers, at start-up, one lookup by id
 * for each kind of RECORD_TABLES whose table goals owns (and by its key for a kind of RECORD_KEYS). The lookup runs in the owner's module, so
 * each table is still read by its owner only (test/unit/ports checks who calls it); the table
 * name comes from the map, never from a request.
 */
export function recordCompanies(owner: string): Type<OnModuleInit> {
  const kinds = recordKindsOf(owner);
  if (kinds.length === 0) throw new Error(`recordCompanies: ${owner} owns no table of RECORD_TABLES`);

  @Injectable()
  class RecordCompanyRepository extends CompanyScopedRepository implements OnModuleInit {
    constructor(
      db: Db,
      private readonly resolvers: RecordCompanyResolvers,
    ) {
      super(db);
    }

    onModuleInit(): void {
      for (const [kind, table] of kinds) {
        const key = (RECORD_KEYS as Partial<Record<RecordKind, string>>)[kind];
        this.resolvers.register(
          kind,
          (ids) =>
            this.unscoped<RecordCompany>(
              RESOLVE,
              `SELECT id::text AS id, company_id::text AS "companyId" FROM ${table} WHERE id = ANY($1::uuid[])`,
              [ids],
            ),
          key
            ? (keys) =>
                this.unscoped<RecordCompany>(
                  RESOLVE_KEY,
                  `SELECT ${key} AS id, company_id::text AS "companyId" FROM ${table} WHERE ${key} = ANY($1::text[])`,
                  [keys],
                )
            : undefined,
        );
      }
    }
  }
  Object.defineProperty(RecordCompanyRepository, 'name', { value: `RecordCompanies_${owner.replace(/\W/g, '_')}` });
  return RecordCompanyRepository;
}
