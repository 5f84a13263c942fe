import { Injectable } from '@nestjs/common';
import { CompanyScopedRepository } from '../../database/company-scoped.repository';
import { Db } from '../../database/db.service';
import { iso, isoRequired, recordColumns } from '../../database/row-mapping';
import type { AuditResult } from './skill-audit';
import type { InventoryEntry, SkillFileKind, StoredSkillFile, TrustLevel } from './skill-files';

export interface SkillRecord {
  id: string;
  companyId: string;
  key: string;
  slug: string;
  name: string;
  description: string | null;
  sourceType: string;
  sourceLocator: string | null;
  sourceRef: string | null;
  trustLevel: TrustLevel;
  compatibility: string;
  fileInventory: InventoryEntry[];
  metadata: Record<string, unknown>;
  contentHash: string;
  audit: AuditResult | null;
  bundled: boolean;
  /** the skills folder it is filed in (null: unfiled) */
  folderId: string | null;
  createdAt: string;
  updatedAt: string;
}

/** What a write sets (id and timestamps are the database's). */
export type SkillWrite = Omit<SkillRecord, 'id' | 'companyId' | 'folderId' | 'createdAt' | 'updatedAt'>;

/** A skill as selected: its record with the timestamps still Dates and the JSON documents maybe null. */
type SelectedSkill = Omit<SkillRecord, 'fileInventory' | 'metadata' | 'createdAt' | 'updatedAt'> & {
  fileInventory: InventoryEntry[] | null;
  metadata: Record<string, unknown> | null;
  createdAt: Date;
  updatedAt: Date | null;
};

const COLUMNS =
  recordColumns(`id, company_id, key, slug, name, description, source_type, source_locator, source_ref, trust_level, compatibility,
  file_inventory, metadata, content_hash, audit, bundled, folder_id, created_at, updated_at`);

/** A stored file of a skill, as StoredSkillFile. */
const FILE_COLUMNS = recordColumns('path, kind, size_bytes, sha256, content');

const toRecord = (s: SelectedSkill): SkillRecord => ({
  ...s,
  fileInventory: s.fileInventory ?? [],
  metadata: s.metadata ?? {},
  createdAt: isoRequired(s.createdAt),
  updatedAt: iso(s.updatedAt) ?? isoRequired(s.createdAt),
});

/** The values of an insert's $2..$15 (key .. bundled), in the column order of `upsert` and `insertNew`. */
const writeParams = (w: SkillWrite): unknown[] => [
  w.key,
  w.slug,
  w.name,
  w.description,
  w.sourceType,
  w.sourceLocator,
  w.sourceRef,
  w.trustLevel,
  w.compatibility,
  JSON.stringify(w.fileInventory),
  JSON.stringify(w.metadata),
  w.contentHash,
  w.audit ? JSON.stringify(w.audit) : null,
  w.bundled,
];

/** The only place `company_skills` and `company_skill_files` are read and written. */
@Injectable()
export class SkillsRepository extends CompanyScopedRepository {
  constructor(db: Db) {
    super(db);
  }

  async list(companyId: string): Promise<SkillRecord[]> {
    const rows = await this.rows<SelectedSkill>(
      companyId,
      `SELECT ${COLUMNS} FROM company_skills WHERE company_id = $1 ORDER BY bundled DESC, name, id`,
    );
    return rows.map(toRecord);
  }

  /**
   * The list page as JSON text: each row's entry is kept by a trigger in `list_json` (see the
   * migration SkillListJson), the per-request `attachedAgentCount` comes from the live agents'
   * desired keys (a read of the agents table, owned by the agents module, for this page), and the
   * folder's path from the skill folders (a read of the folders module's table, for the sidebar).
   */
  async listJson(companyId: string): Promise<string> {
    const rows = await this.rows<{ listJson: string; n: number; folderId: string | null; folderPath: string | null }>(
      companyId,
      `WITH RECURSIVE usage AS (
         SELECT k AS key, count(DISTINCT a.id)::int AS n
           FROM agents a,
                LATERAL jsonb_array_elements_text(CASE WHEN jsonb_typeof(a.adapter_config->'serviceSkillSync'->'desiredSkills') = 'array'
                                                       THEN a.adapter_config->'serviceSkillSync'->'desiredSkills' ELSE '[]'::jsonb END) k
          WHERE a.company_id = $1 AND a.status <> 'terminated'
          GROUP BY k),
       fp AS (
         SELECT id, name::text AS path FROM folders WHERE company_id = $1 AND kind = 'skill' AND parent_id IS NULL
         UNION ALL
         SELECT f.id, fp.path || '/' || f.name FROM folders f JOIN fp ON f.parent_id = fp.id WHERE f.company_id = $1)
       SELECT s.list_json AS "listJson", coalesce(u.n, 0) AS n, s.folder_id AS "folderId", fp.path AS "folderPath"
         FROM company_skills s LEFT JOIN usage u ON u.key = s.key LEFT JOIN fp ON fp.id = s.folder_id
        WHERE s.company_id = $1
        ORDER BY s.bundled DESC, s.name, s.id`,
    );
    const entry = (r: (typeof rows)[number]) =>
      `${r.listJson.slice(0, -1)},"attachedAgentCount":${Number(r.n)},"folderId":${JSON.stringify(r.folderId)},"folderPath":${JSON.stringify(r.folderPath)}}`;
    return `[${rows.map(entry).join(',')}]`;
  }

