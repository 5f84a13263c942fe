import { Injectable, Logger } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Actor } from '../../common/auth/actor';
import { CODE_TAMPERED_MESSAGE, CodeOwner, copySource, hashTree, prepareCodeRoot, sealTree } from '../../common/packages/sealed-code';
import { resolveWorkerIdentity } from '../../common/process/worker-identity';
import { CompanyAccessService } from '../../common/auth/company-access.service';
import { notFound } from '../../common/errors/domain-error';
import { isUuid } from '../../common/http/uuid';
import { AppConfig } from '../../config/app-config';
import { Db } from '../../database/db.service';
import { assertInstanceAdmin } from '../../common/auth/instance-admin';
import { removeInstall } from './plugin-packages';
import { PluginSupervisor } from './plugin-supervisor.service';
import { pluginError } from './plugins.errors';
import { PluginRecord, PluginsRepository } from './plugins.repository';

/** how long the list of enabled plugins is reused by tool calls */
const ENABLED_CACHE_MS = 1000;

/**
 * What the plugin services share: loading a plugin and checking its state, the calls into its
 * worker (with the company scope of a call), the cache of enabled plugins, and the sealed code
 * (install directory, owner, the hash check before each worker start).
 */
@Injectable()
export class PluginCore {
  private readonly logger = new Logger('Plugins');
  /**
   * Calls into a worker on behalf of one company, while they are in flight: the `scope` token sent
   * with the call → the plugin and company. The folder host API serves only that company.
   */
  private readonly scopes = new Map<string, { pluginId: string; companyId: string }>();
  private enabledCache: { until: number; rows: Promise<PluginRecord[]> } | null = null;

  constructor(
    private readonly repo: PluginsRepository,
    private readonly supervisor: PluginSupervisor,
    private readonly config: AppConfig,
    private readonly db: Db,
    private readonly companies: CompanyAccessService,
  ) {}

  // ---------------------------------------------------------------- records

  async load(id: string, lock = false): Promise<PluginRecord> {
    const p = await this.repo.find(this.checkId(id), lock);
    if (!p) throw pluginError('plugin_not_found', 'Plugin not found');
    return p;
  }

  checkId(id: string): string {
    if (!isUuid(id)) throw pluginError('plugin_not_found', 'Plugin not found');
    return id;
  }

  async checkCompany(actor: Actor, companyId?: string): Promise<void> {
    if (companyId === undefined) {
      assertInstanceAdmin(actor);
      return;
    }
    if (!isUuid(companyId)) throw notFound('Company');
    await this.companies.assertCompanyAccess(actor, companyId);
  }

  assertEnabled(p: PluginRecord): void {
    if (p.status === 'error' && p.errorCode === 'code_tampered')
      throw pluginError('code_tampered', `Plugin ${p.pluginKey}: ${p.errorMessage ?? CODE_TAMPERED_MESSAGE}`);
    if (p.status !== 'enabled') throw pluginError('plugin_disabled', `Plugin ${p.pluginKey} is disabled`);
  }

  afterCommit(fn: () => unknown): void {
    void this.db.sendWithCommit(
      async () => undefined,
      () => fn(),
    );
  }

  /**
   * Enabled plugins, read at most once a second (outside any transaction): a tool call then costs
   * no database round trip. Changes made here are seen at once (the cache is dropped, and again
   * after the change commits); changes made on another instance within a second.
   */
  enabledPlugins(): Promise<PluginRecord[]> {
    if (!this.enabledCache || this.enabledCache.until < Date.now()) {
      const cache = { until: Date.now() + ENABLED_CACHE_MS, rows: this.db.detached(() => this.repo.listEnabled()) };
      cache.rows.catch(() => {
        if (this.enabledCache === cache) this.enabledCache = null;
      });
      this.enabledCache = cache;
    }
    return this.enabledCache.rows;
  }

  forgetEnabled(): void {
    this.enabledCache = null;
    this.db.afterCommit(() => (this.enabledCache = null));
  }

  // ---------------------------------------------------------------- calls into the worker

  /**
   * A request to the worker. `companyId`: the call is made for that company; it carries a `scope`
   * token (valid while the call is in flight) that the folder host API accepts for that company only.
   */
  async callWorker<T = unknown>(
    p: PluginRecord,
    method: string,
    params: Record<string, unknown>,
    timeoutMs: number,
    companyId?: string | null,
  ): Promise<T> {
    if (!companyId) return this.callWorkerScoped<T>(p, method, params, timeoutMs);
    const scope = randomUUID();
    this.scopes.set(scope, { pluginId: p.id, companyId });
    try {
      return await this.callWorkerScoped<T>(p, method, { ...params, scope }, timeoutMs);
    } finally {
      this.scopes.delete(scope);
    }
  }

