import { Injectable } from '@nestjs/common';
import { Db } from '../../database/db.service';
import type { ReferenceKind } from './refers-to.decorator';

/**
 * Where each kind of referenced record lives (every table has a company_id). The reference check
 * only reads `id, company_id`; the owning modules keep everything else. Tables that do not exist
 * (yet) are skipped.
 */
const TABLES: Record<ReferenceKind, string[]> = {
  agent: ['agents'],
  issue: ['issues'],
  project: ['projects'],
  goal: ['goals'],
  workspace: ['execution_workspaces', 'project_workspaces'],
  label: ['labels'],
  comment: ['issue_comments'],
  run: ['heartbeat_runs'],
  cost_event: ['cost_events'],
  attachment: ['issue_attachments'],
  asset: ['assets'],
  secret: ['company_secrets'],
  routine: ['routines'],
  approval: ['approvals'],
  document_revision: ['issue_document_revisions'],
  folder: ['folders'],
};

/** Reads which company owns referenced ids, for the one reference check of all routes. */
@Injectable()
export class CompanyReferencesRepository {
  private existing?: Promise<Set<string>>;

  constructor(private readonly db: Db) {}

  private tables(kind: ReferenceKind): Promise<string[]> {
    this.existing ??= this.db
      .query<{ name: string }>(
        `SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
         WHERE n.nspname = current_schema() AND c.relkind IN ('r','p') AND c.relname = ANY($1::text[])`,
        [[...new Set(Object.values(TABLES).flat())]],
      )
      .then((rows) => new Set(rows.map((r) => r.name)))
      .catch((err) => {
        this.existing = undefined;
        throw err;
      });
    return this.existing.then((set) => TABLES[kind].filter((t) => set.has(t)));
  }

  /**
   * The ids among `ids` that are not records of `companyId`: unknown ones and other companies' alike
   * (one answer for both, so that the reference check tells nothing about other companies).
   */
  async notOfCompany(companyId: string, kind: ReferenceKind, ids: string[]): Promise<string[]> {
    if (ids.length === 0) return [];
    const own = new Set<string>();
    for (const table of await this.tables(kind)) {
      const rows = await this.db.query<{ id: string }>(
        `SELECT id::text AS id FROM "${table}" WHERE id = ANY($2::uuid[]) AND company_id = $1::uuid`,
        [companyId, ids],
      );
      for (const r of rows) own.add(r.id);
    }
    return ids.filter((id) => !own.has(id.toLowerCase()));
  }

  /** The ids among `ids` that exist and belong to a company other than `companyId`. */
  async foreign(companyId: string, kind: ReferenceKind, ids: string[]): Promise<string[]> {
    if (ids.length === 0) return [];
    const out: string[] = [];
    for (const table of await this.tables(kind)) {
      const rows = await this.db.query<{ id: string }>(
        `SELECT id::text AS id FROM "${table}" WHERE id = ANY($2::uuid[]) AND company_id IS DISTINCT FROM $1::uuid`,
        [companyId, ids],
      );
      out.push(...rows.map((r) => r.id));
    }
    return out;
  }

  /** The company owning a record, or null when it does not exist. */
  async companyOf(kind: ReferenceKind, id: string): Promise<string | null> {
    for (const table of await this.tables(kind)) {
      const [row] = await this.db.query<{ company_id: string }>(
        `SELECT company_id::text AS company_id FROM "${table}" WHERE id = $1::uuid`,
        [id],
      );
      if (row) return row.company_id;
    }
    return null;
  }
}
