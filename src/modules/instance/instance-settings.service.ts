import { Injectable } from '@nestjs/common';
import { badRequest } from '../../common/errors/domain-error';
import { AppConfig } from '../../config/app-config';
import { Db } from '../../database/db.service';
import { InstanceSettingsRepository } from './instance-settings.repository';
import {
  EXPERIMENTAL_ALIASES,
  EXPERIMENTAL_DEFAULTS,
  ExperimentalSettings,
  GENERAL_DEFAULTS,
  GeneralSettings,
} from './dto/instance-settings.dto';

type SettingsKey = 'general' | 'experimental';
const DEFAULTS: { general: GeneralSettings; experimental: ExperimentalSettings } = {
  general: GENERAL_DEFAULTS,
  experimental: EXPERIMENTAL_DEFAULTS,
};

/**
 * Instance-wide settings, stored as one JSON row per block. Reads merge the stored values over the
 * defaults; a PATCH merges in the database (`value || patch`), so concurrent patches of different
 * fields both survive.
 */
@Injectable()
export class InstanceSettingsService {
  private readonly defaults: typeof DEFAULTS;

  constructor(
    private readonly db: Db,
    private readonly repo: InstanceSettingsRepository,
    config: AppConfig,
  ) {
    // environment defaults of feature flags (a stored value always wins)
    this.defaults = {
      ...DEFAULTS,
      experimental: {
        ...EXPERIMENTAL_DEFAULTS,
        builtInAgents: config.builtInAgentsDefault,
        enableBuiltInAgents: config.builtInAgentsDefault,
      },
    };
  }

  general(): Promise<GeneralSettings> {
    return this.read('general');
  }

  experimental(): Promise<ExperimentalSettings> {
    return this.read('experimental');
  }

  async patch<K extends SettingsKey>(
    key: K,
    raw: Record<string, unknown>,
    validated: Partial<(typeof DEFAULTS)[K]>,
  ): Promise<(typeof DEFAULTS)[K]> {
    await this.write(key, this.checkedPatch(key, raw, validated));
    return this.read(key);
  }

  /** Both blocks at once (`{ general, experimental }`, each partial); nothing is written unless every field is known. */
  async patchAll(
    raw: Record<string, unknown>,
    validated: { general?: Partial<GeneralSettings>; experimental?: Partial<ExperimentalSettings> },
  ): Promise<{ general: GeneralSettings; experimental: ExperimentalSettings }> {
    const unknown = Object.keys(raw).filter((k) => k !== 'general' && k !== 'experimental');
    if (unknown.length)
      throw badRequest(
        `Unknown settings blocks: ${unknown.join(', ')}`,
        { fields: unknown.map((field) => ({ field, messages: ['unknown settings block'] })) },
        'validation_failed',
      );
    const block = (k: SettingsKey) => (raw[k] && typeof raw[k] === 'object' ? (raw[k] as Record<string, unknown>) : {});
    const general = validated.general ? this.checkedPatch('general', block('general'), validated.general) : null;
    const experimental = validated.experimental ? this.checkedPatch('experimental', block('experimental'), validated.experimental) : null;
    await this.db.transaction(async () => {
      if (general) await this.write('general', general);
      if (experimental) await this.write('experimental', experimental);
    });
    return this.all();
  }

  async all(): Promise<{ general: GeneralSettings; experimental: ExperimentalSettings }> {
    return { general: await this.read('general'), experimental: await this.read('experimental') };
  }

  private checkedPatch<K extends SettingsKey>(
    key: K,
    raw: Record<string, unknown>,
    validated: Partial<(typeof DEFAULTS)[K]>,
  ): Record<string, unknown> {
    // the validation pipe drops unknown fields silently; a settings typo must not look like success
    const unknown = Object.keys(raw).filter((k) => !(k in DEFAULTS[key]));
    if (unknown.length)
      throw badRequest(
        `Unknown ${key} settings: ${unknown.join(', ')}`,
        { fields: unknown.map((field) => ({ field: `${key}.${field}`, messages: ['unknown setting'] })) },
        'validation_failed',
      );
    const patch: Record<string, unknown> = Object.fromEntries(Object.entries(validated).filter(([, v]) => v !== undefined));
    if (key !== 'experimental') return patch;
    // an alias writes the setting it names (both given and different: refused)
    for (const [alias, target] of Object.entries(EXPERIMENTAL_ALIASES)) {
      if (!(alias in patch)) continue;
      if (target in patch && patch[target] !== patch[alias]) {
        throw badRequest(
          `${alias} and ${target} are the same setting; they differ in this request`,
          { fields: [{ field: `experimental.${alias}`, messages: [`must equal ${target}`] }] },
          'validation_failed',
        );
      }
      patch[target] = patch[alias];
      delete patch[alias];
    }
    return patch;
  }

  private async write(key: SettingsKey, patch: Record<string, unknown>): Promise<void> {
    await this.repo.mergeSettings(key, patch);
  }

  private async read<K extends SettingsKey>(key: K): Promise<(typeof DEFAULTS)[K]> {
    const defaults = this.defaults[key];
    const stored = (await this.repo.readSettings(key)) ?? {};
    // only known keys, in a stable order; an alias reads the setting it names
    const value = (k: string): unknown => (k in stored ? stored[k] : defaults[k as keyof typeof defaults]);
    const aliases: Record<string, string> = key === 'experimental' ? EXPERIMENTAL_ALIASES : {};
    return Object.fromEntries(Object.keys(defaults).map((k) => [k, value(aliases[k] ?? k)])) as (typeof DEFAULTS)[K];
  }
}
