import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import type { Actor } from '../../common/auth/actor';
import { assertInstanceAdmin } from '../../common/auth/instance-admin';
import { PackageSource, stagePackage } from '../../common/packages/package-source';
import { AppConfig } from '../../config/app-config';
import { Db } from '../../database/db.service';
import { AdapterExecutors } from './adapter-executors';
import { ConfigFieldError } from './adapter-config-schema';
import { AdapterRegistry } from './adapter-registry.service';
import { adapterError } from './adapters.errors';
import { AdapterSettingsRow, AdaptersRepository, ExternalAdapterRow } from './adapters.repository';
import { externalExecutor, importAdapter, LoadedAdapter, readAdapterPackage } from './external-adapter-loader';

/** What this instance has loaded of an external adapter. */
interface LocalAdapter {
  type: string;
  dir: string;
  /** unpacked by this instance (removed on uninstall); false for a local folder loaded in place */
  owned: boolean;
  installGeneration: string;
  loadGeneration: string;
  version: string;
  uiParser: string | null;
  loadedAt: Date;
}

export interface AdapterLoadState {
  version: string;
  loadGeneration: number;
  loadedAt: string;
}

/**
 * External adapters: packages installed from an npm registry, a tarball or a local folder that
 * export the adapter contract (type, execute, testEnvironment, configSchema, optional UI parser).
 * Installs are rows of external_adapters; every instance loads them at start and follows changes
 * by polling the generation columns (SERVICE_ADAPTERS_SYNC_MS): a bumped install generation
 * re-fetches the package, a bumped load generation re-imports the module (runs already executing
 * keep the code they started with). A local folder is loaded in place, so a reload picks up edits.
 */
