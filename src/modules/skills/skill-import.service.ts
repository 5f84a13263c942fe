import * as os from 'node:os';
import * as path from 'node:path';
import { Injectable, Logger } from '@nestjs/common';
import type { Actor } from '../../common/auth/actor';
import { unprocessable } from '../../common/errors/domain-error';
import { isUuid } from '../../common/http/uuid';
import { OutboundRefusedError, outboundGuard } from '../../common/net/outbound-guard';
import { FsMissingError, TenantDir, TreeScope, withDir } from '../../common/fs/tenant-dir';
import { tenantRights } from '../../common/fs/tenant-rights';
import { PathGuard, PathRefusedError, realPathOf } from '../../common/paths/path-guard';
import { AgentIdentities } from '../../common/process/agent-identities';
import { AppConfig } from '../../config/app-config';
import { ProjectsService } from '../projects/projects.service';
import { WorkspacesService } from '../projects/workspaces.service';
import { SkillCatalogService } from './skill-catalog.service';
import { auditSkill, AuditResult, SourceProblem } from './skill-audit';
import { contentHashOf, RawSkillFile, shortHash, SKILL_MD, StoredSkillFile, toStoredFiles } from './skill-files';
import { buildSkillWrite, identityFromFiles, SkillOrigin, toSkillResponse } from './skill-records';
import {
  discoverLocalSkillFolders, fetchLimited, GithubClient, GithubSource, parseSkillSource, readLocalSkillFolder, SourceFetcher, SourceFetchError,
} from './skill-sources';
import { skillError } from './skills.errors';
import { SkillRecord, SkillsRepository } from './skills.repository';
import { catalogOrigin, isLocallyModified, originHashOf, SkillsService, warningsOf } from './skills.service';
import { ScanProjectsDto, SkillResponseDto } from './dto/skill.dto';

/** One skill read from a source, ready to be written. */
interface SkillCandidate {
  files: StoredSkillFile[];
  folderName: string;
  problems: SourceProblem[];
  keyFor(slug: string): string;
  origin: SkillOrigin;
}

export interface ImportResult {
  imported: SkillResponseDto[];
  warnings: string[];
  source: Record<string, unknown>;
}

interface ScanEntry {
  key: string;
  slug: string;
  path: string;
  skillId?: string;
  reason?: string;
}

export interface ScanResult {
  imported: SkillResponseDto[];
  updated: SkillResponseDto[];
  skipped: ScanEntry[];
  conflicts: ScanEntry[];
  warnings: string[];
  scannedWorkspaces: number;
}

/** Folders of a workspace where skills are looked for (besides the workspace root itself). */
export const WELL_KNOWN_SKILL_DIRS = ['skills', '.skills', '.agents/skills', 'docs/skills'];

function mapFetchError(err: unknown): never {
  if (err instanceof OutboundRefusedError) throw skillError('url_not_allowed', err.message, { field: 'source', reason: err.reason });
  if (err instanceof SourceFetchError) {
    if (err.kind === 'too_large') throw skillError('skill_source_too_large', err.message);
    if (err.kind === 'not_found') throw skillError('invalid_skill_source', err.message);
    throw skillError('skill_source_unreachable', err.message);
  }
  throw err;
}

/** A local source outside the roots, protected, or (root service) not readable by the company's agents: 422 `path_not_allowed`. */
function mapPathError(err: unknown): never {
  if (err instanceof PathRefusedError) throw skillError('path_not_allowed', err.message, { field: 'source', reason: err.reason });
  throw err;
}

/** Imports from local paths, project workspaces, URLs and GitHub; upstream status and updates. */
@Injectable()
export class SkillImportService {
  private readonly logger = new Logger('SkillImport');

  constructor(
    private readonly config: AppConfig,
    private readonly repo: SkillsRepository,
    private readonly skills: SkillsService,
    private readonly catalog: SkillCatalogService,
    private readonly projects: ProjectsService,
    private readonly workspaces: WorkspacesService,
    private readonly identities: AgentIdentities,
  ) {
    this.paths = new PathGuard(config.pathRoots);
  }

  private readonly paths: PathGuard;

