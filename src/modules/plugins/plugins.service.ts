import { Injectable, Logger, OnModuleInit } from '@nestjs/common';
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
import { SecretsService } from '../secrets/secrets.service';
import { compileSchema, MANIFEST_FILE, parseManifest, PluginManifest, schemaProblems, secretFields } from './manifest';
import { PackageSource, removeInstall, unpackPackage } from './plugin-packages';
import { PluginSupervisor } from './plugin-supervisor.service';
import { HostApi } from './plugin-worker';
import { pluginError } from './plugins.errors';
import { JobRunRecord, PluginRecord, PluginsRepository } from './plugins.repository';

export interface BundledPlugin {
  packageName: string;
  pluginKey: string;
  displayName: string;
  description: string;
  localPath: string;
  tag: 'example' | 'first-party';
  experimental: boolean;
}
/** A secret in plugin config is stored as this reference, never as its value. */
export interface SecretRef {
  type: 'secret_ref';
  companyId: string;
  secretId: string;
  version: 'latest' | number;
}

const isSecretRef = (v: unknown): v is SecretRef =>
  !!v &&
  typeof v === 'object' &&
  (v as SecretRef).type === 'secret_ref' &&
  isUuid((v as SecretRef).companyId) &&
  isUuid((v as SecretRef).secretId);

/** The public view of an installed plugin. */
export function pluginView(p: PluginRecord, health?: unknown) {
  const m = p.manifest;
  return {
    id: p.id,
    pluginKey: p.pluginKey,
    version: p.version,
    displayName: p.displayName,
    description: p.description,
    protocolVersion: p.protocolVersion,
    status: p.status,
    /** why the plugin cannot run (status `error`), e.g. `{ code: 'code_tampered', message }` */
    error: p.errorCode ? { code: p.errorCode, message: p.errorMessage ?? '' } : null,
    source: { kind: p.sourceKind, ref: p.sourceRef },
    capabilities: m.capabilities,
    jobs: m.jobs,
    webhooks: m.webhooks,
    tools: m.tools.map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema })),
    data: m.data,
    actions: m.actions,
    events: m.events,
    ui: m.ui,
    localFolders: m.localFolders,
    configSchema: m.configSchema ?? null,
    enabledAt: p.enabledAt,
    createdAt: p.createdAt,
    updatedAt: p.updatedAt,
    ...(health ? { worker: health } : {}),
  };
}

/**
 * Plugin administration and use: install/upgrade/uninstall, enable/disable (the worker starts on
 * first use and stops on disable), calls into the worker (tools, webhooks, data, actions,
 * dashboard, jobs), config with secret references, and local folders per company.
 */
/** how long the list of enabled plugins is reused by tool calls */
const ENABLED_CACHE_MS = 1000;
/** what folders.read hands a worker at most */
const MAX_FOLDER_READ_BYTES = 1024 * 1024;
const MAX_FOLDER_ENTRIES = 1000;

@Injectable()
export class PluginsService implements OnModuleInit {
  private readonly logger = new Logger('Plugins');
  private examplesCache: BundledPlugin[] | null = null;
  /**
   * Calls into a worker on behalf of one company, while they are in flight: the `scope` token sent
   * with the call → the plugin and company. The folder host API serves only that company.
   */
  private readonly scopes = new Map<string, { pluginId: string; companyId: string }>();

  constructor(
    private readonly repo: PluginsRepository,
    private readonly supervisor: PluginSupervisor,
    private readonly config: AppConfig,
    private readonly db: Db,
    private readonly companies: CompanyAccessService,
    private readonly secrets: SecretsService,
  ) {}

  onModuleInit(): void {
    this.supervisor.hostApiFactory = (p) => this.hostApi(p);
    this.supervisor.configFor = (p) => this.workerConfig(p);
    this.supervisor.verifyCode = (p) => this.verifyCode(p);
    this.supervisor.stillEnabled = async (id) => {
      const p = await this.repo.find(id);
      return p && p.status === 'enabled' ? p : null;
    };
  }

