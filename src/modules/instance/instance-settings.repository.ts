import { Injectable } from '@nestjs/common';
import { InstanceRepository } from '../../database/company-scoped.repository';
import { Db } from '../../database/db.service';

/** Table instance_settings. */
@Injectable()
export class InstanceSettingsRepository extends InstanceRepository {
  constructor(db: Db) {
    super(db);
  }

  /** The stored JSON of a settings block, or undefined when none was ever written. */
  async readSettings(key: string): Promise<Record<string, unknown> | undefined> {
    const row = await this.row<{ value: Record<string, unknown> }>(`SELECT value FROM instance_settings WHERE key = $1`, [key]);
    return row?.value;
  }

  /** Merges the patch into the stored block in the database (`value || patch`), so concurrent patches of different fields both survive. */
  async mergeSettings(key: string, patch: Record<string, unknown>): Promise<void> {
    await this.rows(
      `INSERT INTO instance_settings (key, value) VALUES ($1, $2::jsonb)
       ON CONFLICT (key) DO UPDATE SET value = instance_settings.value || EXCLUDED.value, updated_at = now()`,
      [key, JSON.stringify(patch)],
    );
  }
}