  /**
   * Every source is fetched through the outbound guard: no loopback, link-local or private
   * destination (after DNS, on every redirect) unless SERVICE_OUTBOUND_ALLOW names it. The GitHub
   * API host the operator configured (SERVICE_GITHUB_API_URL) counts as allowed.
   */
  private fetcher(trustedHosts: string[] = []): SourceFetcher {
    const guard = outboundGuard(this.config.outbound);
    return (url, init) => guard.fetch(url, init, { trustedHosts });
  }

  private github(): GithubClient {
    const s = this.config.skills;
    return new GithubClient(
      this.fetcher([new URL(s.githubApiUrl).hostname]),
      s.githubApiUrl,
      { maxFileBytes: s.maxFileBytes, maxTotalBytes: s.maxTotalBytes, timeoutMs: s.timeoutMs },
      s.githubToken,
    );
  }

  // ---------------------------------------------------------------- import

  async import(actor: Actor, companyId: string, source: string): Promise<ImportResult> {
    await this.skills.assertManage(actor, companyId);
    let parsed;
    try {
      parsed = parseSkillSource(source);
    } catch (err) {
      throw skillError('invalid_skill_source', (err as Error).message, { field: 'source' });
    }
    let candidates: SkillCandidate[];
    let sourceInfo: Record<string, unknown>;
    if (parsed.type === 'local') {
      const abs = await this.allowedLocalPath(companyId, parsed.path);
      const root = this.openLocal(companyId, abs, parsed.path);
      let folders: string[];
      try {
        folders = discoverLocalSkillFolders(root);
        if (!folders.length) throw skillError('invalid_skill_source', `No SKILL.md found at ${abs}`, { field: 'source' });
        candidates = folders.map((f) => this.localCandidate(root, f, 'local_path', {})).filter((c): c is SkillCandidate => c !== null);
      } catch (err) {
        mapPathError(err);
      } finally {
        root.close();
      }
      sourceInfo = { type: 'local_path', path: abs, skillCount: folders.length };
    } else if (parsed.type === 'url') {
      candidates = [await this.urlCandidate(parsed.url)];
      sourceInfo = { type: 'url', url: parsed.url };
    } else {
      const got = await this.github().fetchSkills(parsed).catch(mapFetchError);
      candidates = got.skills.map((s) => this.githubCandidate(parsed, got, s));
      sourceInfo = {
        type: parsed.viaSkillsIndex ? 'skills_sh' : 'github', hostname: 'github.com', owner: got.owner, repo: got.repo, ref: got.ref, commit: got.commit,
        path: parsed.path, skill: parsed.skill, url: `https://github.com/${got.owner}/${got.repo}/tree/${got.commit}`,
      };
    }
    const imported: SkillResponseDto[] = [];
    const warnings: string[] = [];
    for (const c of candidates) {
      const { skill, warning } = await this.writeCandidate(companyId, c);
      if (warning) warnings.push(warning);
      if (skill) {
        imported.push(toSkillResponse(skill));
        warnings.push(...warningsOf(skill.audit).map((w) => `${skill.key}: ${w}`));
      }
    }
    // telemetry event skill_imported (the service has no telemetry sink: it is a log line)
    this.logger.log({ event: 'skill_imported', companyId, source: sourceInfo.type, count: imported.length });
    return { imported, warnings, source: sourceInfo };
  }

  private async writeCandidate(companyId: string, c: SkillCandidate): Promise<{ skill: SkillRecord | null; warning?: string }> {
    const identity = identityFromFiles(c.files, c.folderName);
    const key = identity.explicitKey ?? c.keyFor(identity.slug);
    const existing = await this.repo.byKey(companyId, key);
    if (existing?.bundled) return { skill: null, warning: `${key}: a bundled skill has this key; not imported` };
    const contentHash = contentHashOf(c.files);
    const w = buildSkillWrite(c.files, identity, key, c.origin, { originHash: contentHash, problems: c.problems });
    const { skill } = await this.repo.upsert(companyId, w, c.files);
    return { skill, warning: existing && isLocallyModified(existing) ? `${key}: local modifications were replaced by the import` : undefined };
  }

  /**
   * Where a company's local source is read: as root, with the rights of its agents (others, or the
   * company's group), through descriptors (common/fs/tenant-dir), never into protected paths.
   */
  private scope(companyId: string): TreeScope {
    return { rights: tenantRights(() => this.identities.companyGid(companyId)), isProtected: this.paths.protectedCheck() };
  }