  /** The plugin and company of a call in flight, by the `scope` token it carries. */
  scopeOf(token: unknown): { pluginId: string; companyId: string } | undefined {
    return typeof token === 'string' ? this.scopes.get(token) : undefined;
  }

  private async callWorkerScoped<T>(p: PluginRecord, method: string, params: Record<string, unknown>, timeoutMs: number): Promise<T> {
    let worker;
    try {
      worker = await this.supervisor.ensure(p);
    } catch (err) {
      throw pluginError('plugin_worker_unavailable', `Plugin worker is not available: ${(err as Error).message}`);
    }
    try {
      return await worker.call<T>(method, params, timeoutMs);
    } catch (err) {
      const msg = (err as Error).message;
      if (/timed out|Request timeout/i.test(msg))
        throw pluginError('plugin_worker_timeout', `Plugin worker did not answer ${method} within ${timeoutMs} ms`);
      throw pluginError('plugin_worker_error', `Plugin worker failed: ${msg}`);
    }
  }

  // ---------------------------------------------------------------- sealed code

  /** Where packages are sealed (see PluginSettings.installDir). */
  get installDir(): string {
    return this.config.plugins.installDir;
  }

  /** Who owns sealed code: the service, with the plugin worker's group (which reads it). */
  codeOwner(): CodeOwner {
    let identity;
    try {
      identity = resolveWorkerIdentity(this.config.plugins.workerUser);
    } catch (err) {
      throw pluginError('plugin_worker_unavailable', (err as Error).message);
    }
    return { uid: process.getuid?.() ?? 0, gid: identity?.gid ?? process.getgid?.() ?? 0 };
  }

  /** The sealed code root, created and tightened (owner the service, group the workers', 0750). */
  prepareInstallDir(): string {
    const why = prepareCodeRoot(this.installDir, this.codeOwner().gid);
    if (why) this.logger.warn(`plugin code directory ${this.installDir}: a folder above it is not sealed: ${why}`);
    return this.installDir;
  }

  /**
   * Before each worker start: the installed tree must still have the hash recorded at install. A
   * mismatch (or a missing tree) marks the plugin `error` / `code_tampered`, is logged, and nothing
   * starts. An install made before hashes were recorded is first copied into the sealed directory
   * (when it lies elsewhere, e.g. the agent user's home of earlier versions) and its hash recorded.
   */
  async verifyCode(p: PluginRecord): Promise<PluginRecord> {
    // the stored record: its path and hash (an upgrade may have replaced the package meanwhile)
    let current = await this.db.detached(() => this.repo.find(p.id));
    if (!current) throw pluginError('plugin_not_found', 'Plugin not found');
    if (!current.codeHash) {
      const legacy = current;
      current = await this.db.detached(() => this.adoptLegacyInstall(legacy));
    }
    let actual: string | null = null;
    try {
      actual = hashTree(current.installPath);
    } catch {
      /* missing */
    }
    if (actual !== current.codeHash) {
      const message = `${CODE_TAMPERED_MESSAGE}: the worker is not started; upgrade (reinstall) the plugin`;
      this.logger.error(`plugin ${current.pluginKey} (${current.id}): ${message} (${current.installPath})`);
      this.supervisor.log(current.id, { level: 'error', source: 'supervisor', message });
      const id = current.id;
      await this.db.detached(() => this.repo.markError(id, 'code_tampered', CODE_TAMPERED_MESSAGE));
      this.enabledCache = null;
      throw pluginError('code_tampered', `Plugin ${current.pluginKey}: ${CODE_TAMPERED_MESSAGE}`);
    }
    return current;
  }

  private async adoptLegacyInstall(p: PluginRecord): Promise<PluginRecord> {
    let installPath = p.installPath;
    const root = path.resolve(this.prepareInstallDir());
    if (!path.resolve(installPath).startsWith(root + path.sep) && fs.existsSync(installPath)) {
      const target = path.join(root, p.pluginKey, `${p.version}-${randomUUID().slice(0, 8)}`);
      const staging = path.join(root, '.staging', randomUUID());
      fs.mkdirSync(staging, { recursive: true, mode: 0o700 });
      copySource(installPath, staging, (m) => pluginError('plugin_source_invalid', m));
      sealTree(staging, this.codeOwner());
      fs.mkdirSync(path.dirname(target), { recursive: true, mode: 0o750 });
      fs.renameSync(staging, target);
      this.logger.warn(`plugin ${p.pluginKey}: moved its code from ${installPath} into the sealed directory ${target}`);
      installPath = target;
    }
    const adopted = await this.repo.adoptInstall(p.id, p.installPath, installPath, hashTree(installPath));
    if (adopted) this.logger.log(`plugin ${p.pluginKey}: recorded the code hash of an install made before hashes were recorded`);
    else if (installPath !== p.installPath) removeInstall(installPath, root); // another instance adopted it first
    return (await this.repo.find(p.id)) ?? p;
  }
}
