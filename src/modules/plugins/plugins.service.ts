import { Injectable, OnModuleInit } from '@nestjs/common';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Actor } from '../../common/auth/actor';
import { AppConfig } from '../../config/app-config';
import { assertInstanceAdmin } from '../../common/auth/instance-admin';
import { MANIFEST_FILE, parseManifest } from './manifest';
import { PluginConfigService } from './plugin-config.service';
import { PluginCore } from './plugin-core.service';
import { PluginHostApiService } from './plugin-host-api.service';
import { PackageSource, removeInstall, unpackPackage } from './plugin-packages';
import { PluginSupervisor } from './plugin-supervisor.service';
import { pluginError } from './plugins.errors';
import { PluginRecord, PluginsRepository } from './plugins.repository';
import { PluginUiContributionDto } from './dto/plugin.dto';

export interface BundledPlugin {
  packageName: string;
  pluginKey: string;
  displayName: string;
  description: string;
  localPath: string;
  tag: 'example' | 'first-party';
  experimental: boolean;
}

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
    /** the installed manifest as validated (the board UI's plugin manager reads it) */
    manifestJson: m,
    enabledAt: p.enabledAt,
    createdAt: p.createdAt,
    updatedAt: p.updatedAt,
    ...(health ? { worker: health } : {}),
  };
}

/**
 * Plugin administration: the catalogue, install/upgrade/uninstall and enable/disable (the worker
 * starts on first use and stops on disable). The module's other services: config and secrets
 * (PluginConfigService), calls into the worker: tools, webhooks, data, actions, jobs
 * (PluginCallsService), local folders (PluginFoldersService), the host API (PluginHostApiService),
 * and what they share (PluginCore).
 */
@Injectable()
export class PluginsService implements OnModuleInit {
  private examplesCache: BundledPlugin[] | null = null;

  constructor(
    private readonly core: PluginCore,
    private readonly repo: PluginsRepository,
    private readonly supervisor: PluginSupervisor,
    private readonly config: AppConfig,
    private readonly configs: PluginConfigService,
    private readonly host: PluginHostApiService,
  ) {}

  onModuleInit(): void {
    this.supervisor.hostApiFactory = (p) => this.host.hostApi(p);
    this.supervisor.configFor = (p) => this.configs.workerConfig(p);
    this.supervisor.verifyCode = (p) => this.core.verifyCode(p);
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
    const p = await this.core.load(id);
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

  /**
   * One entry per enabled plugin that contributes UI, its slots and launchers as its manifest
   * declares them: the board UI reads `slots` and `launchers` of each plugin entry (a flat list of
   * slots made every page of it fail once a plugin with UI was enabled).
   */
  async uiContributions(): Promise<PluginUiContributionDto[]> {
    return (await this.repo.listEnabled())
      .filter((p) => p.manifest.ui.slots.length > 0 || p.manifest.ui.launchers.length > 0)
      .map((p) => ({
        pluginId: p.id,
        pluginKey: p.pluginKey,
        displayName: p.displayName,
        version: p.version,
        slots: p.manifest.ui.slots,
        launchers: p.manifest.ui.launchers,
      }));
  }

  // ---------------------------------------------------------------- lifecycle

  async install(actor: Actor, src: PackageSource) {
    assertInstanceAdmin(actor);
    const pkg = await unpackPackage(src, this.core.prepareInstallDir(), this.config.plugins.npmRegistry, this.core.codeOwner());
    this.core.forgetEnabled();
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
        removeInstall(pkg.installPath, this.core.installDir);
        throw err;
      });
    if (!inserted) {
      removeInstall(pkg.installPath, this.core.installDir);
      throw pluginError('plugin_already_installed', `Plugin ${pkg.manifest.key} is already installed (use upgrade)`);
    }
    return pluginView(inserted);
  }

  /** Replaces the package (same key); a running worker is restarted on the new version. */
  async upgrade(actor: Actor, id: string, src: PackageSource) {
    assertInstanceAdmin(actor);
    const current = await this.core.load(id, true);
    const source: PackageSource =
      src.localPath || src.packageName
        ? src
        : current.sourceKind === 'npm'
          ? { packageName: current.sourceRef.replace(/@[^@]*$/, '') }
          : { localPath: current.sourceRef };
    const pkg = await unpackPackage(source, this.core.prepareInstallDir(), this.config.plugins.npmRegistry, this.core.codeOwner());
    if (pkg.manifest.key !== current.pluginKey) {
      removeInstall(pkg.installPath, this.core.installDir);
      throw pluginError('plugin_key_mismatch', `The package is plugin ${pkg.manifest.key}, not ${current.pluginKey}`);
    }
    this.core.forgetEnabled();
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
    this.core.afterCommit(async () => {
      await this.supervisor.stop(id);
      removeInstall(current.installPath, this.core.installDir);
    });
    return pluginView(updated);
  }

  async uninstall(actor: Actor, id: string) {
    assertInstanceAdmin(actor);
    this.core.forgetEnabled();
    const removed = await this.repo.remove(this.core.checkId(id));
    if (!removed) throw pluginError('plugin_not_found', 'Plugin not found');
    this.core.afterCommit(async () => {
      await this.supervisor.stop(id);
      removeInstall(removed.installPath, this.core.installDir);
    });
    return pluginView(removed);
  }

  /** Enables the plugin and starts its worker (after the change commits). */
  async enable(actor: Actor, id: string) {
    assertInstanceAdmin(actor);
    await this.core.load(id, true);
    this.core.forgetEnabled();
    const p = (await this.repo.setStatus(id, 'enabled'))!;
    this.core.afterCommit(() =>
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
    await this.core.load(id, true);
    this.core.forgetEnabled();
    const p = (await this.repo.setStatus(id, 'disabled'))!;
    this.core.afterCommit(() => this.supervisor.stop(id));
    return pluginView(p);
  }

  async health(actor: Actor, id: string) {
    assertInstanceAdmin(actor);
    const p = await this.core.load(id);
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
    const p = await this.core.load(id);
    return { pluginId: p.id, lines: this.supervisor.recentLogs(p.id, limit) };
  }
}

function readPackageJson(folder: string): Record<string, unknown> | null {
  try {
    return JSON.parse(fs.readFileSync(path.join(folder, 'package.json'), 'utf8')) as Record<string, unknown>;
  } catch {
    return null;
  }
}