  /** How many skills each folder holds (null: unfiled), for the folders sidebar. */
  folderCounts(companyId: string): Promise<Array<{ folderId: string | null; n: number }>> {
    return this.rows(
      companyId,
      `SELECT folder_id AS "folderId", count(*)::int AS n FROM company_skills WHERE company_id = $1 GROUP BY folder_id`,
    );
  }

  /** Files a skill in a folder (null: unfiled); false when the company has no such skill. */
  async setFolder(companyId: string, skillId: string, folderId: string | null): Promise<boolean> {
    const rows = await this.returning<{ id: string }>(
      companyId,
      `UPDATE company_skills SET folder_id = $3 WHERE company_id = $1 AND id = $2 RETURNING id`,
      [skillId, folderId],
    );
    return rows.length > 0;
  }

  /** Key, hash and bundled flag of the given keys (the bundled-skills check on every list). */
  async hashesOf(companyId: string, keys: string[]): Promise<Map<string, { contentHash: string; bundled: boolean }>> {
    const rows = await this.rows<{ key: string; contentHash: string; bundled: boolean }>(
      companyId,
      `SELECT key, content_hash AS "contentHash", bundled FROM company_skills WHERE company_id = $1 AND key = ANY($2)`,
      [keys],
    );
    return new Map(rows.map(({ key, ...hash }) => [key, hash]));
  }

  /** Skills a reference list can name: by id, key or slug (the candidates of reference resolution). */
  async refsMatching(companyId: string, ids: string[], refs: string[]): Promise<Array<{ id: string; key: string; slug: string }>> {
    return this.rows(
      companyId,
      `SELECT id, key, slug FROM company_skills WHERE company_id = $1 AND (id = ANY($2::uuid[]) OR key = ANY($3) OR slug = ANY($3))`,
      [ids, refs],
    );
  }

  async byId(companyId: string, id: string, lock = false): Promise<SkillRecord | null> {
    const r = await this.row<SelectedSkill>(
      companyId,
      `SELECT ${COLUMNS} FROM company_skills WHERE company_id = $1 AND id = $2${lock ? ' FOR UPDATE' : ''}`,
      [id],
    );
    return r ? toRecord(r) : null;
  }

  async byKey(companyId: string, key: string): Promise<SkillRecord | null> {
    const r = await this.row<SelectedSkill>(companyId, `SELECT ${COLUMNS} FROM company_skills WHERE company_id = $1 AND key = $2`, [key]);
    return r ? toRecord(r) : null;
  }

  /** id, key and slug of every skill: what reference resolution needs. */
  async refs(companyId: string): Promise<Array<{ id: string; key: string; slug: string }>> {
    return this.rows(companyId, `SELECT id, key, slug FROM company_skills WHERE company_id = $1`);
  }

  async byKeys(companyId: string, keys: string[]): Promise<SkillRecord[]> {
    if (!keys.length) return [];
    const rows = await this.rows<SelectedSkill>(
      companyId,
      `SELECT ${COLUMNS} FROM company_skills WHERE company_id = $1 AND key = ANY($2)`,
      [keys],
    );
    return rows.map(toRecord);
  }

  async slugTaken(companyId: string, slug: string): Promise<boolean> {
    return (await this.rows(companyId, `SELECT 1 FROM company_skills WHERE company_id = $1 AND slug = $2 LIMIT 1`, [slug])).length > 0;
  }

