import { Injectable } from '@nestjs/common';
import { CompanyScopedRepository } from '../../database/company-scoped.repository';
import { Db } from '../../database/db.service';
import { isoRequired, recordColumns } from '../../database/row-mapping';

export const FOLDER_KINDS = ['routine', 'skill'] as const;
export type FolderKind = (typeof FOLDER_KINDS)[number];

export interface FolderRecord {
  id: string;
  companyId: string;
  kind: FolderKind;
  name: string;
  parentId: string | null;
  color: string | null;
  position: number;
  ownerUserId: string | null;
  systemKey: string | null;
  createdByUserId: string | null;
  createdAt: string;
  updatedAt: string;
}

/** A folder as selected: its record with the timestamps still Dates. */
type SelectedFolder = Omit<FolderRecord, 'createdAt' | 'updatedAt'> & { createdAt: Date; updatedAt: Date };

const COLUMNS = recordColumns(
  'id, company_id, kind, name, parent_id, color, position, owner_user_id, system_key, created_by_user_id, created_at, updated_at',
);

const toRecord = (f: SelectedFolder): FolderRecord => ({ ...f, createdAt: isoRequired(f.createdAt), updatedAt: isoRequired(f.updatedAt) });

export interface FolderInsert {
  kind: FolderKind;
  name: string;
  parentId: string | null;
  color: string | null;
  ownerUserId: string | null;
  systemKey: string | null;
  createdByUserId: string | null;
}

/** The only place the `folders` table is read and written. */
@Injectable()
export class FoldersRepository extends CompanyScopedRepository {
  constructor(db: Db) {
    super(db);
  }

  /** The folders of one kind a user sees: the shared ones and their own (agents: shared only). */
  async visible(companyId: string, kind: FolderKind, userId: string | null): Promise<FolderRecord[]> {
    const rows = await this.rows<SelectedFolder>(
      companyId,
      `SELECT ${COLUMNS} FROM folders
        WHERE company_id = $1 AND kind = $2 AND (owner_user_id IS NULL OR owner_user_id = $3)
        ORDER BY position, lower(name), id`,
      [kind, userId],
    );
    return rows.map(toRecord);
  }

  async get(companyId: string, id: string, lock = false): Promise<FolderRecord | null> {
    const r = await this.row<SelectedFolder>(
      companyId,
      `SELECT ${COLUMNS} FROM folders WHERE company_id = $1 AND id = $2${lock ? ' FOR UPDATE' : ''}`,
      [id],
    );
    return r ? toRecord(r) : null;
  }

  async findMy(companyId: string, kind: FolderKind, userId: string): Promise<FolderRecord | null> {
    const r = await this.row<SelectedFolder>(
      companyId,
      `SELECT ${COLUMNS} FROM folders WHERE company_id = $1 AND kind = $2 AND owner_user_id = $3 AND system_key = 'my'`,
      [kind, userId],
    );
    return r ? toRecord(r) : null;
  }

  /** Whether a sibling (same parent and owner) already has this name, case-insensitively. */
  async nameTaken(
    companyId: string,
    kind: FolderKind,
    parentId: string | null,
    ownerUserId: string | null,
    name: string,
    exceptId: string | null = null,
  ): Promise<boolean> {
    const rows = await this.rows(
      companyId,
      `SELECT 1 FROM folders
        WHERE company_id = $1 AND kind = $2 AND parent_id IS NOT DISTINCT FROM $3::uuid AND owner_user_id IS NOT DISTINCT FROM $4
          AND lower(name) = lower($5) AND ($6::uuid IS NULL OR id <> $6::uuid)
        LIMIT 1`,
      [kind, parentId, ownerUserId, name, exceptId],
    );
    return rows.length > 0;
  }