  // ---------------------------------------------------------------- catalogue

  async list(): Promise<ReturnType<typeof pluginView>[]> {
    return (await this.repo.list()).map((p) => pluginView(p));
  }

  async get(id: string) {
    const p = await this.load(id);
    return pluginView(p, this.supervisor.health(p.id));
  }

  /** Bundled plugins: each folder of examples/plugins with a valid manifest (scanned once). */
  examples(): BundledPlugin[] {
    if (this.examplesCache) return this.examplesCache;
    const dir = this.config.plugins.examplesDir;
    const found: BundledPlugin[] = [];
    let names: string[] = [];
    try {
      names = fs.readdirSync(dir).sort();
    } catch {
      /* no examples in this checkout */
    }
    for (const name of names) {
      const folder = path.join(dir, name);
      try {
        const parsed = parseManifest(JSON.parse(fs.readFileSync(path.join(folder, MANIFEST_FILE), 'utf8')));
        if (!parsed.manifest) continue;
        const pkg = readPackageJson(folder);
        found.push({
          packageName: (pkg?.name as string) ?? parsed.manifest.key,
          pluginKey: parsed.manifest.key,
          displayName: parsed.manifest.displayName,
          description: parsed.manifest.description ?? '',
          localPath: folder,
          tag: 'example',
          experimental: true,
        });
      } catch {
        /* not a plugin folder */
      }
    }
    this.examplesCache = found;
    return found;
  }

  async uiContributions() {
    const out: Record<string, unknown>[] = [];
    for (const p of await this.repo.listEnabled()) {
      for (const s of p.manifest.ui.slots)
        out.push({ ...s, kind: 'slot', pluginId: p.id, pluginKey: p.pluginKey, pluginDisplayName: p.displayName });
      for (const l of p.manifest.ui.launchers)
        out.push({ ...l, kind: 'launcher', pluginId: p.id, pluginKey: p.pluginKey, pluginDisplayName: p.displayName });
    }
    return out;
  }

  async tools() {
    const out: Record<string, unknown>[] = [];
    for (const p of await this.repo.listEnabled()) {
      for (const t of p.manifest.tools) {
        out.push({
          key: `${p.pluginKey}:${t.name}`,
          name: t.name,
          description: t.description,
          inputSchema: t.inputSchema,
          pluginId: p.id,
          pluginKey: p.pluginKey,
        });
      }
    }
    return out;
  }

  // ---------------------------------------------------------------- lifecycle

  async install(actor: Actor, src: PackageSource) {
    assertInstanceAdmin(actor);
    const pkg = await unpackPackage(src, this.prepareInstallDir(), this.config.plugins.npmRegistry, this.codeOwner());
    this.forgetEnabled();
    const inserted = await this.repo
      .insert({
        pluginKey: pkg.manifest.key,
        version: pkg.manifest.version,
        displayName: pkg.manifest.displayName,
        description: pkg.manifest.description ?? null,
        protocolVersion: pkg.manifest.protocolVersion,
        manifest: pkg.manifest,
        sourceKind: pkg.sourceKind,
        sourceRef: pkg.sourceRef,
        installPath: pkg.installPath,
        codeHash: pkg.codeHash,
      })
      .catch((err) => {
        removeInstall(pkg.installPath, this.installDir);
        throw err;
      });
    if (!inserted) {
      removeInstall(pkg.installPath, this.installDir);
      throw pluginError('plugin_already_installed', `Plugin ${pkg.manifest.key} is already installed (use upgrade)`);
    }
    return pluginView(inserted);
  }