  /**
   * Insert, or update the row with the same key; its files are replaced. The upsert locks the row,
   * so concurrent writes of one skill apply one after the other. Returns the row and whether it is new.
   */
  async upsert(companyId: string, w: SkillWrite, files: StoredSkillFile[]): Promise<{ skill: SkillRecord; created: boolean }> {
    const [row] = await this.rows<SelectedSkill & { inserted: boolean }>(
      companyId,
      `INSERT INTO company_skills (company_id, key, slug, name, description, source_type, source_locator, source_ref, trust_level,
                                   compatibility, file_inventory, metadata, content_hash, audit, bundled)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)
       ON CONFLICT (company_id, key) DO UPDATE SET
         slug = EXCLUDED.slug, name = EXCLUDED.name, description = EXCLUDED.description, source_type = EXCLUDED.source_type,
         source_locator = EXCLUDED.source_locator, source_ref = EXCLUDED.source_ref, trust_level = EXCLUDED.trust_level,
         compatibility = EXCLUDED.compatibility, file_inventory = EXCLUDED.file_inventory, metadata = EXCLUDED.metadata,
         content_hash = EXCLUDED.content_hash, audit = EXCLUDED.audit, bundled = EXCLUDED.bundled, updated_at = now()
       RETURNING ${COLUMNS}, (xmax = 0) AS inserted`,
      writeParams(w),
    );
    await this.replaceFiles(companyId, row.id, files);
    const { inserted, ...skill } = row;
    return { skill: toRecord(skill), created: inserted === true };
  }

  /** Insert only; null when the key exists (the caller reports the conflict). */
  async insertNew(companyId: string, w: SkillWrite, files: StoredSkillFile[]): Promise<SkillRecord | null> {
    const [row] = await this.rows<SelectedSkill>(
      companyId,
      `INSERT INTO company_skills (company_id, key, slug, name, description, source_type, source_locator, source_ref, trust_level,
                                   compatibility, file_inventory, metadata, content_hash, audit, bundled)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)
       ON CONFLICT (company_id, key) DO NOTHING
       RETURNING ${COLUMNS}`,
      writeParams(w),
    );
    if (!row) return null;
    await this.replaceFiles(companyId, row.id, files);
    return toRecord(row);
  }

  private async replaceFiles(companyId: string, skillId: string, files: StoredSkillFile[]): Promise<void> {
    await this.rows(companyId, `DELETE FROM company_skill_files WHERE company_id = $1 AND skill_id = $2`, [skillId]);
    if (!files.length) return;
    await this.rows(
      companyId,
      `INSERT INTO company_skill_files (company_id, skill_id, path, kind, size_bytes, sha256, content)
       SELECT $1::uuid, $2::uuid, * FROM unnest($3::text[], $4::text[], $5::int[], $6::text[], $7::text[])`,
      [
        skillId,
        files.map((f) => f.path),
        files.map((f) => f.kind),
        files.map((f) => f.sizeBytes),
        files.map((f) => f.sha256),
        files.map((f) => f.content),
      ],
    );
  }

  async delete(companyId: string, id: string): Promise<boolean> {
    const rows = await this.returning<{ id: string }>(
      companyId,
      `DELETE FROM company_skills WHERE company_id = $1 AND id = $2 RETURNING id`,
      [id],
    );
    return rows.length > 0;
  }

  files(companyId: string, skillId: string): Promise<StoredSkillFile[]> {
    return this.rows<StoredSkillFile>(
      companyId,
      `SELECT ${FILE_COLUMNS} FROM company_skill_files WHERE company_id = $1 AND skill_id = $2 ORDER BY path`,
      [skillId],
    );
  }

  /** Files of several skills at once (delivery), keyed by skill id. */
  async filesOf(companyId: string, skillIds: string[]): Promise<Map<string, StoredSkillFile[]>> {
    const out = new Map<string, StoredSkillFile[]>(skillIds.map((id) => [id, []]));
    if (!skillIds.length) return out;
    const rows = await this.rows<StoredSkillFile & { skillId: string }>(
      companyId,
      `SELECT skill_id AS "skillId", ${FILE_COLUMNS} FROM company_skill_files WHERE company_id = $1 AND skill_id = ANY($2) ORDER BY path`,
      [skillIds],
    );
    for (const { skillId, ...file } of rows) out.get(skillId)?.push(file);
    return out;
  }