  /** Opens a local source (a folder, or the folder of a SKILL.md) for the company; 422 when it is gone or refused. */
  private openLocal(companyId: string, real: string, shown: string): TenantDir {
    const folder = path.basename(real) === SKILL_MD ? path.dirname(real) : real;
    try {
      return TenantDir.open(folder, this.scope(companyId));
    } catch (err) {
      if (err instanceof FsMissingError) throw skillError('invalid_skill_source', `Local path not found or not a folder: ${shown}`, { field: 'source' });
      mapPathError(err);
    }
  }

  /** The skill in the folder `rel` of an open source ('' = the source itself); null when it vanished meanwhile. */
  private localCandidate(root: TenantDir, rel: string, kind: 'local_path' | 'project_scan', extra: Record<string, unknown>): SkillCandidate | null {
    const dir = root.walk(rel ? rel.split('/') : []);
    if (!dir) return null;
    const real = dir.path;
    const read = withDir(dir, readLocalSkillFolder);
    return {
      files: toStoredFiles(read.files),
      folderName: read.folderName,
      problems: read.problems,
      keyFor: (slug) => `local/${shortHash(real)}/${slug}`,
      origin: { sourceType: 'local_path', sourceLocator: real, sourceRef: null, metadata: { sourceKind: kind, ...extra } },
    };
  }

  private async urlCandidate(url: string): Promise<SkillCandidate> {
    const s = this.config.skills;
    const bytes = await fetchLimited(this.fetcher(), url, s.maxFileBytes, s.timeoutMs).catch(mapFetchError);
    const u = new URL(url);
    const folderName = path.posix.basename(path.posix.dirname(u.pathname)) || u.hostname;
    return {
      files: toStoredFiles([{ path: SKILL_MD, bytes }]),
      folderName,
      problems: [],
      keyFor: (slug) => `url/${u.hostname.toLowerCase()}/${shortHash(url)}/${slug}`,
      origin: { sourceType: 'url', sourceLocator: url, sourceRef: null, metadata: { sourceKind: 'url', url } },
    };
  }

  private githubCandidate(src: GithubSource, got: { owner: string; repo: string; ref: string; commit: string }, s: { folderName: string; repoPath: string; files: RawSkillFile[]; problems: SourceProblem[] }): SkillCandidate {
    const kind = src.viaSkillsIndex ? 'skills_sh' : 'github';
    return {
      files: toStoredFiles(s.files),
      folderName: s.folderName,
      problems: s.problems,
      keyFor: (slug) => `${got.owner}/${got.repo}/${slug}`.toLowerCase(),
      origin: {
        sourceType: kind,
        sourceLocator: `https://github.com/${got.owner}/${got.repo}/tree/${got.commit}${s.repoPath ? `/${s.repoPath}` : ''}`,
        sourceRef: got.commit,
        metadata: { sourceKind: kind, hostname: 'github.com', owner: got.owner, repo: got.repo, ref: got.ref, trackingRef: src.ref ?? got.ref, commit: got.commit, path: s.repoPath },
      },
    };
  }

  /**
   * Local paths: absolute (or ~), under SERVICE_WORKSPACE_ROOTS (or SERVICE_SKILLS_LOCAL_ROOTS) and
   * never in the service's data or key files (checked before existence: no oracle for other paths);
   * when the service is root, readable by other users. In authenticated mode also only inside a
   * project workspace of the company or SERVICE_SKILLS_LOCAL_ROOTS.
   */
  private async allowedLocalPath(companyId: string, p: string): Promise<string> {
    const expanded = p.startsWith('~') ? path.join(os.homedir(), p.slice(1)) : p;
    if (!path.isAbsolute(expanded)) throw skillError('invalid_skill_source', 'A local source must be an absolute path', { field: 'source' });
    this.assertUnderRoots(expanded);
    const real = realPathOf(expanded);
    if (this.config.deploymentMode === 'authenticated') {
      const roots = [...this.config.skills.localRoots, ...(await this.workspaceDirs(companyId)).map((w) => w.cwd)];
      const ok = roots.some((r) => {
        const rr = realPathOf(r);
        return real === rr || real.startsWith(rr + path.sep);
      });
      if (!ok) throw skillError('invalid_skill_source', 'Local imports must come from a project workspace of the company (or SERVICE_SKILLS_LOCAL_ROOTS)', { field: 'source' });
    }
    return real;
  }

