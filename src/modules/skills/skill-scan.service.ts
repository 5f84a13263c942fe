import * as path from 'node:path';
import { Injectable } from '@nestjs/common';
import type { Actor } from '../../common/auth/actor';
import { unprocessable } from '../../common/errors/domain-error';
import { FsMissingError, TenantDir, withDir } from '../../common/fs/tenant-dir';
import { PathRefusedError } from '../../common/paths/path-guard';
import { ProjectsService } from '../projects/projects.service';
import { WorkspacesService } from '../projects/workspaces.service';
import { contentHashOf, SKILL_MD } from './skill-files';
import { buildSkillWrite, identityFromFiles, toSkillResponse } from './skill-records';
import { SkillCandidate, SkillSourceReader } from './skill-source-reader';
import { discoverLocalSkillFolders } from './skill-sources';
import { SkillsRepository } from './skills.repository';
import { isLocallyModified, SkillsService, warningsOf } from './skills.service';
import { ScanProjectsDto, SkillResponseDto } from './dto/skill.dto';

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

/** Imports the skills found in the company's project workspaces (scan-projects). */
@Injectable()
export class SkillScanService {
  constructor(
    private readonly repo: SkillsRepository,
    private readonly skills: SkillsService,
    private readonly projects: ProjectsService,
    private readonly workspaces: WorkspacesService,
    private readonly reader: SkillSourceReader,
  ) {}

  /** The company's workspaces with a cwd, of the projects and workspaces `dto` selects (all when it names none). */
  async workspaceDirs(companyId: string, dto: ScanProjectsDto = {}) {
    const projects = await this.projects.list(companyId);
    const ids = new Set(projects.map((p) => p.id));
    for (const id of dto.projectIds ?? [])
      if (!ids.has(id)) throw unprocessable(`Project ${id} is not a project of this company`, 'invalid_reference', { field: 'projectIds' });
    const wanted = dto.projectIds?.length ? dto.projectIds : [...ids];
    const all = await this.workspaces.listEntities(companyId, wanted);
    if (dto.workspaceIds?.length) {
      const known = new Set(all.map((w) => w.id));
      for (const id of dto.workspaceIds)
        if (!known.has(id))
          throw unprocessable(`Workspace ${id} is not a workspace of the selected projects`, 'invalid_reference', {
            field: 'workspaceIds',
          });
    }
    return all
      .filter((w) => !dto.workspaceIds?.length || dto.workspaceIds.includes(w.id))
      .filter((w): w is typeof w & { cwd: string } => typeof w.cwd === 'string' && w.cwd.length > 0);
  }

  /** Non-destructive: new skills are imported, untouched ones updated, modified or clashing ones reported. */
  async scanProjects(actor: Actor, companyId: string, dto: ScanProjectsDto): Promise<ScanResult> {
    await this.skills.assertManage(actor, companyId);
    const result: ScanResult = { imported: [], updated: [], skipped: [], conflicts: [], warnings: [], scannedWorkspaces: 0 };
    const seen = new Set<string>();
    for (const w of await this.workspaceDirs(companyId, dto)) {
      // workspaces saved before the roots existed may point anywhere: they are checked again here
      let candidates: Array<{ real: string; candidate: SkillCandidate }>;
      try {
        const real = this.reader.workspaceRoot(w.cwd);
        let root: TenantDir;
        try {
          root = this.reader.openDir(companyId, real);
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
  private scanWorkspace(
    w: { id: string; projectId: string },
    root: TenantDir,
    seen: Set<string>,
  ): Array<{ real: string; candidate: SkillCandidate }> {
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
      const candidate = this.reader.localCandidate(root, rel, 'project_scan', { projectId: w.projectId, workspaceId: w.id });
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
}