  file(companyId: string, skillId: string, path: string): Promise<StoredSkillFile | null> {
    return this.row<StoredSkillFile>(
      companyId,
      `SELECT ${FILE_COLUMNS} FROM company_skill_files WHERE company_id = $1 AND skill_id = $2 AND path = $3`,
      [skillId, path],
    );
  }

  async setAudit(companyId: string, id: string, audit: AuditResult): Promise<void> {
    await this.rows(companyId, `UPDATE company_skills SET audit = $3 WHERE company_id = $1 AND id = $2`, [id, JSON.stringify(audit)]);
  }

  // ---------------------------------------------------------------- agents (read for this module's pages)

  /**
   * Everything a run launch needs in one round trip: the agent's adapter type and config, and the
   * skills (with files) among `extraKeys` plus the agent's desired keys. Reads the agents table
   * (owned by the agents module) for the launch hook, where every millisecond delays the process.
   */
  async launchDelivery(
    companyId: string,
    agentId: string,
    extraKeys: string[],
  ): Promise<{
    adapterType: string;
    adapterConfig: Record<string, unknown>;
    skills: Array<{ id: string; key: string; slug: string; contentHash: string; verdict: string | null; files: StoredSkillFile[] }>;
  } | null> {
    const rows = await this.rows<{
      adapterType: string;
      adapterConfig: Record<string, unknown>;
      skillId: string | null;
      key: string;
      slug: string;
      contentHash: string;
      verdict: string | null;
      path: string | null;
      kind: SkillFileKind;
      sizeBytes: number;
      sha256: string;
      content: string | null;
    }>(
      companyId,
      `SELECT a.adapter_type AS "adapterType", a.adapter_config AS "adapterConfig", s.id AS "skillId", s.key, s.slug,
              s.content_hash AS "contentHash", s.audit->>'verdict' AS verdict, ${recordColumns('path, kind, size_bytes, sha256, content', 'f')}
         FROM agents a
         LEFT JOIN company_skills s ON s.company_id = a.company_id AND (s.key = ANY($3::text[]) OR s.key IN (
              SELECT jsonb_array_elements_text(CASE WHEN jsonb_typeof(a.adapter_config->'serviceSkillSync'->'desiredSkills') = 'array'
                                                    THEN a.adapter_config->'serviceSkillSync'->'desiredSkills' ELSE '[]'::jsonb END)))
         LEFT JOIN company_skill_files f ON f.skill_id = s.id AND f.company_id = a.company_id
        WHERE a.company_id = $1 AND a.id = $2`,
      [agentId, extraKeys],
    );
    if (!rows.length) return null;
    const skills = new Map<
      string,
      { id: string; key: string; slug: string; contentHash: string; verdict: string | null; files: StoredSkillFile[] }
    >();
    for (const r of rows) {
      if (!r.skillId) continue;
      let sk = skills.get(r.skillId);
      if (!sk)
        skills.set(
          r.skillId,
          (sk = { id: r.skillId, key: r.key, slug: r.slug, contentHash: r.contentHash, verdict: r.verdict, files: [] }),
        );
      if (r.path) sk.files.push({ path: r.path, kind: r.kind, sizeBytes: r.sizeBytes, sha256: r.sha256, content: r.content });
    }
    return { adapterType: rows[0].adapterType, adapterConfig: rows[0].adapterConfig ?? {}, skills: [...skills.values()] };
  }

  /**
   * Desired skill keys per live agent of the company. A read of the agents table for the skills
   * pages (usage counts, detail usage): the agents module owns the table; this is read-only.
   */
  async agentDesiredKeys(
    companyId: string,
  ): Promise<Array<{ id: string; name: string; urlKey: string; adapterType: string; status: string; keys: string[] }>> {
    const rows = await this.rows<{ id: string; name: string; urlKey: string; adapterType: string; status: string; keys: string[] | null }>(
      companyId,
      `SELECT id, name, url_key AS "urlKey", adapter_type AS "adapterType", status,
              ARRAY(SELECT jsonb_array_elements_text(CASE WHEN jsonb_typeof(adapter_config->'serviceSkillSync'->'desiredSkills') = 'array'
                                                          THEN adapter_config->'serviceSkillSync'->'desiredSkills' ELSE '[]'::jsonb END)) AS keys
         FROM agents WHERE company_id = $1 AND status <> 'terminated' ORDER BY created_at, id`,
    );
    return rows.map((r) => ({ ...r, keys: r.keys ?? [] }));
  }
}