  /** Under SERVICE_WORKSPACE_ROOTS or an extra SERVICE_SKILLS_LOCAL_ROOTS folder, and not protected; the real path. */
  private assertUnderRoots(p: string): string {
    try {
      return this.paths.assertAllowed(p, 'local source');
    } catch (err) {
      const extra = this.config.skills.localRoots.some((r) => new PathGuard({ ...this.config.pathRoots, roots: [r] }).allows(p));
      if (!(err instanceof PathRefusedError && err.reason === 'outside_roots' && extra)) mapPathError(err);
      return realPathOf(p);
    }
  }

  /** A local source folder that no longer exists (opened as the tenant would: a link is not followed). */
  private sourceGone(companyId: string, locator: string): boolean {
    try {
      TenantDir.open(this.assertUnderRoots(locator), this.scope(companyId)).close();
      return false;
    } catch (err) {
      return err instanceof FsMissingError;
    }
  }

  private async workspaceDirs(companyId: string, dto: ScanProjectsDto = {}) {
    const projects = await this.projects.list(companyId);
    const ids = new Set(projects.map((p) => p.id));
    for (const id of dto.projectIds ?? []) if (!ids.has(id)) throw unprocessable(`Project ${id} is not a project of this company`, 'invalid_reference', { field: 'projectIds' });
    const wanted = dto.projectIds?.length ? dto.projectIds : [...ids];
    const all = await this.workspaces.listEntities(companyId, wanted);
    if (dto.workspaceIds?.length) {
      const known = new Set(all.map((w) => w.id));
      for (const id of dto.workspaceIds) if (!known.has(id)) throw unprocessable(`Workspace ${id} is not a workspace of the selected projects`, 'invalid_reference', { field: 'workspaceIds' });
    }
    return all
      .filter((w) => !dto.workspaceIds?.length || dto.workspaceIds.includes(w.id))
      .filter((w): w is typeof w & { cwd: string } => typeof w.cwd === 'string' && w.cwd.length > 0);
  }

  // ---------------------------------------------------------------- scan-projects

  /** Non-destructive: new skills are imported, untouched ones updated, modified or clashing ones reported. */
  async scanProjects(actor: Actor, companyId: string, dto: ScanProjectsDto): Promise<ScanResult> {
    await this.skills.assertManage(actor, companyId);
    const result: ScanResult = { imported: [], updated: [], skipped: [], conflicts: [], warnings: [], scannedWorkspaces: 0 };
    const seen = new Set<string>();
    for (const w of await this.workspaceDirs(companyId, dto)) {
      // workspaces saved before the roots existed may point anywhere: they are checked again here
      let candidates: Array<{ real: string; candidate: SkillCandidate }>;
      try {
        const real = this.paths.assertAllowed(w.cwd, 'workspace cwd');
        let root: TenantDir;
        try {
          root = TenantDir.open(real, this.scope(companyId));
        } catch (err) {
          if (!(err instanceof FsMissingError)) throw err;
          result.warnings.push(`workspace ${w.name}: ${w.cwd} does not exist on this host`);
          continue;
        }
        candidates = withDir(root, (r) => this.scanWorkspace(w, r, seen));
      } catch (err) {
        if (!(err instanceof PathRefusedError)) throw err;
        result.warnings.push(`workspace ${w.name}: ${err.message}; not scanned`);
        continue;
      }
      result.scannedWorkspaces++;
      for (const c of candidates) await this.scanOne(companyId, c.candidate, c.real, result);
    }
    return result;
  }

  /** The skill folders of one open workspace (root SKILL.md and the well-known folders). */
  private scanWorkspace(w: { id: string; projectId: string }, root: TenantDir, seen: Set<string>): Array<{ real: string; candidate: SkillCandidate }> {
    const folders: string[] = [];
    if (root.typeOf(SKILL_MD)) folders.push('');
    for (const d of WELL_KNOWN_SKILL_DIRS) {
      const dir = root.walk(d.split('/'));
      if (dir) withDir(dir, (x) => folders.push(...discoverLocalSkillFolders(x).map((f) => (f ? `${d}/${f}` : d))));
    }
    const out: Array<{ real: string; candidate: SkillCandidate }> = [];
    for (const rel of folders) {
      const real = rel ? path.join(root.path, rel) : root.path;
      if (seen.has(real)) continue;
      seen.add(real);
      const candidate = this.localCandidate(root, rel, 'project_scan', { projectId: w.projectId, workspaceId: w.id });
      if (candidate) out.push({ real, candidate });
    }
    return out;
  }

