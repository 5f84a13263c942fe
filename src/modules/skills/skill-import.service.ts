import * as os from 'node:os';
import * as path from 'node:path';
import { Injectable, Logger } from '@nestjs/common';
import type { Actor } from '../../common/auth/actor';
import { realPathOf } from '../../common/paths/path-guard';
import { AppConfig } from '../../config/app-config';
import { contentHashOf } from './skill-files';
import { buildSkillWrite, identityFromFiles, toSkillResponse } from './skill-records';
import { SkillScanService } from './skill-scan.service';
import { mapPathError, SkillCandidate, SkillSourceReader } from './skill-source-reader';
import { discoverLocalSkillFolders, parseSkillSource } from './skill-sources';
import { skillError } from './skills.errors';
import { SkillRecord, SkillsRepository } from './skills.repository';
import { isLocallyModified, SkillsService, warningsOf } from './skills.service';
import { SkillResponseDto } from './dto/skill.dto';

export interface ImportResult {
  imported: SkillResponseDto[];
  warnings: string[];
  source: Record<string, unknown>;
}

/** Imports skills from a source: a local path, a URL, or GitHub (a repository, or a skills.sh entry). */
@Injectable()
export class SkillImportService {
  private readonly logger = new Logger('SkillImport');

  constructor(
    private readonly config: AppConfig,
    private readonly repo: SkillsRepository,
    private readonly skills: SkillsService,
    private readonly scans: SkillScanService,
    private readonly reader: SkillSourceReader,
  ) {}

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
      const root = this.reader.openLocal(companyId, abs, parsed.path);
      let folders: string[];
      try {
        folders = discoverLocalSkillFolders(root);
        if (!folders.length) throw skillError('invalid_skill_source', `No SKILL.md found at ${abs}`, { field: 'source' });
        candidates = folders
          .map((f) => this.reader.localCandidate(root, f, 'local_path', {}))
          .filter((c): c is SkillCandidate => c !== null);
      } catch (err) {
        mapPathError(err);
      } finally {
        root.close();
      }
      sourceInfo = { type: 'local_path', path: abs, skillCount: folders.length };
    } else if (parsed.type === 'url') {
      candidates = [await this.reader.urlCandidate(parsed.url)];
      sourceInfo = { type: 'url', url: parsed.url };
    } else {
      const got = await this.reader.githubSkills(parsed);
      candidates = got.skills.map((s) => this.reader.githubCandidate(parsed, got, s));
      sourceInfo = {
        type: parsed.viaSkillsIndex ? 'skills_sh' : 'github',
        hostname: 'github.com',
        owner: got.owner,
        repo: got.repo,
        ref: got.ref,
        commit: got.commit,
        path: parsed.path,
        skill: parsed.skill,
        url: `https://github.com/${got.owner}/${got.repo}/tree/${got.commit}`,
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
    return {
      skill,
      warning: existing && isLocallyModified(existing) ? `${key}: local modifications were replaced by the import` : undefined,
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
    if (!path.isAbsolute(expanded))
      throw skillError('invalid_skill_source', 'A local source must be an absolute path', { field: 'source' });
    this.reader.assertUnderRoots(expanded);
    const real = realPathOf(expanded);
    if (this.config.deploymentMode === 'authenticated') {
      const roots = [...this.config.skills.localRoots, ...(await this.scans.workspaceDirs(companyId)).map((w) => w.cwd)];
      const ok = roots.some((r) => {
        const rr = realPathOf(r);
        return real === rr || real.startsWith(rr + path.sep);
      });
      if (!ok)
        throw skillError(
          'invalid_skill_source',
          'Local imports must come from a project workspace of the company (or SERVICE_SKILLS_LOCAL_ROOTS)',
          { field: 'source' },
        );
    }
    return real;
  }
}