@Injectable()
export class ExternalAdaptersService implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('ExternalAdapters');
  private readonly local = new Map<string, LocalAdapter>();
  private readonly loadErrors = new Map<string, string>();
  private timer?: NodeJS.Timeout;
  private syncing: Promise<void> | null = null;

  constructor(
    private readonly repo: AdaptersRepository,
    private readonly registry: AdapterRegistry,
    private readonly executors: AdapterExecutors,
    private readonly config: AppConfig,
    private readonly db: Db,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    // instance-level configuration, under the agent's own (the agent's keys win; env merges per variable)
    this.executors.setInstanceConfigSource(async (adapterType) => (await this.repo.settings(adapterType))?.config ?? {});
    await this.sync().catch((err) => this.logger.error(`loading external adapters failed: ${(err as Error).message}`));
    this.timer = setInterval(
      () => void this.sync().catch((err) => this.logger.error(`adapter sync failed: ${(err as Error).message}`)),
      this.config.adapters.syncMs,
    );
    this.timer.unref();
  }

  /** Why a wake of an agent of this type is skipped: `adapter_disabled` for a force-disabled type (the heartbeat engine asks). */
  async wakeSkipReason(adapterType: string): Promise<string | null> {
    return (await this.repo.settings(adapterType))?.disabled ? 'adapter_disabled' : null;
  }

  onApplicationShutdown(): void {
    if (this.timer) clearInterval(this.timer);
  }

  get installDir(): string {
    return this.config.adapters.installDir;
  }

  loadState(type: string): AdapterLoadState | null {
    const l = this.local.get(type);
    return l ? { version: l.version, loadGeneration: Number(l.loadGeneration), loadedAt: l.loadedAt.toISOString() } : null;
  }

  loadError(type: string): string | null {
    return this.loadErrors.get(type) ?? null;
  }

  // ------------------------------------------------------------------ administration

  async install(actor: Actor, src: PackageSource): Promise<ExternalAdapterRow> {
    assertInstanceAdmin(actor);
    const staged = await this.materialize(src);
    return this.fromStaged(staged, async (loaded) => {
      const type = loaded.module.type;
      if (this.registry.get(type)?.builtIn) throw adapterError('adapter_builtin', `${type} is a built-in adapter type`);
      await this.assertPin(type, loaded.info.version);
      const row = await this.repo.insertExternal({
        type,
        packageName: loaded.info.packageName,
        version: loaded.info.version,
        label: loaded.label,
        sourceKind: staged.sourceKind,
        sourceRef: staged.sourceRef,
        hasUiParser: !!loaded.info.uiParser,
        userId: actor.kind === 'board' ? actor.userId : null,
      });
      if (!row) throw adapterError('adapter_exists', `Adapter type ${type} is already installed (use reinstall)`);
      return row;
    });
  }

  /** Re-runs the install from the recorded source (npm: the pinned version, else latest). */
  async reinstall(actor: Actor, type: string): Promise<ExternalAdapterRow> {
    assertInstanceAdmin(actor);
    const current = await this.external(type, true);
    const pin = (await this.repo.settings(type))?.pinned_version ?? undefined;
    const src: PackageSource =
      current.source_kind === 'npm' ? { packageName: current.package_name, version: pin } : { localPath: current.source_ref };
    const staged = await this.materialize(src);
    return this.fromStaged(staged, async (loaded) => {
      if (loaded.module.type !== type)
        throw adapterError('adapter_type_mismatch', `The package now exports type ${loaded.module.type}, not ${type}`);
      await this.assertPin(type, loaded.info.version);
      return this.repo.reinstalled(type, {
        packageName: loaded.info.packageName,
        version: loaded.info.version,
        label: loaded.label,
        sourceKind: staged.sourceKind,
        sourceRef: staged.sourceRef,
        hasUiParser: !!loaded.info.uiParser,
      });
    });
  }

  /**
   * Imports a staged package and records it with `record`; the recorded row becomes this instance's
   * loaded type. A failure removes the staged copy (when it is ours).
   */
  private async fromStaged(
    staged: Awaited<ReturnType<ExternalAdaptersService['materialize']>>,
    record: (loaded: ReturnType<typeof importAdapter>) => Promise<ExternalAdapterRow>,
  ): Promise<ExternalAdapterRow> {
    try {
      const loaded = importAdapter(staged.dir);
      const row = await record(loaded);
      this.activate(row, loaded, staged.owned);
      return row;
    } catch (err) {
      if (staged.owned) fs.rmSync(staged.dir, { recursive: true, force: true });
      throw err;
    }
  }

  /** Re-imports the module from this instance's copy (a local folder: from the folder itself). */
  async reload(actor: Actor, type: string): Promise<ExternalAdapterRow> {
    assertInstanceAdmin(actor);
    const current = await this.external(type, true);
    const here = this.local.get(type);
    const dir = here?.dir ?? (await this.materialize(this.sourceOf(current))).dir;
    const loaded = importAdapter(dir);
    if (loaded.module.type !== type)
      throw adapterError('adapter_type_mismatch', `The module now exports type ${loaded.module.type}, not ${type}`);
    await this.assertPin(type, loaded.info.version);
    const row = await this.repo.reloaded(type, { version: loaded.info.version, label: loaded.label, hasUiParser: !!loaded.info.uiParser });
    this.activate(row, loaded, here?.owned ?? current.source_kind !== 'local');
    return row;
  }

  async remove(actor: Actor, type: string): Promise<ExternalAdapterRow> {
    assertInstanceAdmin(actor);
    if (this.registry.get(type)?.builtIn) throw adapterError('adapter_builtin', `Built-in adapter type ${type} cannot be deleted`);
    const row = await this.repo.removeExternal(type);
    if (!row) throw adapterError('adapter_not_found', `Adapter type ${type} is not installed`);
    this.db.afterCommit(() => this.deactivate(type));
    return row;
  }

  /** Replaces the instance-level configuration of a type (validated against its schema; required keys may stay with the agents). */
  async putConfig(actor: Actor, type: string, config: Record<string, unknown>): Promise<AdapterSettingsRow> {
    assertInstanceAdmin(actor);
    this.assertKnown(type);
    let valid: Record<string, unknown>;
    try {
      valid = this.registry.validateConfig(type, config, { allowIncomplete: true });
    } catch (err) {
      if (err instanceof ConfigFieldError)
        throw adapterError('adapter_config_invalid', err.message, { field: err.field.replace(/^adapterConfig/, 'config') });
      throw err;
    }
    return this.repo.putConfig(type, valid);
  }

  /** Force-disable (wakes of the type's agents are skipped) and version pin (external types). */
  async putOverride(
    actor: Actor,
    type: string,
    o: { disabled?: boolean; reason?: string | null; pinnedVersion?: string | null },
  ): Promise<AdapterSettingsRow> {
    assertInstanceAdmin(actor);
    this.assertKnown(type);
    if (o.pinnedVersion) {
      const ext = await this.repo.findExternal(type, true);
      if (!ext) throw adapterError('adapter_not_external', `Only external adapter types can be pinned; ${type} is built in`);
      if (ext.version !== o.pinnedVersion) {
        throw adapterError(
          'adapter_version_pinned',
          `Installed version ${ext.version} differs from ${o.pinnedVersion}: reinstall that version first`,
          { installedVersion: ext.version },
        );
      }
    }
    return this.repo.putOverride(type, o);
  }

  /** The UI parser script of an external type, as this instance loaded it; null when it has none. */
  uiParser(type: string): string | null {
    const l = this.local.get(type);
    if (!l?.uiParser) return null;
    try {
      return fs.readFileSync(path.join(l.dir, l.uiParser), 'utf8');
    } catch {
      return null;
    }
  }

  async externals(): Promise<ExternalAdapterRow[]> {
    return this.repo.listExternal();
  }

  async settings(): Promise<Map<string, AdapterSettingsRow>> {
    return new Map((await this.repo.listSettings()).map((s) => [s.type, s]));
  }

  // ------------------------------------------------------------------ loading

  /** Brings this instance in line with external_adapters: load new, re-fetch or re-import changed, drop removed. */
  sync(): Promise<void> {
    if (!this.syncing) this.syncing = this.doSync().finally(() => (this.syncing = null));
    return this.syncing;
  }

  private async doSync(): Promise<void> {
    const rows = await this.db.detached(() => this.repo.listExternal());
    const seen = new Set<string>();
    for (const row of rows) {
      seen.add(row.type);
      const here = this.local.get(row.type);
      if (here && here.installGeneration === row.install_generation && here.loadGeneration === row.load_generation) continue;
      try {
        let dir = here?.dir;
        let owned = here?.owned ?? false;
        if (!here || here.installGeneration !== row.install_generation) {
          const staged = await this.materialize(this.sourceOf(row));
          dir = staged.dir;
          owned = staged.owned;
        }
        const loaded = importAdapter(dir!);
        if (loaded.module.type !== row.type) throw new Error(`the package exports type ${loaded.module.type}, not ${row.type}`);
        const previous = here?.owned && here.dir !== dir ? here.dir : null;
        this.activate(row, loaded, owned);
        if (previous) fs.rmSync(previous, { recursive: true, force: true });
        this.logger.log(
          `loaded external adapter ${row.type} ${loaded.info.version} (generation ${row.install_generation}/${row.load_generation})`,
        );
      } catch (err) {
        this.loadErrors.set(row.type, (err as Error).message);
        this.logger.error(`could not load external adapter ${row.type}: ${(err as Error).message}`);
      }
    }
    for (const type of [...this.local.keys()]) if (!seen.has(type)) this.deactivate(type);
  }

  private activate(row: ExternalAdapterRow, loaded: LoadedAdapter, owned: boolean): void {
    const type = row.type;
    this.registry.register({ type, label: loaded.label, configSchema: loaded.configSchema });
    this.executors.register(externalExecutor(loaded));
    const previous = this.local.get(type);
    if (previous?.owned && previous.dir !== loaded.dir && owned) fs.rmSync(previous.dir, { recursive: true, force: true });
    this.local.set(type, {
      type,
      dir: loaded.dir,
      owned,
      installGeneration: row.install_generation,
      loadGeneration: row.load_generation,
      version: loaded.info.version,
      uiParser: loaded.info.uiParser,
      loadedAt: new Date(),
    });
    this.loadErrors.delete(type);
  }

  private deactivate(type: string): void {
    const here = this.local.get(type);
    this.registry.unregister(type);
    this.executors.unregister(type);
    this.local.delete(type);
    this.loadErrors.delete(type);
    if (here?.owned) fs.rmSync(here.dir, { recursive: true, force: true });
  }

  /** A local folder is used in place; a tarball or npm package is unpacked into the install directory. */
  private async materialize(
    src: PackageSource,
  ): Promise<{ dir: string; owned: boolean; sourceKind: 'local' | 'tarball' | 'npm'; sourceRef: string }> {
    const fail = (m: string) => adapterError('adapter_source_invalid', m);
    if (src.localPath) {
      const abs = path.resolve(src.localPath);
      if (fs.existsSync(abs) && fs.statSync(abs).isDirectory()) {
        readAdapterPackage(abs);
        return { dir: abs, owned: false, sourceKind: 'local', sourceRef: abs };
      }
    }
    const dir = path.join(this.installDir, randomUUID());
    fs.mkdirSync(dir, { recursive: true, mode: 0o755 });
    try {
      const { sourceKind, sourceRef } = await stagePackage(src, dir, this.config.plugins.npmRegistry, fail, 'package.json');
      return { dir, owned: true, sourceKind, sourceRef };
    } catch (err) {
      fs.rmSync(dir, { recursive: true, force: true });
      throw err;
    }
  }

  private sourceOf(row: ExternalAdapterRow): PackageSource {
    if (row.source_kind === 'npm') return { packageName: row.package_name, version: row.version };
    return { localPath: row.source_ref };
  }

  private async external(type: string, lock = false): Promise<ExternalAdapterRow> {
    const row = await this.repo.findExternal(type, lock);
    if (row) return row;
    if (this.registry.get(type)?.builtIn) throw adapterError('adapter_not_external', `${type} is a built-in adapter type`);
    throw adapterError('adapter_not_found', `Adapter type ${type} is not installed`);
  }

  private assertKnown(type: string): void {
    if (!this.registry.has(type)) throw adapterError('adapter_not_found', `Unknown adapter type ${type}`);
  }

  private async assertPin(type: string, version: string): Promise<void> {
    const pin = (await this.repo.settings(type))?.pinned_version;
    if (pin && pin !== version)
      throw adapterError('adapter_version_pinned', `${type} is pinned to version ${pin}; the package is ${version}`, {
        pinnedVersion: pin,
      });
  }
}