  /** A new folder at the end of its siblings; null when a personal "my" folder already exists. */
  async insert(companyId: string, f: FolderInsert): Promise<FolderRecord | null> {
    const [row] = await this.rows<SelectedFolder>(
      companyId,
      `INSERT INTO folders (company_id, kind, name, parent_id, color, owner_user_id, system_key, created_by_user_id, position)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8,
               (SELECT coalesce(max(position) + 1, 0) FROM folders
                 WHERE company_id = $1 AND kind = $2 AND parent_id IS NOT DISTINCT FROM $4::uuid AND owner_user_id IS NOT DISTINCT FROM $6))
       ON CONFLICT (company_id, kind, owner_user_id) WHERE system_key = 'my' DO NOTHING
       RETURNING ${COLUMNS}`,
      [f.kind, f.name, f.parentId, f.color, f.ownerUserId, f.systemKey, f.createdByUserId],
    );
    return row ? toRecord(row) : null;
  }

  async update(companyId: string, id: string, values: { name?: string; color?: string | null }): Promise<FolderRecord> {
    const [row] = await this.returning<SelectedFolder>(
      companyId,
      `UPDATE folders SET name = CASE WHEN $3::boolean THEN $4 ELSE name END,
                          color = CASE WHEN $5::boolean THEN $6 ELSE color END,
                          updated_at = now()
        WHERE company_id = $1 AND id = $2 RETURNING ${COLUMNS}`,
      [id, values.name !== undefined, values.name ?? null, values.color !== undefined, values.color ?? null],
    );
    return toRecord(row);
  }

  /** Serialises structural changes (moves, creations under a parent) of one company's tree of a kind across instances. */
  async lockTree(companyId: string, kind: FolderKind): Promise<void> {
    await this.rows(companyId, `SELECT pg_advisory_xact_lock(hashtext('folders:' || $1::text || ':' || $2))`, [kind]);
  }

  /**
   * Puts a folder under a new parent at `position` (siblings from there on shift down one), and
   * gives its whole subtree the new parent's owner (a folder moved into "My …" becomes personal).
   */
  async move(companyId: string, id: string, parentId: string | null, position: number, ownerUserId: string | null): Promise<FolderRecord> {
    const folder = await this.get(companyId, id);
    if (!folder) throw new Error(`folder ${id} vanished under the tree lock`);
    await this.returning(
      companyId,
      `UPDATE folders SET position = position + 1
        WHERE company_id = $1 AND kind = $2 AND parent_id IS NOT DISTINCT FROM $3::uuid AND owner_user_id IS NOT DISTINCT FROM $4
          AND position >= $5 AND id <> $6`,
      [folder.kind, parentId, ownerUserId, position, id],
    );
    await this.returning(
      companyId,
      `WITH RECURSIVE sub AS (
         SELECT id FROM folders WHERE company_id = $1 AND id = $2
         UNION ALL
         SELECT f.id FROM folders f JOIN sub ON f.parent_id = sub.id WHERE f.company_id = $1)
       UPDATE folders SET owner_user_id = $3, updated_at = now() WHERE company_id = $1 AND id IN (SELECT id FROM sub)`,
      [id, ownerUserId],
    );
    const [row] = await this.returning<SelectedFolder>(
      companyId,
      `UPDATE folders SET parent_id = $3, position = $4, updated_at = now() WHERE company_id = $1 AND id = $2 RETURNING ${COLUMNS}`,
      [id, parentId, position],
    );
    return toRecord(row);
  }

  /** Deletes a folder and its subfolders (cascade); their items become unfiled. Returns the deleted ids. */
  async deleteTree(companyId: string, id: string): Promise<string[]> {
    const rows = await this.returning<{ id: string }>(
      companyId,
      `WITH RECURSIVE sub AS (
         SELECT id FROM folders WHERE company_id = $1 AND id = $2
         UNION ALL
         SELECT f.id FROM folders f JOIN sub ON f.parent_id = sub.id WHERE f.company_id = $1)
       DELETE FROM folders WHERE company_id = $1 AND id IN (SELECT id FROM sub) RETURNING id`,
      [id],
    );
    return rows.map((r) => r.id);
  }
}