  /** Replaces the package (same key); a running worker is restarted on the new version. */
  async upgrade(actor: Actor, id: string, src: PackageSource) {
    assertInstanceAdmin(actor);
    const current = await this.load(id, true);
    const source: PackageSource =
      src.localPath || src.packageName
        ? src
        : current.sourceKind === 'npm'
          ? { packageName: current.sourceRef.replace(/@[^@]*$/, '') }
          : { localPath: current.sourceRef };
    const pkg = await unpackPackage(source, this.prepareInstallDir(), this.config.plugins.npmRegistry, this.codeOwner());
    if (pkg.manifest.key !== current.pluginKey) {
      removeInstall(pkg.installPath, this.installDir);
      throw pluginError('plugin_key_mismatch', `The package is plugin ${pkg.manifest.key}, not ${current.pluginKey}`);
    }
    this.forgetEnabled();
    const updated = await this.repo.replacePackage(id, {
      pluginKey: pkg.manifest.key,
      version: pkg.manifest.version,
      displayName: pkg.manifest.displayName,
      description: pkg.manifest.description ?? null,
      protocolVersion: pkg.manifest.protocolVersion,
      manifest: pkg.manifest,
      sourceKind: pkg.sourceKind,
      sourceRef: pkg.sourceRef,
      installPath: pkg.installPath,
      codeHash: pkg.codeHash,
    });
    this.afterCommit(async () => {
      await this.supervisor.stop(id);
      removeInstall(current.installPath, this.installDir);
    });
    return pluginView(updated);
  }

  async uninstall(actor: Actor, id: string) {
    assertInstanceAdmin(actor);
    this.forgetEnabled();
    const removed = await this.repo.remove(this.checkId(id));
    if (!removed) throw pluginError('plugin_not_found', 'Plugin not found');
    this.afterCommit(async () => {
      await this.supervisor.stop(id);
      removeInstall(removed.installPath, this.installDir);
    });
    return pluginView(removed);
  }

  /** Enables the plugin and starts its worker (after the change commits). */
  async enable(actor: Actor, id: string) {
    assertInstanceAdmin(actor);
    await this.load(id, true);
    this.forgetEnabled();
    const p = (await this.repo.setStatus(id, 'enabled'))!;
    this.afterCommit(() =>
      this.supervisor.ensure(p).then(
        () => undefined,
        () => undefined,
      ),
    );
    return pluginView(p);
  }

  /** Disables the plugin: UI contributions and tools disappear; the worker drains and stops. */
  async disable(actor: Actor, id: string) {
    assertInstanceAdmin(actor);
    await this.load(id, true);
    this.forgetEnabled();
    const p = (await this.repo.setStatus(id, 'disabled'))!;
    this.afterCommit(() => this.supervisor.stop(id));
    return pluginView(p);
  }

  async health(actor: Actor, id: string) {
    assertInstanceAdmin(actor);
    const p = await this.load(id);
    const check = p.status === 'enabled' && this.supervisor.health(id).state === 'running' ? await this.supervisor.ping(id) : null;
    return {
      pluginId: p.id,
      status: p.status,
      healthy: p.status === 'enabled' ? !!check?.ok : null,
      check: check?.detail ?? null,
      worker: this.supervisor.health(id),
    };
  }

  async logs(actor: Actor, id: string, limit: number) {
    assertInstanceAdmin(actor);
    const p = await this.load(id);
    return { pluginId: p.id, lines: this.supervisor.recentLogs(p.id, limit) };
  }

  // ---------------------------------------------------------------- config

