import { Injectable } from '@nestjs/common';
import { CompanyScopedRepository } from '../../database/company-scoped.repository';
import { Db } from '../../database/db.service';
import type { ProfileBinding, ProfileEntry, SelectorType, ToolPolicy, ToolProfile } from './tool.types';

const PROFILE = `p.id, p.company_id AS "companyId", p.profile_key AS "profileKey", p.name, p.description, p.status,
  p.default_action AS "defaultAction", p.metadata, p.created_at AS "createdAt", p.updated_at AS "updatedAt"`;
const ENTRY = `e.id, e.company_id AS "companyId", e.profile_id AS "profileId", e.selector_type AS "selectorType", e.policy,
  e.application_id AS "applicationId", e.connection_id AS "connectionId", e.catalog_entry_id AS "catalogEntryId",
  e.tool_name AS "toolName", e.created_at AS "createdAt", e.updated_at AS "updatedAt"`;
const BINDING = `b.id, b.company_id AS "companyId", b.profile_id AS "profileId", b.target_type AS "targetType", b.target_id AS "targetId",
  b.priority, b.created_by_agent_id AS "createdByAgentId", b.created_by_user_id AS "createdByUserId",
  b.created_at AS "createdAt", b.updated_at AS "updatedAt"`;

export interface ProfileFields {
  profileKey: string;
  name: string;
  description: string | null;
  status: string;
  defaultAction: 'allow' | 'deny';
  metadata: Record<string, unknown>;
}

export interface EntryFields {
  selectorType: SelectorType;
  policy: ToolPolicy;
  applicationId: string | null;
  connectionId: string | null;
  catalogEntryId: string | null;
  toolName: string | null;
}

const PROFILE_COLUMNS: Record<keyof ProfileFields, string> = {
  profileKey: 'profile_key',
  name: 'name',
  description: 'description',
  status: 'status',
  defaultAction: 'default_action',
  metadata: 'metadata',
};
const ENTRY_COLUMNS: Record<keyof EntryFields, string> = {
  selectorType: 'selector_type',
  policy: 'policy',
  applicationId: 'application_id',
  connectionId: 'connection_id',
  catalogEntryId: 'catalog_entry_id',
  toolName: 'tool_name',
};

/** `SET a = $3, b = $4` of the defined fields (after $1 company and $2 id). */
function setClause(fields: Record<string, unknown>, columns: Record<string, string>): { sql: string; params: unknown[] } {
  const parts: string[] = [];
  const params: unknown[] = [];
  for (const [k, v] of Object.entries(fields)) {
    if (v === undefined || !columns[k]) continue;
    params.push(v !== null && typeof v === 'object' ? JSON.stringify(v) : v);
    parts.push(`${columns[k]} = $${params.length + 2}`);
  }
  return { sql: parts.join(', '), params };
}

/** Tool profiles, their entries and their bindings (tool_profiles, tool_profile_entries, tool_profile_bindings). */
@Injectable()
export class ToolProfilesRepository extends CompanyScopedRepository {
  constructor(db: Db) {
    super(db);
  }

  listProfiles(companyId: string): Promise<ToolProfile[]> {
    return this.rows(
      companyId,
      `SELECT ${PROFILE} FROM tool_profiles p WHERE p.company_id = $1 AND p.status <> 'archived' ORDER BY p.created_at, p.id`,
    );
  }

  findProfile(companyId: string, id: string): Promise<ToolProfile | null> {
    return this.row(companyId, `SELECT ${PROFILE} FROM tool_profiles p WHERE p.company_id = $1 AND p.id = $2`, [id]);
  }

  async keyTaken(companyId: string, key: string, exceptId: string | null = null): Promise<boolean> {
    return (
      (await this.row(
        companyId,
        `SELECT 1 FROM tool_profiles WHERE company_id = $1 AND profile_key = $2 AND id IS DISTINCT FROM $3::uuid`,
        [key, exceptId],
      )) !== null
    );
  }

  async insertProfile(companyId: string, f: ProfileFields): Promise<ToolProfile> {
    const [p] = await this.rows<ToolProfile>(
      companyId,
      `INSERT INTO tool_profiles AS p (company_id, profile_key, name, description, status, default_action, metadata)
       VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING ${PROFILE}`,
      [f.profileKey, f.name, f.description, f.status, f.defaultAction, JSON.stringify(f.metadata)],
    );
    return p;
  }

  async updateProfile(companyId: string, id: string, f: Partial<ProfileFields>): Promise<ToolProfile> {
    const set = setClause(f, PROFILE_COLUMNS);
    if (set.sql)
      await this.rows(companyId, `UPDATE tool_profiles SET ${set.sql}, updated_at = now() WHERE company_id = $1 AND id = $2`, [
        id,
        ...set.params,
      ]);
    return (await this.findProfile(companyId, id))!;
  }