  private async scanOne(companyId: string, c: SkillCandidate, folder: string, result: ScanResult): Promise<void> {
    const identity = identityFromFiles(c.files, c.folderName);
    const key = identity.explicitKey ?? c.keyFor(identity.slug);
    const entry = { key, slug: identity.slug, path: folder };
    const existing = await this.repo.byKey(companyId, key);
    const hash = contentHashOf(c.files);
    if (!existing) {
      const clash = (await this.repo.refs(companyId)).find((r) => r.slug === identity.slug);
      if (clash) {
        result.conflicts.push({ ...entry, skillId: clash.id, reason: 'slug_in_use' });
        return;
      }
    } else if (existing.bundled) {
      result.conflicts.push({ ...entry, skillId: existing.id, reason: 'bundled_key' });
      return;
    } else if (existing.contentHash === hash) {
      result.skipped.push({ ...entry, skillId: existing.id, reason: 'unchanged' });
      return;
    } else if (isLocallyModified(existing)) {
      result.conflicts.push({ ...entry, skillId: existing.id, reason: 'locally_modified' });
      return;
    }
    const w = buildSkillWrite(c.files, identity, key, c.origin, { originHash: hash, problems: c.problems });
    const { skill, created } = await this.repo.upsert(companyId, w, c.files);
    (created ? result.imported : result.updated).push(toSkillResponse(skill));
    result.warnings.push(...warningsOf(skill.audit).map((x) => `${key}: ${x}`));
  }

  // ---------------------------------------------------------------- upstream

  /** The files the skill's source has now, and the ref they are pinned to. */
  private async upstream(companyId: string, s: SkillRecord): Promise<{ files: StoredSkillFile[]; ref: string | null; origin: SkillOrigin; problems: SourceProblem[] }> {
    const m = s.metadata;
    if (s.sourceType === 'catalog') {
      const cat = this.catalog.find(String(m.catalogKey ?? s.key));
      if (!cat) throw skillError('catalog_skill_not_found', 'The catalog no longer ships this skill');
      return { files: cat.storedFiles, ref: cat.contentHash, origin: catalogOrigin(cat), problems: [] };
    }
    if (s.sourceType === 'local_path' && s.sourceLocator) {
      const real = this.assertUnderRoots(s.sourceLocator);
      let root: TenantDir;
      try {
        root = TenantDir.open(real, this.scope(companyId));
      } catch (err) {
        if (err instanceof FsMissingError) throw skillError('invalid_skill_source', `The source folder ${s.sourceLocator} no longer exists`);
        mapPathError(err);
      }
      let c: SkillCandidate | null;
      try {
        c = this.localCandidate(root, '', (m.sourceKind as 'local_path' | 'project_scan') ?? 'local_path', { ...m });
      } catch (err) {
        mapPathError(err);
      } finally {
        root.close();
      }
      if (!c) throw skillError('invalid_skill_source', `The source folder ${s.sourceLocator} no longer exists`);
      return { files: c.files, ref: null, origin: { ...c.origin, metadata: { ...m, ...c.origin.metadata } }, problems: c.problems };
    }
    if (s.sourceType === 'url' && s.sourceLocator) {
      const c = await this.urlCandidate(s.sourceLocator);
      return { files: c.files, ref: null, origin: c.origin, problems: [] };
    }
    if ((s.sourceType === 'github' || s.sourceType === 'skills_sh') && typeof m.owner === 'string' && typeof m.repo === 'string') {
      const src: GithubSource = {
        type: 'github', owner: m.owner, repo: m.repo, ref: typeof m.trackingRef === 'string' ? m.trackingRef : null,
        path: typeof m.path === 'string' && m.path ? m.path : SKILL_MD, skill: null, viaSkillsIndex: s.sourceType === 'skills_sh',
      };
      const got = await this.github().fetchSkills(src).catch(mapFetchError);
      const one = got.skills.find((x) => x.repoPath === (m.path ?? '')) ?? got.skills[0];
      const c = this.githubCandidate(src, got, one);
      return { files: c.files, ref: got.commit, origin: c.origin, problems: c.problems };
    }
    throw skillError('skill_update_unsupported', 'This skill has no upstream source (created in the service)');
  }

