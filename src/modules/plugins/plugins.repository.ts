import { Injectable } from '@nestjs/common';
import { InstanceRepository } from '../../database/company-scoped.repository';
import { Db } from '../../database/db.service';
import { iso, isoRequired } from '../../database/row-mapping';
import type { PluginManifest } from './manifest';
import { PluginCompanyRepository } from './plugin-company.repository';

/** `error`: the plugin cannot run (`errorCode`, e.g. `code_tampered`); enabling it again retries */
export type PluginStatus = 'enabled' | 'disabled' | 'error';
export type PluginSourceKind = 'local' | 'tarball' | 'npm';

export interface PluginRecord {
  id: string;
  pluginKey: string;
  version: string;
  displayName: string;
  description: string | null;
  protocolVersion: number;
  manifest: PluginManifest;
  sourceKind: PluginSourceKind;
  sourceRef: string;
  installPath: string;
  /** sha256 of the sealed package tree; null for installs made before it was recorded (set at first start) */
  codeHash: string | null;
  status: PluginStatus;
  errorCode: string | null;
  errorMessage: string | null;
  config: Record<string, unknown>;
  enabledAt: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface PluginWrite {
  pluginKey: string;
  version: string;
  displayName: string;
  description: string | null;
  protocolVersion: number;
  manifest: PluginManifest;
  sourceKind: PluginSourceKind;
  sourceRef: string;
  installPath: string;
  codeHash: string;
}

export interface JobRunRecord {
  id: string;
  pluginId: string;
  jobKey: string;
  trigger: 'schedule' | 'manual';
  scheduledFor: string | null;
  status: 'running' | 'succeeded' | 'failed';
  error: string | null;
  result: unknown;
  startedAt: string;
  finishedAt: string | null;
  durationMs: number | null;
}

type Row = Record<string, unknown>;
const toPlugin = (r: Row): PluginRecord => ({
  id: r.id as string,
  pluginKey: r.plugin_key as string,
  version: r.version as string,
  displayName: r.display_name as string,
  description: (r.description as string | null) ?? null,
  protocolVersion: r.protocol_version as number,
  manifest: r.manifest as PluginManifest,
  sourceKind: r.source_kind as PluginSourceKind,
  sourceRef: r.source_ref as string,
  installPath: r.install_path as string,
  codeHash: (r.code_hash as string | null) ?? null,
  status: r.status as PluginStatus,
  errorCode: (r.error_code as string | null) ?? null,
  errorMessage: (r.error_message as string | null) ?? null,
  config: (r.config as Record<string, unknown>) ?? {},
  enabledAt: iso(r.enabled_at as Date | null),
  createdAt: isoRequired(r.created_at as Date),
  updatedAt: isoRequired(r.updated_at as Date),
});
const toRun = (r: Row): JobRunRecord => ({
  id: r.id as string,
  pluginId: r.plugin_id as string,
  jobKey: r.job_key as string,
  trigger: r.trigger as JobRunRecord['trigger'],
  scheduledFor: iso(r.scheduled_for as Date | null),
  status: r.status as JobRunRecord['status'],
  error: (r.error as string | null) ?? null,
  result: r.result ?? null,
  startedAt: isoRequired(r.started_at as Date),
  finishedAt: iso(r.finished_at as Date | null),
  durationMs: (r.duration_ms as number | null) ?? null,
});

/**
 * The instance-level plugin tables (`plugins`, `plugin_job_runs`). The company-owned ones (local
 * folders, the event outbox) are PluginCompanyRepository's.
 */
@Injectable()
export class PluginsRepository extends InstanceRepository {
  constructor(
    db: Db,
    private readonly company: PluginCompanyRepository,
  ) {
    super(db);
  }

  async list(): Promise<PluginRecord[]> {
    return (await this.rows<Row>(`SELECT * FROM plugins ORDER BY plugin_key`)).map(toPlugin);
  }

  async listEnabled(): Promise<PluginRecord[]> {
    return (await this.rows<Row>(`SELECT * FROM plugins WHERE status = 'enabled' ORDER BY plugin_key`)).map(toPlugin);
  }

  async find(id: string, lock = false): Promise<PluginRecord | null> {
    const rows = await this.rows<Row>(`SELECT * FROM plugins WHERE id = $1${lock ? ' FOR UPDATE' : ''}`, [id]);
    return rows[0] ? toPlugin(rows[0]) : null;
  }

  async findByKey(key: string): Promise<PluginRecord | null> {
    const rows = await this.rows<Row>(`SELECT * FROM plugins WHERE plugin_key = $1`, [key]);
    return rows[0] ? toPlugin(rows[0]) : null;
  }

  async insert(w: PluginWrite): Promise<PluginRecord | null> {
    const rows = await this.rows<Row>(
      `INSERT INTO plugins (plugin_key, version, display_name, description, protocol_version, manifest, source_kind, source_ref, install_path, event_subscriptions, code_hash)
       VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11) ON CONFLICT (plugin_key) DO NOTHING RETURNING *`,
      [
        w.pluginKey,
        w.version,
        w.displayName,
        w.description,
        w.protocolVersion,
        JSON.stringify(w.manifest),
        w.sourceKind,
        w.sourceRef,
        w.installPath,
        w.manifest.events,
        w.codeHash,
      ],
    );
    return rows[0] ? toPlugin(rows[0]) : null;
  }