  async deleteProfile(companyId: string, id: string): Promise<void> {
    await this.rows(companyId, `DELETE FROM tool_profiles WHERE company_id = $1 AND id = $2`, [id]);
  }

  entriesOf(companyId: string, profileIds: string[]): Promise<ProfileEntry[]> {
    return this.rows(
      companyId,
      `SELECT ${ENTRY} FROM tool_profile_entries e WHERE e.company_id = $1 AND e.profile_id = ANY($2::uuid[]) ORDER BY e.created_at, e.id`,
      [profileIds],
    );
  }

  findEntry(companyId: string, id: string): Promise<ProfileEntry | null> {
    return this.row(companyId, `SELECT ${ENTRY} FROM tool_profile_entries e WHERE e.company_id = $1 AND e.id = $2`, [id]);
  }

  async insertEntry(companyId: string, profileId: string, f: EntryFields): Promise<ProfileEntry> {
    const [e] = await this.rows<ProfileEntry>(
      companyId,
      `INSERT INTO tool_profile_entries AS e (company_id, profile_id, selector_type, policy, application_id, connection_id, catalog_entry_id, tool_name)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING ${ENTRY}`,
      [profileId, f.selectorType, f.policy, f.applicationId, f.connectionId, f.catalogEntryId, f.toolName],
    );
    await this.touchProfile(companyId, profileId);
    return e;
  }

  async updateEntry(companyId: string, id: string, f: Partial<EntryFields>): Promise<ProfileEntry> {
    const set = setClause(f, ENTRY_COLUMNS);
    if (set.sql)
      await this.rows(companyId, `UPDATE tool_profile_entries SET ${set.sql}, updated_at = now() WHERE company_id = $1 AND id = $2`, [
        id,
        ...set.params,
      ]);
    return (await this.findEntry(companyId, id))!;
  }

  async deleteEntry(companyId: string, id: string): Promise<void> {
    await this.rows(companyId, `DELETE FROM tool_profile_entries WHERE company_id = $1 AND id = $2`, [id]);
  }

  bindingsOf(companyId: string, profileIds: string[]): Promise<ProfileBinding[]> {
    return this.rows(
      companyId,
      `SELECT ${BINDING} FROM tool_profile_bindings b WHERE b.company_id = $1 AND b.profile_id = ANY($2::uuid[]) ORDER BY b.priority, b.created_at`,
      [profileIds],
    );
  }

  /** Binds (again: the existing binding is kept, its priority updated). */
  async bind(
    companyId: string,
    profileId: string,
    b: { targetType: string; targetId: string; priority: number; createdByAgentId: string | null; createdByUserId: string | null },
  ): Promise<ProfileBinding> {
    const [row] = await this.rows<ProfileBinding>(
      companyId,
      `INSERT INTO tool_profile_bindings AS b (company_id, profile_id, target_type, target_id, priority, created_by_agent_id, created_by_user_id)
       VALUES ($1, $2, $3, $4, $5, $6, $7)
       ON CONFLICT (profile_id, target_type, target_id) DO UPDATE SET priority = EXCLUDED.priority, updated_at = now()
       RETURNING ${BINDING}`,
      [profileId, b.targetType, b.targetId, b.priority, b.createdByAgentId, b.createdByUserId],
    );
    await this.touchProfile(companyId, profileId);
    return row;
  }

  async unbind(companyId: string, profileId: string, targetType: string, targetId: string): Promise<ProfileBinding | null> {
    const [row] = await this.returning<ProfileBinding>(
      companyId,
      `DELETE FROM tool_profile_bindings b WHERE b.company_id = $1 AND b.profile_id = $2 AND b.target_type = $3 AND b.target_id = $4 RETURNING ${BINDING}`,
      [profileId, targetType, targetId],
    );
    return row ?? null;
  }

  /** The active profiles that apply to an agent (bound to it or to its whole company). */
  profilesForAgent(companyId: string, agentId: string): Promise<ToolProfile[]> {
    return this.rows(
      companyId,
      `SELECT DISTINCT ${PROFILE} FROM tool_profiles p JOIN tool_profile_bindings b ON b.company_id = p.company_id AND b.profile_id = p.id
        WHERE p.company_id = $1 AND p.status = 'active'
          AND ((b.target_type = 'agent' AND b.target_id = $2) OR (b.target_type = 'company' AND b.target_id = $1::text))`,
      [agentId],
    );
  }

  private async touchProfile(companyId: string, id: string): Promise<void> {
    await this.rows(companyId, `UPDATE tool_profiles SET updated_at = now() WHERE company_id = $1 AND id = $2`, [id]);
  }
}