  /**
   * The audit route. A local-path skill is audited on its folder as it is now (a SKILL.md removed
   * since the import fails; a folder gone altogether audits as empty), not on the copy stored at
   * import; catalog skills on their stored files.
   */
  async audit(actor: Actor, companyId: string, skillId: string): Promise<AuditResult> {
    await this.skills.assertManage(actor, companyId);
    const s = await this.skills.loadSkill(companyId, skillId, true);
    if (s.sourceType !== 'local_path' || !s.sourceLocator) return this.skills.audit(actor, companyId, skillId);
    const now = this.sourceGone(companyId, s.sourceLocator) ? { files: [], problems: [] } : await this.upstream(companyId, s);
    return this.skills.auditFiles(companyId, s, now.files, now.problems, true);
  }

  /** Compares the installed skill with its source: upstream commit, or the shipped version for catalog skills. */
  async updateStatus(actor: Actor, companyId: string, skillId: string): Promise<Record<string, unknown>> {
    await this.skills.assertRead(actor, companyId);
    const s = await this.skills.loadSkill(companyId, skillId);
    const base = {
      skillId: s.id, sourceType: s.sourceType, installedHash: s.contentHash, originHash: originHashOf(s), locallyModified: isLocallyModified(s),
      currentRef: s.sourceRef,
    };
    if (s.sourceType === 'managed_local') return { ...base, supported: false, updateAvailable: false, latestRef: null, latestHash: null };
    try {
      const up = await this.upstream(companyId, s);
      const latestHash = contentHashOf(up.files);
      const updateAvailable = s.sourceType === 'github' || s.sourceType === 'skills_sh' ? up.ref !== s.sourceRef : latestHash !== (originHashOf(s) ?? s.contentHash);
      const verdict = auditSkill(up.files, { sourceProblems: up.problems }).verdict;
      return { ...base, supported: true, updateAvailable, latestRef: up.ref, latestHash, latestAuditVerdict: verdict, checkedAt: new Date().toISOString() };
    } catch (err) {
      if (isUuid(s.id) && (err as { status?: number }).status !== undefined) {
        return { ...base, supported: true, updateAvailable: null, latestRef: null, latestHash: null, error: (err as Error).message };
      }
      throw err;
    }
  }

  /**
   * Installs what the source has now. Hard stop: the new files' audit verdict is `fail` (422, force
   * does not override). Soft hold: the installed copy was modified locally (409 unless force).
   */
  async installUpdate(actor: Actor, companyId: string, skillId: string, force: boolean): Promise<{ action: 'updated' | 'unchanged'; skill: SkillResponseDto; warnings: string[]; audit: unknown }> {
    await this.skills.assertManage(actor, companyId);
    const s = await this.skills.loadSkill(companyId, skillId, true);
    if (s.bundled) throw skillError('skill_update_unsupported', 'Bundled service skills are updated with the service');
    const up = await this.upstream(companyId, s);
    const newHash = contentHashOf(up.files);
    const audit = auditSkill(up.files, { sourceProblems: up.problems });
    if (audit.verdict === 'fail') {
      throw skillError('skill_audit_failed', `The update fails the skill audit (${audit.codes.join(', ')}); it is not installed`, { codes: audit.codes, verdict: 'fail' });
    }
    if (newHash === s.contentHash && originHashOf(s) === newHash) return { action: 'unchanged', skill: toSkillResponse(s), warnings: [], audit };
    if (isLocallyModified(s) && !force) {
      throw skillError('skill_locally_modified', 'The skill was modified locally; retry with force: true to replace the changes', { skillId: s.id });
    }
    const identity = { ...identityFromFiles(up.files, s.slug), slug: s.slug };
    const w = buildSkillWrite(up.files, identity, s.key, up.origin, { originHash: newHash, problems: up.problems });
    const { skill } = await this.repo.upsert(companyId, w, up.files);
    return { action: 'updated', skill: toSkillResponse(skill), warnings: warningsOf(skill.audit), audit: skill.audit };
  }
}
