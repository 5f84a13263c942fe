import { Injectable } from '@nestjs/common';
import { InstanceRepository } from '../../database/company-scoped.repository';
import { Db } from '../../database/db.service';
import { recordColumns } from '../../database/row-mapping';

export interface ExternalAdapterRecord {
  type: string;
  packageName: string;
  version: string;
  label: string;
  sourceKind: 'local' | 'tarball' | 'npm';
  sourceRef: string;
  hasUiParser: boolean;
  /** sha256 of the sealed package tree (null: installed before it was recorded; the first load records it) */
  codeHash: string | null;
  /** bumped by install/reinstall: every instance re-fetches the package */
  installGeneration: string;
  /** bumped by reload (and install/reinstall): every instance re-imports the module */
  loadGeneration: string;
  installedByUserId: string | null;
  createdAt: Date;
  updatedAt: Date;
}

const EXTERNAL_COLUMNS = recordColumns(`type, package_name, version, label, source_kind, source_ref, has_ui_parser, code_hash,
  install_generation, load_generation, installed_by_user_id, created_at, updated_at`);

export interface AdapterSettingsRecord {
  type: string;
  config: Record<string, unknown>;
  disabled: boolean;
  disabledReason: string | null;
  pinnedVersion: string | null;
  updatedAt: Date;
}

const SETTINGS_COLUMNS = recordColumns('type, config, disabled, disabled_reason, pinned_version, updated_at');

/** Tables external_adapters (installed packages) and adapter_settings (instance config and operator overrides of any type). */
@Injectable()
export class AdaptersRepository extends InstanceRepository {
  constructor(db: Db) {
    super(db);
  }

  listExternal(): Promise<ExternalAdapterRecord[]> {
    return this.rows<ExternalAdapterRecord>(`SELECT ${EXTERNAL_COLUMNS} FROM external_adapters ORDER BY type`);
  }

  findExternal(type: string, lock = false): Promise<ExternalAdapterRecord | null> {
    return this.row<ExternalAdapterRecord>(
      `SELECT ${EXTERNAL_COLUMNS} FROM external_adapters WHERE type = $1 ${lock ? 'FOR UPDATE' : ''}`,
      [type],
    );
  }

  /** null when the type is installed already (unique type). */
  insertExternal(r: {
    type: string;
    packageName: string;
    version: string;
    label: string;
    sourceKind: string;
    sourceRef: string;
    hasUiParser: boolean;
    userId: string | null;
    codeHash: string;
  }): Promise<ExternalAdapterRecord | null> {
    return this.row<ExternalAdapterRecord>(
      `INSERT INTO external_adapters (type, package_name, version, label, source_kind, source_ref, has_ui_parser, installed_by_user_id, code_hash)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT (type) DO NOTHING RETURNING ${EXTERNAL_COLUMNS}`,
      [r.type, r.packageName, r.version, r.label, r.sourceKind, r.sourceRef, r.hasUiParser, r.userId, r.codeHash],
    );
  }

  async reinstalled(
    type: string,
    r: {
      packageName: string;
      version: string;
      label: string;
      sourceKind: string;
      sourceRef: string;
      hasUiParser: boolean;
      codeHash: string;
    },
  ): Promise<ExternalAdapterRecord> {
    const [row] = await this.returning<ExternalAdapterRecord>(
      `UPDATE external_adapters SET package_name = $2, version = $3, label = $4, source_kind = $5, source_ref = $6, has_ui_parser = $7,
              code_hash = $8, install_generation = install_generation + 1, load_generation = load_generation + 1, updated_at = now()
        WHERE type = $1 RETURNING ${EXTERNAL_COLUMNS}`,
      [type, r.packageName, r.version, r.label, r.sourceKind, r.sourceRef, r.hasUiParser, r.codeHash],
    );
    return row;
  }

  async reloaded(type: string, r: { version: string; label: string; hasUiParser: boolean }): Promise<ExternalAdapterRecord> {
    const [row] = await this.returning<ExternalAdapterRecord>(
      `UPDATE external_adapters SET version = $2, label = $3, has_ui_parser = $4, load_generation = load_generation + 1, updated_at = now()
        WHERE type = $1 RETURNING ${EXTERNAL_COLUMNS}`,
      [type, r.version, r.label, r.hasUiParser],
    );
    return row;
  }

  /** Records the code hash of a package installed before hashes were recorded (its first load); answers the stored hash. */
  async recordCodeHash(type: string, installGeneration: string, hash: string): Promise<string | null> {
    await this.returning(`UPDATE external_adapters SET code_hash = $3 WHERE type = $1 AND install_generation = $2 AND code_hash IS NULL`, [
      type,
      installGeneration,
      hash,
    ]);
    const row = await this.row<{ codeHash: string | null }>(`SELECT code_hash AS "codeHash" FROM external_adapters WHERE type = $1`, [
      type,
    ]);
    return row?.codeHash ?? null;
  }

  async removeExternal(type: string): Promise<ExternalAdapterRecord | null> {
    const [row] = await this.returning<ExternalAdapterRecord>(
      `DELETE FROM external_adapters WHERE type = $1 RETURNING ${EXTERNAL_COLUMNS}`,
      [type],
    );
    await this.returning(`DELETE FROM adapter_settings WHERE type = $1`, [type]);
    return row ?? null;
  }

  settings(type: string): Promise<AdapterSettingsRecord | null> {
    return this.row<AdapterSettingsRecord>(`SELECT ${SETTINGS_COLUMNS} FROM adapter_settings WHERE type = $1`, [type]);
  }

  listSettings(): Promise<AdapterSettingsRecord[]> {
    return this.rows<AdapterSettingsRecord>(`SELECT ${SETTINGS_COLUMNS} FROM adapter_settings`);
  }

  async putConfig(type: string, config: Record<string, unknown>): Promise<AdapterSettingsRecord> {
    const [row] = await this.rows<AdapterSettingsRecord>(
      `INSERT INTO adapter_settings (type, config) VALUES ($1, $2::jsonb)
       ON CONFLICT (type) DO UPDATE SET config = EXCLUDED.config, updated_at = now() RETURNING ${SETTINGS_COLUMNS}`,
      [type, JSON.stringify(config)],
    );
    return row;
  }

  /** Only the fields given change (`undefined` keeps the stored value). */
  async putOverride(
    type: string,
    o: { disabled?: boolean; reason?: string | null; pinnedVersion?: string | null },
  ): Promise<AdapterSettingsRecord> {
    const [row] = await this.rows<AdapterSettingsRecord>(
      `INSERT INTO adapter_settings (type, disabled, disabled_reason, pinned_version)
       VALUES ($1, COALESCE($2::boolean, false), CASE WHEN COALESCE($2::boolean, false) THEN $3::text END, $5::text)
       ON CONFLICT (type) DO UPDATE SET
         disabled = COALESCE($2::boolean, adapter_settings.disabled),
         disabled_reason = CASE WHEN NOT COALESCE($2::boolean, adapter_settings.disabled) THEN NULL WHEN $4::boolean THEN $3::text ELSE adapter_settings.disabled_reason END,
         pinned_version = CASE WHEN $6::boolean THEN $5::text ELSE adapter_settings.pinned_version END,
         updated_at = now()
       RETURNING ${SETTINGS_COLUMNS}`,
      [type, o.disabled ?? null, o.reason ?? null, o.reason !== undefined, o.pinnedVersion ?? null, o.pinnedVersion !== undefined],
    );
    return row;
  }
}
