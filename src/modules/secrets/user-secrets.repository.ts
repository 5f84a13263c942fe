import { Injectable } from '@nestjs/common';
import { CompanyScopedRepository } from '../../database/company-scoped.repository';
import { Db } from '../../database/db.service';
import { recordColumns } from '../../database/row-mapping';

export interface UserSecretDefinitionRecord {
  id: string;
  companyId: string;
  key: string;
  name: string;
  description: string | null;
  usageGuidance: string | null;
  status: string;
  createdByAgentId: string | null;
  createdByUserId: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface UserSecretValueRecord {
  id: string;
  companyId: string;
  definitionId: string;
  userId: string;
  version: number;
  createdAt: Date;
  updatedAt: Date;
}

export interface EncryptedMaterial {
  ciphertext: Buffer;
  iv: Buffer;
  authTag: Buffer;
  keyFingerprint: string;
  valueSha256: string;
}

const VALUE_COLUMNS = recordColumns('id, company_id, definition_id, user_id, version, created_at, updated_at');
const DEFINITION_COLUMNS = recordColumns(
  'id, company_id, key, name, description, usage_guidance, status, created_by_agent_id, created_by_user_id, created_at, updated_at',
);

/** user_secret_definitions and user_secret_values (never selecting the ciphertext for a response). */
@Injectable()
export class UserSecretsRepository extends CompanyScopedRepository {
  constructor(db: Db) {
    super(db);
  }

  definitions(companyId: string): Promise<UserSecretDefinitionRecord[]> {
    return this.rows(companyId, `SELECT ${DEFINITION_COLUMNS} FROM user_secret_definitions WHERE company_id = $1 ORDER BY name, id`);
  }

  definition(companyId: string, id: string, lock = false): Promise<UserSecretDefinitionRecord | null> {
    return this.row(
      companyId,
      `SELECT ${DEFINITION_COLUMNS} FROM user_secret_definitions WHERE company_id = $1 AND id = $2 ${lock ? 'FOR UPDATE' : ''}`,
      [id],
    );
  }

  /** The new definition, or null when the key is taken in the company. */
  insertDefinition(
    companyId: string,
    d: {
      key: string;
      name: string;
      description: string | null;
      usageGuidance: string | null;
      status: string;
      userId: string | null;
      agentId: string | null;
    },
  ): Promise<UserSecretDefinitionRecord | null> {
    return this.row(
      companyId,
      `INSERT INTO user_secret_definitions (company_id, key, name, description, usage_guidance, status, created_by_user_id, created_by_agent_id)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (company_id, key) DO NOTHING RETURNING ${DEFINITION_COLUMNS}`,
      [d.key, d.name, d.description, d.usageGuidance, d.status, d.userId, d.agentId],
    );
  }

  async updateDefinition(
    companyId: string,
    id: string,
    c: { name?: string; description?: string | null; usageGuidance?: string | null; status?: string },
  ): Promise<UserSecretDefinitionRecord> {
    const [row] = await this.returning<UserSecretDefinitionRecord>(
      companyId,
      `UPDATE user_secret_definitions SET
         name = coalesce($3, name),
         description = CASE WHEN $4 THEN $5 ELSE description END,
         usage_guidance = CASE WHEN $6 THEN $7 ELSE usage_guidance END,
         status = coalesce($8, status), updated_at = now()
       WHERE company_id = $1 AND id = $2 RETURNING ${DEFINITION_COLUMNS}`,
      [
        id,
        c.name ?? null,
        c.description !== undefined,
        c.description ?? null,
        c.usageGuidance !== undefined,
        c.usageGuidance ?? null,
        c.status ?? null,
      ],
    );
    return row;
  }

  /** Deletes the definition and every user's value of it. */
  async deleteDefinition(companyId: string, id: string): Promise<void> {
    await this.returning(companyId, `DELETE FROM user_secret_definitions WHERE company_id = $1 AND id = $2 RETURNING id`, [id]);
  }

  /** A user's values in the company, with their definitions. */
  valuesOfUser(companyId: string, userId: string): Promise<UserSecretValueRecord[]> {
    return this.rows(
      companyId,
      `SELECT ${VALUE_COLUMNS} FROM user_secret_values WHERE company_id = $1 AND user_id = $2 ORDER BY created_at, id`,
      [userId],
    );
  }

  value(companyId: string, id: string, userId: string, lock = false): Promise<UserSecretValueRecord | null> {
    return this.row(
      companyId,
      `SELECT ${VALUE_COLUMNS} FROM user_secret_values WHERE company_id = $1 AND id = $2 AND user_id = $3 ${lock ? 'FOR UPDATE' : ''}`,
      [id, userId],
    );
  }

  /** The new value row, or null when the user has a value of the definition already. */
  insertValue(
    companyId: string,
    v: { id: string; definitionId: string; userId: string } & EncryptedMaterial,
  ): Promise<UserSecretValueRecord | null> {
    return this.row(
      companyId,
      `INSERT INTO user_secret_values (id, company_id, definition_id, user_id, version, ciphertext, iv, auth_tag, key_fingerprint, value_sha256)
       VALUES ($2, $1, $3, $4, 1, $5, $6, $7, $8, $9) ON CONFLICT (definition_id, user_id) DO NOTHING RETURNING ${VALUE_COLUMNS}`,
      [v.id, v.definitionId, v.userId, v.ciphertext, v.iv, v.authTag, v.keyFingerprint, v.valueSha256],
    );
  }

  async rotateValue(companyId: string, id: string, version: number, m: EncryptedMaterial): Promise<UserSecretValueRecord> {
    const [row] = await this.returning<UserSecretValueRecord>(
      companyId,
      `UPDATE user_secret_values SET version = $3, ciphertext = $4, iv = $5, auth_tag = $6, key_fingerprint = $7, value_sha256 = $8, updated_at = now()
        WHERE company_id = $1 AND id = $2 RETURNING ${VALUE_COLUMNS}`,
      [id, version, m.ciphertext, m.iv, m.authTag, m.keyFingerprint, m.valueSha256],
    );
    return row;
  }

  async deleteValue(companyId: string, id: string): Promise<void> {
    await this.returning(companyId, `DELETE FROM user_secret_values WHERE company_id = $1 AND id = $2 RETURNING id`, [id]);
  }

  /**
   * Coverage of a definition: values of active human members, values of others, active human
   * members without a value (reads the access module's memberships: see FOREIGN_READS).
   */
  async coverage(companyId: string, definitionId: string): Promise<{ configured: number; inactive: number; missing: number }> {
    const row = await this.row<{ configured: number; inactive: number; missing: number }>(
      companyId,
      `WITH members AS (SELECT principal_id FROM company_memberships WHERE company_id = $1 AND principal_type = 'user' AND status = 'active'),
            vals AS (SELECT user_id FROM user_secret_values WHERE company_id = $1 AND definition_id = $2)
       SELECT (SELECT count(*)::int FROM vals WHERE user_id IN (SELECT principal_id FROM members)) AS configured,
              (SELECT count(*)::int FROM vals WHERE user_id NOT IN (SELECT principal_id FROM members)) AS inactive,
              (SELECT count(*)::int FROM members WHERE principal_id NOT IN (SELECT user_id FROM vals)) AS missing`,
      [definitionId],
    );
    return row ?? { configured: 0, inactive: 0, missing: 0 };
  }
}