  async replacePackage(id: string, w: PluginWrite): Promise<PluginRecord> {
    const rows = await this.returning<Row>(
      `UPDATE plugins SET version = $2, display_name = $3, description = $4, protocol_version = $5, manifest = $6, source_kind = $7,
         source_ref = $8, install_path = $9, event_subscriptions = $10, code_hash = $11,
         status = CASE WHEN status = 'error' THEN 'disabled' ELSE status END, error_code = NULL, error_message = NULL,
         updated_at = now() WHERE id = $1 RETURNING *`,
      [
        id,
        w.version,
        w.displayName,
        w.description,
        w.protocolVersion,
        JSON.stringify(w.manifest),
        w.sourceKind,
        w.sourceRef,
        w.installPath,
        w.manifest.events,
        w.codeHash,
      ],
    );
    return toPlugin(rows[0]);
  }

  async setStatus(id: string, status: PluginStatus): Promise<PluginRecord | null> {
    const rows = await this.returning<Row>(
      `UPDATE plugins SET status = $2, enabled_at = CASE WHEN $2 = 'enabled' THEN COALESCE(CASE WHEN status = 'enabled' THEN enabled_at END, now()) ELSE NULL END,
         error_code = NULL, error_message = NULL, updated_at = now() WHERE id = $1 RETURNING *`,
      [id, status],
    );
    return rows[0] ? toPlugin(rows[0]) : null;
  }

  /** The plugin cannot run: status `error` with the reason (enable, upgrade or reinstall clear it). */
  async markError(id: string, code: string, message: string): Promise<void> {
    await this.rows(
      `UPDATE plugins SET status = 'error', enabled_at = NULL, error_code = $2, error_message = $3, updated_at = now() WHERE id = $1`,
      [id, code, message],
    );
  }

  /**
   * An install made before code hashes were recorded, at its first start: its (possibly moved) path
   * and hash are recorded unless another instance did so first (false then).
   */
  async adoptInstall(id: string, fromPath: string, installPath: string, hash: string): Promise<boolean> {
    const rows = await this.returning<Row>(
      `UPDATE plugins SET install_path = $3, code_hash = $4 WHERE id = $1 AND install_path = $2 AND code_hash IS NULL RETURNING id`,
      [id, fromPath, installPath, hash],
    );
    return rows.length > 0;
  }

  async setConfig(id: string, config: Record<string, unknown>): Promise<PluginRecord> {
    const rows = await this.returning<Row>(`UPDATE plugins SET config = $2, updated_at = now() WHERE id = $1 RETURNING *`, [
      id,
      JSON.stringify(config),
    ]);
    return toPlugin(rows[0]);
  }

  async remove(id: string): Promise<PluginRecord | null> {
    const rows = await this.returning<Row>(`DELETE FROM plugins WHERE id = $1 RETURNING *`, [id]);
    return rows[0] ? toPlugin(rows[0]) : null;
  }

  // ---------------------------------------------------------------- jobs

  /** Claims one scheduled occurrence: false when another instance (or an earlier tick) already has it. */
  async claimOccurrence(pluginId: string, jobKey: string, scheduledFor: Date, instanceId: string): Promise<JobRunRecord | null> {
    const rows = await this.rows<Row>(
      `INSERT INTO plugin_job_runs (plugin_id, job_key, trigger, scheduled_for, instance_id) VALUES ($1,$2,'schedule',$3,$4)
       ON CONFLICT (plugin_id, job_key, scheduled_for) WHERE scheduled_for IS NOT NULL DO NOTHING RETURNING *`,
      [pluginId, jobKey, scheduledFor, instanceId],
    );
    return rows[0] ? toRun(rows[0]) : null;
  }

  async insertManualRun(pluginId: string, jobKey: string, instanceId: string): Promise<JobRunRecord> {
    const rows = await this.rows<Row>(
      `INSERT INTO plugin_job_runs (plugin_id, job_key, trigger, instance_id) VALUES ($1,$2,'manual',$3) RETURNING *`,
      [pluginId, jobKey, instanceId],
    );
    return toRun(rows[0]);
  }

  async finishRun(id: string, status: 'succeeded' | 'failed', error: string | null, result: unknown): Promise<JobRunRecord | null> {
    const rows = await this.returning<Row>(
      `UPDATE plugin_job_runs SET status = $2, error = $3, result = $4, finished_at = clock_timestamp(),
         duration_ms = GREATEST(0, round(extract(epoch FROM clock_timestamp() - started_at) * 1000))::int
       WHERE id = $1 AND status = 'running' RETURNING *`,
      [id, status, error, result === undefined ? null : JSON.stringify(result)],
    );
    return rows[0] ? toRun(rows[0]) : null;
  }

  async recentRuns(pluginId: string, jobKey: string, limit: number): Promise<JobRunRecord[]> {
    return (
      await this.rows<Row>(`SELECT * FROM plugin_job_runs WHERE plugin_id = $1 AND job_key = $2 ORDER BY started_at DESC, id LIMIT $3`, [
        pluginId,
        jobKey,
        limit,
      ])
    ).map(toRun);
  }

  async lastRun(pluginId: string, jobKey: string): Promise<JobRunRecord | null> {
    return (await this.recentRuns(pluginId, jobKey, 1))[0] ?? null;
  }

  // ---------------------------------------------------------------- local folders (company tables: PluginCompanyRepository)

  folders(pluginId: string, companyId: string): Promise<Map<string, { path: string; updatedAt: string }>> {
    return this.company.folders(companyId, pluginId);
  }

  upsertFolder(pluginId: string, companyId: string, key: string, p: string): Promise<void> {
    return this.company.upsertFolder(companyId, pluginId, key, p);
  }
}
