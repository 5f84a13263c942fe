import { Injectable } from '@nestjs/common';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Actor } from '../../common/auth/actor';
import { OTHERS, Rights, TenantDir, withDir } from '../../common/fs/tenant-dir';
import { serviceIsRoot, tenantRights } from '../../common/fs/tenant-rights';
import { PathGuard, realPathOf } from '../../common/paths/path-guard';
import { AgentIdentities } from '../../common/process/agent-identities';
import { AppConfig } from '../../config/app-config';
import { Db } from '../../database/db.service';
import { PluginCore } from './plugin-core.service';
import { pluginError } from './plugins.errors';
import { PluginRecord, PluginsRepository } from './plugins.repository';

/** What a folder check finds. */
export interface FolderCheck {
  path: string;
  problems: string[];
  listing: { entries: number; files: number; directories: number } | null;
}

/** Local folders a plugin declares, configured per company by the board and read by the host for the worker. */
@Injectable()
export class PluginFoldersService {
  constructor(
    private readonly core: PluginCore,
    private readonly repo: PluginsRepository,
    private readonly config: AppConfig,
    private readonly db: Db,
    private readonly identities: AgentIdentities,
  ) {
    // the service's own files, except the plugin folder roots themselves (protected from workspaces only)
    const folderRoots = new Set(config.plugins.folderRoots);
    this.protectedPaths = new PathGuard({
      ...config.pathRoots,
      protectedPaths: config.pathRoots.protectedPaths.filter((p) => !folderRoots.has(p)),
    }).protectedCheck();
  }

  private readonly protectedPaths: (real: string) => boolean;

  async folders(actor: Actor, id: string, companyId: string) {
    const p = await this.core.load(id);
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
    const p = await this.core.load(id);
    this.folderDef(p, key);
    const stored = (await this.repo.folders(p.id, companyId)).get(key);
    if (!stored) return { folderKey: key, configured: false, path: null, problems: ['not configured'], listing: null };
    const check = this.checkFolder(stored.path, companyId);
    return { folderKey: key, configured: true, path: stored.path, problems: check.problems, listing: check.listing };
  }

  validateFolder(p: PluginRecord, key: string, folder: string) {
    this.folderDef(p, key);
    const check = this.checkFolder(folder);
    return { folderKey: key, path: check.path, valid: check.problems.length === 0, problems: check.problems, listing: check.listing };
  }

  async validateFolderRoute(actor: Actor, id: string, key: string, folder: string) {
    return this.validateFolder(await this.core.load(id), key, folder);
  }

  async putFolder(actor: Actor, id: string, companyId: string, key: string, folder: string) {
    const p = await this.core.load(id);
    const v = this.validateFolder(p, key, folder);
    if (!v.valid) throw pluginError('plugin_folder_invalid', `Invalid folder: ${v.problems.join('; ')}`, { problems: v.problems });
    await this.repo.upsertFolder(p.id, companyId, key, v.path);
    return { folderKey: key, configured: true, path: v.path, problems: [], listing: v.listing };
  }

  /**
   * A path inside a local folder the board configured for this plugin and company (`{ companyId,
   * folderKey, path }`, path relative): opened through descriptors (common/fs/tenant-dir) from the
   * folder, one component at a time, never following a link, with the rights of the company's
   * agents when the service is root. The host reads for the worker (which runs as another user),
   * read-only, and only for the company of the call the worker is serving: the `scope` of that call
   * (tools, data, actions and events of one company carry it) names the company; a `companyId`
   * naming another company is refused. Jobs, webhooks and the dashboard act for no company.
   * Returns the open folder holding the target and the target's name (null: the folder itself).
   */
  async folderPath(p: PluginRecord, params: Record<string, unknown>): Promise<{ dir: TenantDir; name: string | null; rel: string }> {
    const scope = this.core.scopeOf(params.scope);
    if (!scope || scope.pluginId !== p.id)
      throw new Error('folder access needs the scope of a call made for one company (tools, data, actions, events)');
    const given = params.companyId === undefined || params.companyId === null ? scope.companyId : String(params.companyId);
    if (given !== scope.companyId) throw new Error('folder access is limited to the company of the call being served');
    const companyId = scope.companyId;
    const key = String(params.folderKey ?? '');
    const rel = typeof params.path === 'string' ? params.path : '';
    this.folderDef(p, key);
    if (rel.length > 1024 || rel.includes('\0') || path.isAbsolute(rel)) throw new Error('path must be relative to the folder');
    const segments = path.posix
      .normalize(rel.split(path.sep).join('/'))
      .split('/')
      .filter((x) => x && x !== '.');
    if (segments.includes('..')) throw new Error('path leaves the folder');
    const stored = (await this.db.detached(() => this.repo.folders(p.id, companyId))).get(key);
    if (!stored) throw new Error(`folder ${key} is not configured for this company`);
    const base = this.checkFolder(stored.path, companyId);
    if (base.problems.length) throw new Error(`folder ${key} is not usable: ${base.problems.join('; ')}`);
    const root = this.open(base.path, companyId);
    const shown = segments.join('/') || '.';
    if (!root) throw new Error(`folder ${key} is not usable: not a readable directory`);
    const dir = withDir(root, (r) => r.walk(segments.slice(0, -1)));
    if (!dir) throw new Error(`${shown} does not exist in folder ${key}`);
    return { dir, name: segments.length ? segments[segments.length - 1] : null, rel: shown };
  }

  /** The configured folder opened for the company (its agents' rights as root), or null when it cannot be. */
  private open(real: string, companyId: string | null): TenantDir | null {
    try {
      return TenantDir.open(real, { rights: this.rightsOf(companyId), isProtected: this.protectedPaths });
    } catch {
      return null;
    }
  }

  private folderDef(p: PluginRecord, key: string) {
    const def = p.manifest.localFolders.find((f) => f.key === key);
    if (!def) throw pluginError('plugin_folder_not_found', `Plugin declares no local folder ${key}`);
    return def;
  }

  /**
   * A folder must resolve (symlinks followed) inside one of the allowed roots, outside the service's
   * own files, and be a directory the company's agents could list (any user, when no company).
   */
  private checkFolder(folder: string, companyId: string | null = null): FolderCheck {
    const problems: string[] = [];
    if (!path.isAbsolute(folder)) return { path: folder, problems: ['path must be absolute'], listing: null };
    let real = path.resolve(folder);
    try {
      real = fs.realpathSync(real);
    } catch {
      problems.push('path does not exist');
    }
    const roots = this.config.plugins.folderRoots.map(realPathOf);
    if (!roots.some((r) => real === r || real.startsWith(r + path.sep)))
      problems.push(`path is outside the allowed roots (${roots.join(', ')})`);
    if (this.protectedPaths(real)) problems.push("path is inside the service's own data or key files");
    if (problems.length) return { path: real, problems, listing: null };
    let entries: Array<{ type: string }>;
    try {
      entries = withDir(TenantDir.open(real, { rights: this.rightsOf(companyId), isProtected: this.protectedPaths }), (d) => d.entries());
    } catch (err) {
      return { path: real, problems: [`not a readable directory: ${(err as Error).message}`], listing: null };
    }
    return {
      path: real,
      problems,
      listing: {
        entries: entries.length,
        files: entries.filter((e) => e.type === 'file').length,
        directories: entries.filter((e) => e.type === 'dir').length,
      },
    };
  }

  private rightsOf(companyId: string | null): Rights | null {
    return companyId ? tenantRights(() => this.identities.companyGid(companyId)) : serviceIsRoot() ? OTHERS : null;
  }
}
