import { Injectable } from '@nestjs/common';
import { CompanyScopedRepository } from '../../database/company-scoped.repository';
import { Db } from '../../database/db.service';
import { isoRequired } from '../../database/row-mapping';

export interface OutboxEvent {
  id: string;
  pluginId: string;
  companyId: string;
  action: string;
  payload: Record<string, unknown>;
}

type Row = Record<string, unknown>;

/** The company-owned plugin tables: the event outbox and the local folders. */
@Injectable()
export class PluginCompanyRepository extends CompanyScopedRepository {
  constructor(db: Db) {
    super(db);
  }

  // ---------------------------------------------------------------- events outbox

  /** (plugin, company) pairs with undelivered events, oldest first. */
  async pendingStreams(limit: number): Promise<{ pluginId: string; companyId: string }[]> {
    const rows = await this.unscoped<Row>(
      'the delivery sweep across companies: which (plugin, company) streams have undelivered events',
      `SELECT o.plugin_id, o.company_id, min(o.id) AS first FROM plugin_event_outbox o JOIN plugins p ON p.id = o.plugin_id AND p.status = 'enabled'
       WHERE o.delivered_at IS NULL GROUP BY o.plugin_id, o.company_id ORDER BY first LIMIT $1`,
      [limit],
    );
    return rows.map((r) => ({ pluginId: r.plugin_id as string, companyId: r.company_id as string }));
  }

  /**
   * Takes one (plugin, company) stream for this transaction: a transaction-scoped advisory lock,
   * so two instances never deliver the same company's events to a plugin at once (order kept).
   */
  async lockStream(pluginId: string, companyId: string): Promise<boolean> {
    const rows = await this.rows<Row>(companyId, `SELECT pg_try_advisory_xact_lock(hashtextextended($2 || ':' || $1, 22)) AS ok`, [
      pluginId,
    ]);
    return rows[0]?.ok === true;
  }

  async pendingEvents(pluginId: string, companyId: string, limit: number): Promise<OutboxEvent[]> {
    const rows = await this.rows<Row>(
      companyId,
      `SELECT id, plugin_id, company_id, action, payload FROM plugin_event_outbox
       WHERE company_id = $1 AND plugin_id = $2 AND delivered_at IS NULL ORDER BY id LIMIT $3`,
      [pluginId, limit],
    );
    return rows.map((r) => ({
      id: String(r.id),
      pluginId: r.plugin_id as string,
      companyId: r.company_id as string,
      action: r.action as string,
      payload: r.payload as Record<string, unknown>,
    }));
  }

  async markDelivered(companyId: string, id: string): Promise<void> {
    await this.rows(
      companyId,
      `UPDATE plugin_event_outbox SET delivered_at = clock_timestamp(), attempts = attempts + 1 WHERE company_id = $1 AND id = $2`,
      [id],
    );
  }

  async markFailed(companyId: string, id: string, error: string): Promise<void> {
    await this.rows(
      companyId,
      `UPDATE plugin_event_outbox SET attempts = attempts + 1, last_error = $3 WHERE company_id = $1 AND id = $2`,
      [id, error.slice(0, 500)],
    );
  }

  /** Delivered events older than the cut-off are dropped. */
  async pruneDelivered(before: Date): Promise<void> {
    await this.unscoped(
      'the retention sweep of delivered events of every company (one instance-wide job)',
      `DELETE FROM plugin_event_outbox WHERE delivered_at IS NOT NULL AND delivered_at < $1`,
      [before],
    );
  }

  // ---------------------------------------------------------------- local folders

  async folders(companyId: string, pluginId: string): Promise<Map<string, { path: string; updatedAt: string }>> {
    const rows = await this.rows<Row>(
      companyId,
      `SELECT folder_key, path, updated_at FROM plugin_local_folders WHERE company_id = $1 AND plugin_id = $2`,
      [pluginId],
    );
    return new Map(rows.map((r) => [r.folder_key as string, { path: r.path as string, updatedAt: isoRequired(r.updated_at as Date) }]));
  }

  async upsertFolder(companyId: string, pluginId: string, key: string, p: string): Promise<void> {
    await this.rows(
      companyId,
      `INSERT INTO plugin_local_folders (company_id, plugin_id, folder_key, path) VALUES ($1,$2,$3,$4)
       ON CONFLICT (plugin_id, company_id, folder_key) DO UPDATE SET path = EXCLUDED.path, updated_at = now()`,
      [pluginId, key, p],
    );
  }
}
