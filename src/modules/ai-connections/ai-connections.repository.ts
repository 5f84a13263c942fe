import { Injectable } from '@nestjs/common';
import { CompanyScopedRepository } from '../../database/company-scoped.repository';
import { Db } from '../../database/db.service';
import { iso, isoRequired, recordColumns } from '../../database/row-mapping';

export type AiOwnership = 'personal' | 'shared';
export type AiTestStatus = 'pass' | 'fail';

export interface AiConnectionRecord {
  id: string;
  companyId: string;
  provider: string;
  method: 'api_key';
  name: string;
  ownership: AiOwnership;
  ownerUserId: string | null;
  secretId: string | null;
  baseUrl: string | null;
  defaultModel: string | null;
  isDefault: boolean;
  lastTestStatus: AiTestStatus | null;
  lastTestMessage: string | null;
  lastTestedAt: string | null;
  createdByUserId: string | null;
  createdAt: string;
  updatedAt: string;
}

const COLUMNS =
  recordColumns(`id, company_id, provider, method, name, ownership, owner_user_id, secret_id, base_url, default_model, is_default,
  last_test_status, last_test_message, last_tested_at, created_by_user_id, created_at, updated_at`);

/** A record as selected: its timestamps as the database gives them. */
type SelectedConnection = Omit<AiConnectionRecord, 'lastTestedAt' | 'createdAt' | 'updatedAt'> & {
  lastTestedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
};

/** The record's timestamps in ISO 8601. */
const toRecord = (r: SelectedConnection): AiConnectionRecord => ({
  ...r,
  lastTestedAt: iso(r.lastTestedAt),
  createdAt: isoRequired(r.createdAt),
  updatedAt: isoRequired(r.updatedAt),
});

export interface AiConnectionInsert {
  provider: string;
  name: string;
  ownership: AiOwnership;
  ownerUserId: string | null;
  secretId: string;
  baseUrl: string | null;
  defaultModel: string | null;
  createdByUserId: string | null;
}

export interface AiConnectionChanges {
  name?: string;
  secretId?: string;
  baseUrl?: string | null;
  defaultModel?: string | null;
}

/** The only place the `ai_connections` table is read and written. */
@Injectable()
export class AiConnectionsRepository extends CompanyScopedRepository {
  constructor(db: Db) {
    super(db);
  }

  /** The connections a user may use: the company's shared ones and their own personal ones (agents and others: shared only). */
  async visible(companyId: string, userId: string | null): Promise<AiConnectionRecord[]> {
    const rows = await this.rows<SelectedConnection>(
      companyId,
      `SELECT ${COLUMNS} FROM ai_connections
        WHERE company_id = $1 AND (ownership = 'shared' OR owner_user_id = $2)
        ORDER BY provider, created_at, id`,
      [userId],
    );
    return rows.map(toRecord);
  }

  async get(companyId: string, id: string, lock = false): Promise<AiConnectionRecord | null> {
    const r = await this.row<SelectedConnection>(
      companyId,
      `SELECT ${COLUMNS} FROM ai_connections WHERE company_id = $1 AND id = $2${lock ? ' FOR UPDATE' : ''}`,
      [id],
    );
    return r ? toRecord(r) : null;
  }

  /** The default of a provider for a user: their personal default, else the company's shared default. */
  async defaultFor(companyId: string, provider: string, userId: string | null): Promise<AiConnectionRecord | null> {
    const r = await this.row<SelectedConnection>(
      companyId,
      `SELECT ${COLUMNS} FROM ai_connections
        WHERE company_id = $1 AND provider = $2 AND is_default AND (owner_user_id = $3 OR ownership = 'shared')
        ORDER BY (owner_user_id IS NOT NULL) DESC
        LIMIT 1`,
      [provider, userId],
    );
    return r ? toRecord(r) : null;
  }

  async insert(companyId: string, c: AiConnectionInsert): Promise<AiConnectionRecord> {
    const [row] = await this.rows<SelectedConnection>(
      companyId,
      `INSERT INTO ai_connections (company_id, provider, name, ownership, owner_user_id, secret_id, base_url, default_model, created_by_user_id)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
       RETURNING ${COLUMNS}`,
      [c.provider, c.name, c.ownership, c.ownerUserId, c.secretId, c.baseUrl, c.defaultModel, c.createdByUserId],
    );
    return toRecord(row);
  }

  async update(companyId: string, id: string, ch: AiConnectionChanges): Promise<AiConnectionRecord> {
    const [row] = await this.returning<SelectedConnection>(
      companyId,
      `UPDATE ai_connections SET
          name = CASE WHEN $3 THEN $4 ELSE name END,
          secret_id = CASE WHEN $5 THEN $6::uuid ELSE secret_id END,
          base_url = CASE WHEN $7 THEN $8 ELSE base_url END,
          default_model = CASE WHEN $9 THEN $10 ELSE default_model END,
          updated_at = now()
        WHERE company_id = $1 AND id = $2
        RETURNING ${COLUMNS}`,
      [
        id,
        ch.name !== undefined,
        ch.name ?? null,
        ch.secretId !== undefined,
        ch.secretId ?? null,
        ch.baseUrl !== undefined,
        ch.baseUrl ?? null,
        ch.defaultModel !== undefined,
        ch.defaultModel ?? null,
      ],
    );
    return toRecord(row);
  }

  /**
   * Makes the connection the default of its provider for its owner (the company's, for a shared
   * one): the previous default is cleared first (the unique index allows one), in the caller's transaction.
   */
  async makeDefault(companyId: string, c: AiConnectionRecord): Promise<void> {
    await this.rows(
      companyId,
      `UPDATE ai_connections SET is_default = false, updated_at = now()
        WHERE company_id = $1 AND provider = $2 AND owner_user_id IS NOT DISTINCT FROM $3 AND is_default AND id <> $4`,
      [c.provider, c.ownerUserId, c.id],
    );
    await this.rows(companyId, `UPDATE ai_connections SET is_default = true, updated_at = now() WHERE company_id = $1 AND id = $2`, [c.id]);
  }

  async recordTest(companyId: string, id: string, status: AiTestStatus, message: string): Promise<void> {
    await this.rows(
      companyId,
      `UPDATE ai_connections SET last_test_status = $3, last_test_message = $4, last_tested_at = now() WHERE company_id = $1 AND id = $2`,
      [id, status, message],
    );
  }

  async delete(companyId: string, id: string): Promise<void> {
    await this.rows(companyId, `DELETE FROM ai_connections WHERE company_id = $1 AND id = $2`, [id]);
  }
}
