import * as path from 'node:path';
import { Injectable } from '@nestjs/common';
import { OutboundRefusedError, outboundGuard } from '../../common/net/outbound-guard';
import { FsMissingError, TenantDir, TreeScope, withDir } from '../../common/fs/tenant-dir';
import { tenantRights } from '../../common/fs/tenant-rights';
import { PathGuard, PathRefusedError, realPathOf } from '../../common/paths/path-guard';
import { AgentIdentities } from '../../common/process/agent-identities';
import { AppConfig } from '../../config/app-config';
import { SourceProblem } from './skill-audit';
import { RawSkillFile, shortHash, SKILL_MD, StoredSkillFile, toStoredFiles } from './skill-files';
import { SkillOrigin } from './skill-records';
import {
  fetchLimited,
  GithubClient,
  GithubFetchResult,
  GithubSource,
  readLocalSkillFolder,
  SourceFetcher,
  SourceFetchError,
} from './skill-sources';
import { skillError } from './skills.errors';

/** One skill read from a source, ready to be written. */
export interface SkillCandidate {
  files: StoredSkillFile[];
  folderName: string;
  problems: SourceProblem[];
  keyFor(slug: string): string;
  origin: SkillOrigin;
}

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
export function mapPathError(err: unknown): never {
  if (err instanceof PathRefusedError) throw skillError('path_not_allowed', err.message, { field: 'source', reason: err.reason });
  throw err;
}

/**
 * Reads skills from their sources for import, project scans and updates: local folders (under the
 * path roots, with the company's agents' rights), URLs and GitHub (through the outbound guard).
 */
@Injectable()
export class SkillSourceReader {
  private readonly paths: PathGuard;

  constructor(
    private readonly config: AppConfig,
    private readonly identities: AgentIdentities,
  ) {
    this.paths = new PathGuard(config.pathRoots);
  }

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

  /** The skills of a GitHub source at its commit; fetch failures as the skills' 4xx errors. */
  githubSkills(src: GithubSource): Promise<GithubFetchResult> {
    return this.github().fetchSkills(src).catch(mapFetchError);
  }

  /**
   * Where a company's local source is read: as root, with the rights of its agents (others, or the
   * company's group), through descriptors (common/fs/tenant-dir), never into protected paths.
   */
  private scope(companyId: string): TreeScope {
    return { rights: tenantRights(() => this.identities.companyGid(companyId)), isProtected: this.paths.protectedCheck() };
  }

  /** Opens a folder for the company (FsMissingError when it is not there, PathRefusedError when refused). */
  openDir(companyId: string, real: string): TenantDir {
    return TenantDir.open(real, this.scope(companyId));
  }

  /** A project workspace's cwd under the path roots and not protected; the real path (PathRefusedError otherwise). */
  workspaceRoot(cwd: string): string {
    return this.paths.assertAllowed(cwd, 'workspace cwd');
  }

  /** Opens a local source (a folder, or the folder of a SKILL.md) for the company; 422 when it is gone or refused. */
  openLocal(companyId: string, real: string, shown: string): TenantDir {
    const folder = path.basename(real) === SKILL_MD ? path.dirname(real) : real;
    try {
      return this.openDir(companyId, folder);
    } catch (err) {
      if (err instanceof FsMissingError)
        throw skillError('invalid_skill_source', `Local path not found or not a folder: ${shown}`, { field: 'source' });
      mapPathError(err);
    }
  }

  /** The skill in the folder `rel` of an open source ('' = the source itself); null when it vanished meanwhile. */
  localCandidate(root: TenantDir, rel: string, kind: 'local_path' | 'project_scan', extra: Record<string, unknown>): SkillCandidate | null {
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

  async urlCandidate(url: string): Promise<SkillCandidate> {
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

  githubCandidate(
    src: GithubSource,
    got: { owner: string; repo: string; ref: string; commit: string },
    s: { folderName: string; repoPath: string; files: RawSkillFile[]; problems: SourceProblem[] },
  ): SkillCandidate {
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
        metadata: {
          sourceKind: kind,
          hostname: 'github.com',
          owner: got.owner,
          repo: got.repo,
          ref: got.ref,
          trackingRef: src.ref ?? got.ref,
          commit: got.commit,
          path: s.repoPath,
        },
      },
    };
  }

  /** Under SERVICE_WORKSPACE_ROOTS or an extra SERVICE_SKILLS_LOCAL_ROOTS folder, and not protected; the real path. */
  assertUnderRoots(p: string): string {
    try {
      return this.paths.assertAllowed(p, 'local source');
    } catch (err) {
      const extra = this.config.skills.localRoots.some((r) => new PathGuard({ ...this.config.pathRoots, roots: [r] }).allows(p));
      if (!(err instanceof PathRefusedError && err.reason === 'outside_roots' && extra)) mapPathError(err);
      return realPathOf(p);
    }
  }

  /** A local source folder that no longer exists (opened as the tenant would: a link is not followed). */
  sourceGone(companyId: string, locator: string): boolean {
    try {
      this.openDir(companyId, this.assertUnderRoots(locator)).close();
      return false;
    } catch (err) {
      return err instanceof FsMissingError;
    }
  }
}
