import { Injectable } from '@nestjs/common';
import type { ReferenceKind } from './refers-to.decorator';

/** A record and the company it belongs to. */
export interface RecordCompany {
  id: string;
  companyId: string;
}

/** The records among `ids` that exist, each with its company: one statement for all of them. */
export type CompanyOf = (ids: string[]) => Promise<RecordCompany[]>;

/**
 * Which company a record of each kind belongs to: the port of the reference check of request
 * bodies (`@RefersTo`) and of routes without `:companyId`. Each owning module registers the
 * resolver of its kinds at start-up, generated from the owner map (`recordCompanies('<owner>')`,
 * record-company.repository.ts), so this part of common names no domain table. A kind without a resolver knows no record.
 */
@Injectable()
export class RecordCompanyResolvers {
  private readonly byKind = new Map<ReferenceKind, CompanyOf[]>();
  private readonly byKey = new Map<ReferenceKind, CompanyOf[]>();

  /** `companyOfKeys`: for a kind a path may also name by another unique key (RECORD_KEYS), the lookup by that key. */
  register(kind: ReferenceKind, companyOf: CompanyOf, companyOfKeys?: CompanyOf): void {
    this.byKind.set(kind, [...(this.byKind.get(kind) ?? []), companyOf]);
    if (companyOfKeys) this.byKey.set(kind, [...(this.byKey.get(kind) ?? []), companyOfKeys]);
  }

  /** The company of each existing record among `ids` (keys in lower case). */
  async companiesOf(kind: ReferenceKind, ids: string[]): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    if (ids.length === 0) return out;
    const unique = [...new Set(ids.map((id) => id.toLowerCase()))];
    for (const companyOf of this.byKind.get(kind) ?? []) {
      for (const r of await companyOf(unique)) out.set(r.id.toLowerCase(), r.companyId);
    }
    return out;
  }

  /** The company owning a record, or null when it does not exist. */
  async companyOf(kind: ReferenceKind, id: string): Promise<string | null> {
    return (await this.companiesOf(kind, [id])).get(id.toLowerCase()) ?? null;
  }

  /** The company owning the record of this kind with this key (an issue's identifier, as stored), or null. */
  async companyOfKey(kind: ReferenceKind, key: string): Promise<string | null> {
    for (const companyOf of this.byKey.get(kind) ?? []) {
      const [found] = await companyOf([key]);
      if (found) return found.companyId;
    }
    return null;
  }
}
