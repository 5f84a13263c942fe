import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import type { Actor } from '../../common/auth/actor';
import { assertInstanceAdmin } from '../../common/auth/instance-admin';
import { PackageSource, stagePackage } from '../../common/packages/package-source';
import {
  CODE_TAMPERED_MESSAGE,
  copySource,
  hashTree,
  insecureSourceReason,
  prepareCodeRoot,
  sealTree,
  unsealableReason,
} from '../../common/packages/sealed-code';
import { AppConfig } from '../../config/app-config';
import { Db } from '../../database/db.service';
import { AdapterExecutors } from './adapter-executors';
import { ConfigFieldError } from './adapter-config-schema';
import { AdapterRegistry } from './adapter-registry.service';
import { adapterError } from './adapters.errors';
import { AdapterSettingsRecord, AdaptersRepository, ExternalAdapterRecord } from './adapters.repository';
import { externalExecutor, importAdapter, LoadedAdapter, readAdapterPackage } from './external-adapter-loader';

/** What this instance has loaded of an external adapter. */
interface LocalAdapter {
  type: string;
  /** this instance's sealed copy (removed when replaced or uninstalled) */
  dir: string;
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

/** The staged, sealed copy of a package. */
interface Sealed {
  dir: string;
  sourceKind: 'local' | 'tarball' | 'npm';
  sourceRef: string;
  codeHash: string;
}

/**
 * External adapters: packages installed from an npm registry, a tarball or a local folder that
 * export the adapter contract (type, execute, testEnvironment, configSchema, optional UI parser).
 * Installs are rows of external_adapters; every instance loads them at start and follows changes
 * by polling the generation columns (SERVICE_ADAPTERS_SYNC_MS): a bumped install generation
 * re-fetches the package, a bumped load generation re-imports the module (runs already executing
 * keep the code they started with).
 *
 * Sealed code: every source, a local folder too, is copied into this instance's adapter directory
 * (owned by the service, writable by no one else) and never loaded in place; a local source
 * writable by others is refused. The tree hash is recorded at install and checked before each load
 * and reload: a copy that changed, or a source that changed since install when another instance (or
 * a restart) copies it again, is not loaded (`loadErrorCode` `code_tampered`).
 */
@Injectable()
export class ExternalAdaptersService implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('ExternalAdapters');
  private readonly local = new Map<string, LocalAdapter>();
  private readonly loadErrors = new Map<string, string>();
  private readonly loadErrorCodes = new Map<string, string>();
  /** the generation found tampered (not retried until the row changes) */
  private readonly tamperedAt = new Map<string, string>();
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

  /** The code of the last load error: `code_tampered` when the code changed since install. */
  loadErrorCode(type: string): string | null {
    return this.loadErrorCodes.get(type) ?? null;
  }

  // ------------------------------------------------------------------ administration

