import { Injectable } from '@nestjs/common';
import type { Actor } from '../../common/auth/actor';
import { CompanyAccessService } from '../../common/auth/company-access.service';
import { isUuid } from '../../common/http/uuid';
import { assertInstanceAdmin } from '../../common/auth/instance-admin';
import { SecretsService } from '../secrets/secrets.service';
import { compileSchema, PluginManifest, schemaProblems, secretFields } from './manifest';
import { PluginCore } from './plugin-core.service';
import { PluginSupervisor } from './plugin-supervisor.service';
import { pluginError } from './plugins.errors';
import { PluginRecord, PluginsRepository } from './plugins.repository';
import { isCompanySecretRef } from '../secrets/secret-ref';

/**
 * A plugin's instance config and its secrets: fields marked `"x-secret": true` are stored as
 * secret references of a company, and resolved to their values only for the worker.
 */
@Injectable()
export class PluginConfigService {
  constructor(
    private readonly core: PluginCore,
    private readonly repo: PluginsRepository,
    private readonly supervisor: PluginSupervisor,
    private readonly companies: CompanyAccessService,
    private readonly secrets: SecretsService,
  ) {}

  async getConfig(actor: Actor, id: string) {
    assertInstanceAdmin(actor);
    const p = await this.core.load(id);
    return {
      pluginId: p.id,
      config: this.resolvedConfig(p.manifest, p.config),
      configSchema: p.manifest.configSchema ?? null,
      secretFields: secretFields(p.manifest),
    };
  }

  /**
   * Writes the instance config. Fields marked `"x-secret": true` in the schema are stored as
   * secret references: a plain string is stored as a new secret of `secretsCompanyId` (required
   * then) and replaced by its reference; an existing reference must name a secret of that company.
   */
  async setConfig(actor: Actor, id: string, config: Record<string, unknown>, secretsCompanyId?: string) {
    assertInstanceAdmin(actor);
    const p = await this.core.load(id, true);
    const stored = await this.storeSecrets(actor, p, config, secretsCompanyId);
    this.validateConfig(p.manifest, stored);
    this.core.forgetEnabled();
    const updated = await this.repo.setConfig(id, stored);
    this.core.afterCommit(() => this.supervisor.notifyConfig(updated));
    return {
      pluginId: p.id,
      config: this.resolvedConfig(p.manifest, stored),
      configSchema: p.manifest.configSchema ?? null,
      secretFields: secretFields(p.manifest),
    };
  }

  /** Validates a candidate config against the schema and, when the worker is running, asks it too. Nothing is saved. */
  async testConfig(actor: Actor, id: string, config: Record<string, unknown>) {
    assertInstanceAdmin(actor);
    const p = await this.core.load(id);
    const problems = this.configProblems(p.manifest, config);
    let workerResult: unknown = null;
    if (!problems.length && p.status === 'enabled') {
      const res = await this.core
        .callWorker<{ ok?: boolean; problems?: string[]; message?: string }>(p, 'config.test', { config }, 10_000)
        .catch((err: Error) => ({ ok: false, problems: [err.message] }));
      workerResult = res;
      if (res && res.ok === false)
        problems.push(
          ...(Array.isArray(res.problems)
            ? res.problems.map(String)
            : [String((res as { message?: string }).message ?? 'rejected by the plugin')]),
        );
    }
    return { ok: problems.length === 0, problems, worker: workerResult };
  }

  /** Config as the worker sees it: secret references replaced by their values. */
  async workerConfig(p: PluginRecord): Promise<Record<string, unknown>> {
    const out = this.resolvedConfig(p.manifest, p.config);
    for (const key of secretFields(p.manifest)) {
      const ref = out[key];
      if (!isCompanySecretRef(ref)) continue;
      try {
        out[key] = (await this.secrets.resolveValue(ref.companyId, ref.secretId, ref.version ?? 'latest')).value;
      } catch {
        out[key] = null;
      }
    }
    return out;
  }

  private configProblems(m: PluginManifest, config: Record<string, unknown>): string[] {
    if (!m.configSchema) return [];
    const copy = { ...config };
    for (const k of secretFields(m)) if (isCompanySecretRef(copy[k])) copy[k] = '********';
    const v = compileSchema(m.configSchema);
    return v(copy) ? [] : schemaProblems(v);
  }

  private validateConfig(m: PluginManifest, config: Record<string, unknown>): void {
    const problems = this.configProblems(m, config);
    if (problems.length) throw pluginError('plugin_config_invalid', `Invalid config: ${problems.join('; ')}`, { problems });
  }

  private async storeSecrets(
    actor: Actor,
    p: PluginRecord,
    config: Record<string, unknown>,
    companyId?: string,
  ): Promise<Record<string, unknown>> {
    const out = { ...config };
    for (const key of secretFields(p.manifest)) {
      const v = out[key];
      if (v === undefined || v === null) continue;
      if (isCompanySecretRef(v)) {
        const found = await this.secrets.findInCompany(v.companyId, [v.secretId]);
        if (!found.size)
          throw pluginError('plugin_config_invalid', `Config field ${key}: secret not found in that company`, {
            problems: [`${key}: unknown secret`],
          });
        out[key] = { type: 'secret_ref', companyId: v.companyId, secretId: v.secretId, version: v.version ?? 'latest' };
      } else if (typeof v === 'string') {
        if (!companyId || !isUuid(companyId) || !(await this.companies.companyExists(companyId))) {
          throw pluginError(
            'plugin_config_invalid',
            `Config field ${key} is a secret: give secretsCompanyId to store it as a company secret, or a secret reference`,
            { problems: [`${key}: needs secretsCompanyId`] },
          );
        }
        const s = await this.secrets.createFromRawValue(actor, companyId, `plugin-${p.pluginKey}-${key}`, v);
        out[key] = { type: 'secret_ref', companyId, secretId: s.id, version: 'latest' };
      } else {
        throw pluginError('plugin_config_invalid', `Config field ${key} must be a string or a secret reference`, {
          problems: [`${key}: wrong type`],
        });
      }
    }
    return out;
  }

  /** The config as stored with schema defaults filled in; secrets stay references. */
  private resolvedConfig(m: PluginManifest, config: Record<string, unknown>): Record<string, unknown> {
    const props = (m.configSchema?.properties ?? {}) as Record<string, { default?: unknown }>;
    const out: Record<string, unknown> = {};
    for (const [k, p] of Object.entries(props)) if (p && p.default !== undefined) out[k] = p.default;
    return { ...out, ...config };
  }
}