  async getConfig(actor: Actor, id: string) {
    assertInstanceAdmin(actor);
    const p = await this.load(id);
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
    const p = await this.load(id, true);
    const stored = await this.storeSecrets(actor, p, config, secretsCompanyId);
    this.validateConfig(p.manifest, stored);
    this.forgetEnabled();
    const updated = await this.repo.setConfig(id, stored);
    this.afterCommit(() => this.supervisor.notifyConfig(updated));
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
    const p = await this.load(id);
    const problems = this.configProblems(p.manifest, config);
    let workerResult: unknown = null;
    if (!problems.length && p.status === 'enabled') {
      const res = await this.callWorker<{ ok?: boolean; problems?: string[]; message?: string }>(
        p,
        'config.test',
        { config },
        10_000,
      ).catch((err: Error) => ({ ok: false, problems: [err.message] }));
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

  private configProblems(m: PluginManifest, config: Record<string, unknown>): string[] {
    if (!m.configSchema) return [];
    const copy = { ...config };
    for (const k of secretFields(m)) if (isSecretRef(copy[k])) copy[k] = '********';
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
      if (isSecretRef(v)) {
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

  /** Config as the worker sees it: secret references replaced by their values. */
  private async workerConfig(p: PluginRecord): Promise<Record<string, unknown>> {
    const out = this.resolvedConfig(p.manifest, p.config);
    for (const key of secretFields(p.manifest)) {
      const ref = out[key];
      if (!isSecretRef(ref)) continue;
      try {
        out[key] = (await this.secrets.resolveValue(ref.companyId, ref.secretId, ref.version)).value;
      } catch {
        out[key] = null;
      }
    }
    return out;
  }

  // ---------------------------------------------------------------- calls into the worker

  private enabledCache: { until: number; rows: Promise<PluginRecord[]> } | null = null;

  /**
   * Enabled plugins, read at most once a second (outside any transaction): a tool call then costs
   * no database round trip. Changes made here are seen at once (the cache is dropped, and again
   * after the change commits); changes made on another instance within a second.
   */
  private enabledPlugins(): Promise<PluginRecord[]> {
    if (!this.enabledCache || this.enabledCache.until < Date.now()) {
      const cache = { until: Date.now() + ENABLED_CACHE_MS, rows: this.db.detached(() => this.repo.listEnabled()) };
      cache.rows.catch(() => {
        if (this.enabledCache === cache) this.enabledCache = null;
      });
      this.enabledCache = cache;
    }
    return this.enabledCache.rows;
  }

  private forgetEnabled(): void {
    this.enabledCache = null;
    this.db.afterCommit(() => (this.enabledCache = null));
  }

  async executeTool(actor: Actor, tool: string, input: unknown, companyId?: string) {
    const [pluginKey, name] = tool.includes(':') ? tool.split(':', 2) : [undefined, tool];
    const enabled = await this.enabledPlugins();
    const matches = enabled.filter((p) => (!pluginKey || p.pluginKey === pluginKey) && p.manifest.tools.some((t) => t.name === name));
    if (matches.length === 0) throw pluginError('plugin_tool_not_found', `No enabled plugin has a tool ${tool}`);
    if (matches.length > 1) throw pluginError('plugin_tool_not_found', `Tool ${name} is ambiguous: name it as pluginKey:${name}`);
    const p = matches[0];
    const def = p.manifest.tools.find((t) => t.name === name)!;
    const company = actor.kind === 'agent' ? actor.companyId : companyId;
    if (company !== undefined) {
      if (!isUuid(company)) throw pluginError('plugin_tool_input_invalid', 'companyId must be a UUID');
      // outside the request's transaction: no pooled connection waits idle while the worker answers
      await this.db.detached(() => this.companies.assertCompanyAccess(actor, company));
    }
    const validate = compileSchema(def.inputSchema);
    if (!validate(input))
      throw pluginError('plugin_tool_input_invalid', `Invalid tool input: ${schemaProblems(validate).join('; ')}`, {
        problems: schemaProblems(validate),
      });
    const started = Date.now();
    const output = await this.callWorker(
      p,
      'tools.execute',
      {
        name,
        input,
        context: {
          companyId: company ?? null,
          caller: actor.kind === 'agent' ? { type: 'agent', agentId: actor.agentId } : { type: 'user', userId: actor.userId },
        },
      },
      def.timeoutMs ?? this.config.plugins.toolTimeoutMs,
      company ?? null,
    );
    return { tool: `${p.pluginKey}:${name}`, pluginId: p.id, output, durationMs: Date.now() - started };
  }

  /** Inbound webhook: unknown endpoint 404, a disabled plugin 409 (it exists but does not take deliveries). */
  async webhook(id: string, endpointKey: string, req: { headers: Record<string, unknown>; body: unknown; query: unknown }) {
    const p = await this.load(id);
    if (!p.manifest.webhooks.some((w) => w.key === endpointKey))
      throw pluginError('plugin_endpoint_not_found', `Plugin has no webhook endpoint ${endpointKey}`);
    this.assertEnabled(p);
    const headers: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(req.headers)) if (!['authorization', 'cookie'].includes(k.toLowerCase())) headers[k] = v;
    const res = await this.callWorker<{ status?: number; body?: unknown }>(
      p,
      'webhooks.handle',
      { endpointKey, headers, body: req.body ?? null, query: req.query ?? {} },
      30_000,
    );
    const status = Number.isInteger(res?.status) && res!.status! >= 200 && res!.status! < 600 ? res!.status! : 200;
    return { status, body: res?.body ?? { ok: true } };
  }

  async data(actor: Actor, id: string, key: string, params: unknown, companyId?: string) {
    const p = await this.load(id);
    if (!p.manifest.data.some((d) => d.key === key)) throw pluginError('plugin_endpoint_not_found', `Plugin has no data feed ${key}`);
    this.assertEnabled(p);
    await this.checkCompany(actor, companyId);
    return {
      key,
      data: await this.callWorker(p, 'data.get', { key, params: params ?? {}, companyId: companyId ?? null }, 15_000, companyId),
    };
  }

  async action(actor: Actor, id: string, key: string, params: unknown, companyId?: string) {
    const p = await this.load(id);
    if (!p.manifest.actions.some((d) => d.key === key)) throw pluginError('plugin_endpoint_not_found', `Plugin has no action ${key}`);
    this.assertEnabled(p);
    await this.checkCompany(actor, companyId);
    return {
      key,
      result: await this.callWorker(p, 'actions.run', { key, params: params ?? {}, companyId: companyId ?? null }, 30_000, companyId),
    };
  }

  async dashboard(actor: Actor, id: string) {
    assertInstanceAdmin(actor);
    const p = await this.load(id);
    this.assertEnabled(p);
    return { pluginId: p.id, dashboard: await this.callWorker(p, 'dashboard.get', {}, 15_000) };
  }

  /** A stream channel of an enabled plugin (SSE); worker publishes with host method stream.publish. */
  async openStream(actor: Actor, id: string) {
    assertInstanceAdmin(actor);
    const p = await this.load(id);
    this.assertEnabled(p);
    if (!p.manifest.capabilities.includes('ui.stream'))
      throw pluginError('plugin_endpoint_not_found', 'Plugin declares no stream channels (capability ui.stream)');
    await this.supervisor.ensure(p).catch(() => undefined);
    return p;
  }

  // ---------------------------------------------------------------- jobs

  async jobs(actor: Actor, id: string) {
    assertInstanceAdmin(actor);
    const p = await this.load(id);
    return Promise.all(p.manifest.jobs.map(async (j) => ({ ...j, jobId: j.key, lastRun: await this.repo.lastRun(p.id, j.key) })));
  }

  async runs(actor: Actor, id: string, jobKey: string, limit: number): Promise<JobRunRecord[]> {
    assertInstanceAdmin(actor);
    const p = await this.load(id);
    if (!p.manifest.jobs.some((j) => j.key === jobKey)) throw pluginError('plugin_job_not_found', `Plugin has no job ${jobKey}`);
    return this.repo.recentRuns(p.id, jobKey, limit);
  }

  /** Manual run: recorded and run now; answers the finished run. */
  async trigger(actor: Actor, id: string, jobKey: string): Promise<JobRunRecord> {
    assertInstanceAdmin(actor);
    const p = await this.load(id);
    if (!p.manifest.jobs.some((j) => j.key === jobKey)) throw pluginError('plugin_job_not_found', `Plugin has no job ${jobKey}`);
    this.assertEnabled(p);
    const run = await this.repo.insertManualRun(p.id, jobKey, this.config.instanceId);
    return this.runJob(p, run);
  }

  /** Runs a claimed job run in the worker and records the outcome (never throws). */
  async runJob(p: PluginRecord, run: JobRunRecord): Promise<JobRunRecord> {
    let status: 'succeeded' | 'failed' = 'succeeded';
    let error: string | null = null;
    let result: unknown = null;
    try {
      result = await this.callWorker(
        p,
        'jobs.run',
        { jobKey: run.jobKey, runId: run.id, trigger: run.trigger, scheduledFor: run.scheduledFor },
        5 * 60_000,
      );
    } catch (err) {
      status = 'failed';
      error = (err as Error).message.slice(0, 1000);
    }
    return (await this.repo.finishRun(run.id, status, error, result ?? null)) ?? run;
  }

  // ---------------------------------------------------------------- local folders

  async folders(actor: Actor, id: string, companyId: string) {
    const p = await this.load(id);
    const stored = await this.repo.folders(p.id, companyId);
    return p.manifest.localFolders.map((f) => ({
      ...f,
      folderKey: f.key,
      path: stored.get(f.key)?.path ?? null,
      configured: stored.has(f.key),
      updatedAt: stored.get(f.key)?.updatedAt ?? null,
    }));
  }

  async folderStatus(actor: Actor, id: string, companyId: string, key: string) {
    const p = await this.load(id);
    this.folderDef(p, key);
    const stored = (await this.repo.folders(p.id, companyId)).get(key);
    if (!stored) return { folderKey: key, configured: false, path: null, problems: ['not configured'], listing: null };
    const check = this.checkFolder(stored.path);
    return { folderKey: key, configured: true, path: stored.path, problems: check.problems, listing: check.listing };
  }

  validateFolder(p: PluginRecord, key: string, folder: string) {
    this.folderDef(p, key);
    const check = this.checkFolder(folder);
    return { folderKey: key, path: check.path, valid: check.problems.length === 0, problems: check.problems, listing: check.listing };
  }

  async validateFolderRoute(actor: Actor, id: string, key: string, folder: string) {
    return this.validateFolder(await this.load(id), key, folder);
  }

  async putFolder(actor: Actor, id: string, companyId: string, key: string, folder: string) {
    const p = await this.load(id);
    const v = this.validateFolder(p, key, folder);
    if (!v.valid) throw pluginError('plugin_folder_invalid', `Invalid folder: ${v.problems.join('; ')}`, { problems: v.problems });
    await this.repo.upsertFolder(p.id, companyId, key, v.path);
    return { folderKey: key, configured: true, path: v.path, problems: [], listing: v.listing };
  }

  private folderDef(p: PluginRecord, key: string) {
    const def = p.manifest.localFolders.find((f) => f.key === key);
    if (!def) throw pluginError('plugin_folder_not_found', `Plugin declares no local folder ${key}`);
    return def;
  }

  /** A folder must resolve (symlinks followed) inside one of the allowed roots and be a readable directory. */
  private checkFolder(folder: string): {
    path: string;
    problems: string[];
    listing: { entries: number; files: number; directories: number } | null;
  } {
    const problems: string[] = [];
    if (!path.isAbsolute(folder)) return { path: folder, problems: ['path must be absolute'], listing: null };
    let real = path.resolve(folder);
    try {
      real = fs.realpathSync(real);
    } catch {
      problems.push('path does not exist');
    }
    const roots = this.config.plugins.folderRoots.map((r) => {
      try {
        return fs.realpathSync(r);
      } catch {
        return r;
      }
    });
    if (!roots.some((r) => real === r || real.startsWith(r + path.sep)))
      problems.push(`path is outside the allowed roots (${roots.join(', ')})`);
    if (problems.length) return { path: real, problems, listing: null };
    try {
      const entries = fs.readdirSync(real, { withFileTypes: true });
      return {
        path: real,
        problems,
        listing: {
          entries: entries.length,
          files: entries.filter((e) => e.isFile()).length,
          directories: entries.filter((e) => e.isDirectory()).length,
        },
      };
    } catch (err) {
      return {
        path: real,
        problems: [`not a readable directory: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`],
        listing: null,
      };
    }
  }

  /**
   * A path inside a local folder the board configured for this plugin and company (`{ companyId,
   * folderKey, path }`, path relative): resolved with symlinks followed, it must stay inside the
   * folder, and the folder inside the allowed roots. The host reads for the worker (which runs as
   * another user), read-only, and only for the company of the call the worker is serving: the
   * `scope` of that call (tools, data, actions and events of one company carry it) names the
   * company; a `companyId` naming another company is refused. Jobs, webhooks and the dashboard act
   * for no company.
   */
  private async folderPath(p: PluginRecord, params: Record<string, unknown>): Promise<{ dir: string; rel: string }> {
    const scope = typeof params.scope === 'string' ? this.scopes.get(params.scope) : undefined;
    if (!scope || scope.pluginId !== p.id)
      throw new Error('folder access needs the scope of a call made for one company (tools, data, actions, events)');
    const given = params.companyId === undefined || params.companyId === null ? scope.companyId : String(params.companyId);
    if (given !== scope.companyId) throw new Error('folder access is limited to the company of the call being served');
    const companyId = scope.companyId;
    const key = String(params.folderKey ?? '');
    const rel = typeof params.path === 'string' ? params.path : '';
    this.folderDef(p, key);
    if (rel.length > 1024 || rel.includes('\0') || path.isAbsolute(rel)) throw new Error('path must be relative to the folder');
    const stored = (await this.db.detached(() => this.repo.folders(p.id, companyId))).get(key);
    if (!stored) throw new Error(`folder ${key} is not configured for this company`);
    const base = this.checkFolder(stored.path);
    if (base.problems.length) throw new Error(`folder ${key} is not usable: ${base.problems.join('; ')}`);
    let target: string;
    try {
      target = fs.realpathSync(path.resolve(base.path, rel));
    } catch {
      throw new Error(`${rel || '.'} does not exist in folder ${key}`);
    }
    if (target !== base.path && !target.startsWith(base.path + path.sep)) throw new Error('path leaves the folder');
    return { dir: target, rel: path.relative(base.path, target) || '.' };
  }

  // ---------------------------------------------------------------- host API

  /** What a worker may call; each method needs the capability named (checked by the worker channel). */
  private hostApi(p: PluginRecord): HostApi {
    const id = p.id;
    return {
      log: {
        capability: null,
        handler: (params) => {
          const level = ['info', 'warn', 'error', 'debug'].includes(params.level as string) ? (params.level as 'info') : 'info';
          this.supervisor.log(id, { level, source: 'worker', message: String(params.message ?? '').slice(0, 4000) });
          return { ok: true };
        },
      },
      'config.get': {
        capability: 'config.read',
        handler: async () => {
          const current = await this.repo.find(id);
          return current ? this.workerConfig(current) : {};
        },
      },
      'http.fetch': {
        capability: 'http.outbound',
        handler: async (params) => {
          const url = String(params.url ?? '');
          if (!/^https?:\/\//.test(url)) throw new Error('url must be http(s)');
          const res = await fetch(url, {
            method: typeof params.method === 'string' ? params.method : 'GET',
            headers: (params.headers as Record<string, string>) ?? undefined,
            body: params.body === undefined ? undefined : typeof params.body === 'string' ? params.body : JSON.stringify(params.body),
            signal: AbortSignal.timeout(15_000),
          });
          const text = await res.text();
          return { status: res.status, body: text.slice(0, 1_000_000) };
        },
      },
      'folders.list': {
        capability: 'folders.read',
        handler: async (params) => {
          const { dir, rel } = await this.folderPath(p, params);
          const entries = fs.readdirSync(dir, { withFileTypes: true }).slice(0, MAX_FOLDER_ENTRIES);
          return {
            path: rel,
            entries: entries.map((e) => ({ name: e.name, type: e.isDirectory() ? 'directory' : e.isFile() ? 'file' : 'other' })),
          };
        },
      },
      'folders.read': {
        capability: 'folders.read',
        handler: async (params) => {
          const { dir: file, rel } = await this.folderPath(p, params);
          const stat = fs.statSync(file);
          if (!stat.isFile()) throw new Error(`${rel} is not a file`);
          const fd = fs.openSync(file, 'r');
          try {
            const buf = Buffer.alloc(Math.min(stat.size, MAX_FOLDER_READ_BYTES));
            const n = fs.readSync(fd, buf, 0, buf.length, 0);
            return { path: rel, size: stat.size, truncated: stat.size > n, content: buf.subarray(0, n).toString('utf8') };
          } finally {
            fs.closeSync(fd);
          }
        },
      },
      'stream.publish': {
        capability: 'ui.stream',
        handler: (params) => {
          const channel = String(params.channel ?? '');
          if (!/^[a-zA-Z0-9._-]{1,64}$/.test(channel)) throw new Error('invalid channel');
          this.supervisor.streams.emit(`${id}:${channel}`, params.data ?? null);
          return { ok: true };
        },
      },
    };
  }

  // ---------------------------------------------------------------- helpers

  /** Where packages are sealed (see PluginSettings.installDir). */
  get installDir(): string {
    return this.config.plugins.installDir;
  }

  /** Who owns sealed code: the service, with the plugin worker's group (which reads it). */
  private codeOwner(): CodeOwner {
    let identity;
    try {
      identity = resolveWorkerIdentity(this.config.plugins.workerUser);
    } catch (err) {
      throw pluginError('plugin_worker_unavailable', (err as Error).message);
    }
    return { uid: process.getuid?.() ?? 0, gid: identity?.gid ?? process.getgid?.() ?? 0 };
  }

  /** The sealed code root, created and tightened (owner the service, group the workers', 0750). */
  private prepareInstallDir(): string {
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
  private async verifyCode(p: PluginRecord): Promise<PluginRecord> {
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

  private async checkCompany(actor: Actor, companyId?: string): Promise<void> {
    if (companyId === undefined) {
      assertInstanceAdmin(actor);
      return;
    }
    if (!isUuid(companyId)) throw notFound('Company');
    await this.companies.assertCompanyAccess(actor, companyId);
  }

  private assertEnabled(p: PluginRecord): void {
    if (p.status === 'error' && p.errorCode === 'code_tampered')
      throw pluginError('code_tampered', `Plugin ${p.pluginKey}: ${p.errorMessage ?? CODE_TAMPERED_MESSAGE}`);
    if (p.status !== 'enabled') throw pluginError('plugin_disabled', `Plugin ${p.pluginKey} is disabled`);
  }

  private checkId(id: string): string {
    if (!isUuid(id)) throw pluginError('plugin_not_found', 'Plugin not found');
    return id;
  }

  async load(id: string, lock = false): Promise<PluginRecord> {
    const p = await this.repo.find(this.checkId(id), lock);
    if (!p) throw pluginError('plugin_not_found', 'Plugin not found');
    return p;
  }

  private afterCommit(fn: () => unknown): void {
    void this.db.sendWithCommit(
      async () => undefined,
      () => fn(),
    );
  }
}

function readPackageJson(folder: string): Record<string, unknown> | null {
  try {
    return JSON.parse(fs.readFileSync(path.join(folder, 'package.json'), 'utf8')) as Record<string, unknown>;
  } catch {
    return null;
  }
}