  async install(actor: Actor, src: PackageSource): Promise<ExternalAdapterRecord> {
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
        codeHash: staged.codeHash,
      });
      if (!row) throw adapterError('adapter_exists', `Adapter type ${type} is already installed (use reinstall)`);
      return row;
    });
  }

  /** Re-runs the install from the recorded source (npm: the pinned version, else latest). */
  async reinstall(actor: Actor, type: string): Promise<ExternalAdapterRecord> {
    assertInstanceAdmin(actor);
    const current = await this.external(type, true);
    const pin = (await this.repo.settings(type))?.pinnedVersion ?? undefined;
    const src: PackageSource =
      current.sourceKind === 'npm' ? { packageName: current.packageName, version: pin } : { localPath: current.sourceRef };
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
        codeHash: staged.codeHash,
      });
    });
  }

  /**
   * Imports a staged package and records it with `record`; the recorded row becomes this instance's
   * loaded type. A failure removes the staged copy.
   */
  private async fromStaged(
    staged: Sealed,
    record: (loaded: ReturnType<typeof importAdapter>) => Promise<ExternalAdapterRecord>,
  ): Promise<ExternalAdapterRecord> {
    try {
      const loaded = importAdapter(staged.dir);
      const row = await record(loaded);
      this.activate(row, loaded);
      return row;
    } catch (err) {
      fs.rmSync(staged.dir, { recursive: true, force: true });
      throw err;
    }
  }

  /**
   * Re-imports the module from this instance's sealed copy (after checking its hash; edits of a
   * local source folder need a reinstall). 409 `code_tampered` when the copy changed since install.
   */
  async reload(actor: Actor, type: string): Promise<ExternalAdapterRecord> {
    assertInstanceAdmin(actor);
    const current = await this.external(type, true);
    const here = this.local.get(type);
    const dir =
      here && here.installGeneration === current.installGeneration ? here.dir : (await this.materialize(this.sourceOf(current))).dir;
    await this.checkCode(current, dir);
    const loaded = importAdapter(dir);
    if (loaded.module.type !== type)
      throw adapterError('adapter_type_mismatch', `The module now exports type ${loaded.module.type}, not ${type}`);
    await this.assertPin(type, loaded.info.version);
    const row = await this.repo.reloaded(type, { version: loaded.info.version, label: loaded.label, hasUiParser: !!loaded.info.uiParser });
    this.activate(row, loaded);
    return row;
  }

  /**
   * The sealed copy at `dir` must have the hash recorded at install (an install made before hashes
   * were recorded gets this one recorded). A mismatch: the type is unloaded here, the load error says
   * why, it is logged, and 409 `code_tampered` is thrown.
   */
  private async checkCode(row: ExternalAdapterRecord, dir: string): Promise<void> {
    let actual: string | null = null;
    try {
      actual = hashTree(dir);
    } catch {
      /* missing */
    }
    let expected = row.codeHash;
    if (!expected && actual) {
      // in the caller's transaction: reload holds the row's lock
      expected = await this.repo.recordCodeHash(row.type, row.installGeneration, actual);
      this.logger.log(`external adapter ${row.type}: recorded the code hash of an install made before hashes were recorded`);
    }
    if (actual && actual === expected) return;
    this.logger.error(`external adapter ${row.type}: ${CODE_TAMPERED_MESSAGE}; not loaded (${dir})`);
    const here = this.local.get(row.type);
    if (here) {
      this.registry.unregister(row.type);
      this.executors.unregister(row.type);
      this.local.delete(row.type);
    }
    this.loadErrors.set(row.type, CODE_TAMPERED_MESSAGE);
    this.loadErrorCodes.set(row.type, 'code_tampered');
    this.tamperedAt.set(row.type, this.generationOf(row));
    if (here?.dir !== dir) fs.rmSync(dir, { recursive: true, force: true });
    throw adapterError('code_tampered', `Adapter ${row.type}: ${CODE_TAMPERED_MESSAGE}`);
  }

  async remove(actor: Actor, type: string): Promise<ExternalAdapterRecord> {
    assertInstanceAdmin(actor);
    if (this.registry.get(type)?.builtIn) throw adapterError('adapter_builtin', `Built-in adapter type ${type} cannot be deleted`);
    const row = await this.repo.removeExternal(type);
    if (!row) throw adapterError('adapter_not_found', `Adapter type ${type} is not installed`);
    this.db.afterCommit(() => this.deactivate(type));
    return row;
  }

  /** Replaces the instance-level configuration of a type (validated against its schema; required keys may stay with the agents). */
  async putConfig(actor: Actor, type: string, config: Record<string, unknown>): Promise<AdapterSettingsRecord> {
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
  ): Promise<AdapterSettingsRecord> {
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

  async externals(): Promise<ExternalAdapterRecord[]> {
    return this.repo.listExternal();
  }

  async settings(): Promise<Map<string, AdapterSettingsRecord>> {
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
      if (here && here.installGeneration === row.installGeneration && here.loadGeneration === row.loadGeneration) continue;
      if (this.tamperedAt.get(row.type) === this.generationOf(row)) continue;
      let fresh: string | null = null;
      try {
        if (!here || here.installGeneration !== row.installGeneration) fresh = (await this.materialize(this.sourceOf(row))).dir;
        const dir = fresh ?? here!.dir;
        await this.checkCode(row, dir);
        const loaded = importAdapter(dir);
        if (loaded.module.type !== row.type) throw new Error(`the package exports type ${loaded.module.type}, not ${row.type}`);
        this.activate(row, loaded);
        fresh = null;
        this.logger.log(
          `loaded external adapter ${row.type} ${loaded.info.version} (generation ${row.installGeneration}/${row.loadGeneration})`,
        );
      } catch (err) {
        if (fresh) fs.rmSync(fresh, { recursive: true, force: true });
        if (this.tamperedAt.get(row.type) === this.generationOf(row)) continue;
        this.loadErrors.set(row.type, (err as Error).message);
        this.logger.error(`could not load external adapter ${row.type}: ${(err as Error).message}`);
      }
    }
    for (const type of [...this.local.keys()]) if (!seen.has(type)) this.deactivate(type);
  }

  private generationOf(row: ExternalAdapterRecord): string {
    return `${row.installGeneration}/${row.loadGeneration}`;
  }

  private activate(row: ExternalAdapterRecord, loaded: LoadedAdapter): void {
    const type = row.type;
    const executor = externalExecutor(loaded);
    this.registry.register({ type, label: executor.description.label, configSchema: executor.description.configSchema });
    this.executors.register(executor);
    const previous = this.local.get(type);
    if (previous && previous.dir !== loaded.dir) fs.rmSync(previous.dir, { recursive: true, force: true });
    this.local.set(type, {
      type,
      dir: loaded.dir,
      installGeneration: row.installGeneration,
      loadGeneration: row.loadGeneration,
      version: loaded.info.version,
      uiParser: loaded.info.uiParser,
      loadedAt: new Date(),
    });
    this.loadErrors.delete(type);
    this.loadErrorCodes.delete(type);
    this.tamperedAt.delete(type);
  }

  private deactivate(type: string): void {
    const here = this.local.get(type);
    this.registry.unregister(type);
    this.executors.unregister(type);
    this.local.delete(type);
    this.loadErrors.delete(type);
    this.loadErrorCodes.delete(type);
    this.tamperedAt.delete(type);
    if (here) fs.rmSync(here.dir, { recursive: true, force: true });
  }

  /**
   * Seals a package into `<install dir>/<random>`: a local folder is copied (never used in place), a
   * tarball or npm package unpacked; a local source writable by others is refused (422
   * install_source_insecure). The copy is owned by the service, writable by no one else; answers its tree hash.
   */
  private async materialize(src: PackageSource): Promise<Sealed> {
    const fail = (m: string) => adapterError('adapter_source_invalid', m);
    if (src.localPath) {
      const local = path.resolve(src.localPath);
      if (fs.existsSync(local) && fs.statSync(local).isDirectory()) readAdapterPackage(local); // a package, before walking all of it
      const why = insecureSourceReason(src.localPath);
      if (why) throw adapterError('install_source_insecure', `Refusing to install from ${src.localPath}: ${why}`, { reason: why });
    }
    const me = { uid: process.getuid?.() ?? 0, gid: process.getgid?.() ?? 0 };
    const rootProblem = prepareCodeRoot(this.installDir, me.gid);
    if (rootProblem) this.logger.warn(`adapter code directory ${this.installDir}: a folder above it is not sealed: ${rootProblem}`);
    const dir = path.join(this.installDir, randomUUID());
    fs.mkdirSync(dir, { mode: 0o700 });
    try {
      const local = src.localPath ? path.resolve(src.localPath) : null;
      let source: { sourceKind: Sealed['sourceKind']; sourceRef: string };
      if (local && fs.existsSync(local) && fs.statSync(local).isDirectory()) {
        copySource(local, dir, fail);
        readAdapterPackage(dir);
        source = { sourceKind: 'local', sourceRef: local };
      } else {
        source = await stagePackage(src, dir, this.config.plugins.npmRegistry, fail, 'package.json');
        const bad = unsealableReason(dir);
        if (bad) throw fail(`Cannot install the package: ${bad}`);
      }
      sealTree(dir, me);
      return { dir, ...source, codeHash: hashTree(dir) };
    } catch (err) {
      fs.rmSync(dir, { recursive: true, force: true });
      throw err;
    }
  }

  private sourceOf(row: ExternalAdapterRecord): PackageSource {
    if (row.sourceKind === 'npm') return { packageName: row.packageName, version: row.version };
    return { localPath: row.sourceRef };
  }

  private async external(type: string, lock = false): Promise<ExternalAdapterRecord> {
    const row = await this.repo.findExternal(type, lock);
    if (row) return row;
    if (this.registry.get(type)?.builtIn) throw adapterError('adapter_not_external', `${type} is a built-in adapter type`);
    throw adapterError('adapter_not_found', `Adapter type ${type} is not installed`);
  }

  private assertKnown(type: string): void {
    if (!this.registry.has(type)) throw adapterError('adapter_not_found', `Unknown adapter type ${type}`);
  }

  private async assertPin(type: string, version: string): Promise<void> {
    const pin = (await this.repo.settings(type))?.pinnedVersion;
    if (pin && pin !== version)
      throw adapterError('adapter_version_pinned', `${type} is pinned to version ${pin}; the package is ${version}`, {
        pinnedVersion: pin,
      });
  }
}
