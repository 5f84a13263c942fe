import { Injectable } from '@nestjs/common';
import type { Actor } from '../../common/auth/actor';
import { isUuid } from '../../common/http/uuid';
import { FsMissingError, TenantDir } from '../../common/fs/tenant-dir';
import { SkillCatalogService } from './skill-catalog.service';
import { auditSkill, AuditResult, SourceProblem } from './skill-audit';
import { contentHashOf, SKILL_MD, StoredSkillFile } from './skill-files';
import { buildSkillWrite, identityFromFiles, SkillOrigin, toSkillResponse } from './skill-records';
import { mapPathError, SkillCandidate, SkillSourceReader } from './skill-source-reader';
import { GithubSource } from './skill-sources';
import { skillError } from './skills.errors';
import { SkillRecord, SkillsRepository } from './skills.repository';
import { catalogOrigin, isLocallyModified, originHashOf, SkillsService, warningsOf } from './skills.service';
import { SkillResponseDto } from './dto/skill.dto';

/** What a skill's source has now, and the ref it is pinned to. */
interface Upstream {
  files: StoredSkillFile[];
  ref: string | null;
  origin: SkillOrigin;
  problems: SourceProblem[];
}

/** Upstream of installed skills: the audit of a local source as it is now, update status, and installing updates. */
@Injectable()
export class SkillUpdateService {
  constructor(
    private readonly repo: SkillsRepository,
    private readonly skills: SkillsService,
    private readonly catalog: SkillCatalogService,
    private readonly reader: SkillSourceReader,
  ) {}

  /** The files the skill's source has now, and the ref they are pinned to. */
  private async upstream(companyId: string, s: SkillRecord): Promise<Upstream> {
    const m = s.metadata;
    if (s.sourceType === 'catalog') {
      const cat = this.catalog.find(String(m.catalogKey ?? s.key));
      if (!cat) throw skillError('catalog_skill_not_found', 'The catalog no longer ships this skill');
      return { files: cat.storedFiles, ref: cat.contentHash, origin: catalogOrigin(cat), problems: [] };
    }
    if (s.sourceType === 'local_path' && s.sourceLocator) return this.localUpstream(companyId, s.sourceLocator, m);
    if (s.sourceType === 'url' && s.sourceLocator) {
      const c = await this.reader.urlCandidate(s.sourceLocator);
      return { files: c.files, ref: null, origin: c.origin, problems: [] };
    }
    if ((s.sourceType === 'github' || s.sourceType === 'skills_sh') && typeof m.owner === 'string' && typeof m.repo === 'string') {
      const src: GithubSource = {
        type: 'github',
        owner: m.owner,
        repo: m.repo,
        ref: typeof m.trackingRef === 'string' ? m.trackingRef : null,
        path: typeof m.path === 'string' && m.path ? m.path : SKILL_MD,
        skill: null,
        viaSkillsIndex: s.sourceType === 'skills_sh',
      };
      const got = await this.reader.githubSkills(src);
      const one = got.skills.find((x) => x.repoPath === (m.path ?? '')) ?? got.skills[0];
      const c = this.reader.githubCandidate(src, got, one);
      return { files: c.files, ref: got.commit, origin: c.origin, problems: c.problems };
    }
    throw skillError('skill_update_unsupported', 'This skill has no upstream source (created in the service)');
  }

  /** A local-path skill's folder as it is now (its stored metadata kept under what the read says). */
  private localUpstream(companyId: string, locator: string, m: Record<string, unknown>): Upstream {
    const real = this.reader.assertUnderRoots(locator);
    let root: TenantDir;
    try {
      root = this.reader.openDir(companyId, real);
    } catch (err) {
      if (err instanceof FsMissingError) throw skillError('invalid_skill_source', `The source folder ${locator} no longer exists`);
      mapPathError(err);
    }
    let c: SkillCandidate | null;
    try {
      c = this.reader.localCandidate(root, '', (m.sourceKind as 'local_path' | 'project_scan') ?? 'local_path', { ...m });
    } catch (err) {
      mapPathError(err);
    } finally {
      root.close();
    }
    if (!c) throw skillError('invalid_skill_source', `The source folder ${locator} no longer exists`);
    return { files: c.files, ref: null, origin: { ...c.origin, metadata: { ...m, ...c.origin.metadata } }, problems: c.problems };
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
    const now = this.reader.sourceGone(companyId, s.sourceLocator) ? { files: [], problems: [] } : await this.upstream(companyId, s);
    return this.skills.auditFiles(companyId, s, now.files, now.problems, true);
  }

  /** Compares the installed skill with its source: upstream commit, or the shipped version for catalog skills. */
  async updateStatus(actor: Actor, companyId: string, skillId: string): Promise<Record<string, unknown>> {
    await this.skills.assertRead(actor, companyId);
    const s = await this.skills.loadSkill(companyId, skillId);
    const base = {
      skillId: s.id,
      sourceType: s.sourceType,
      installedHash: s.contentHash,
      originHash: originHashOf(s),
      locallyModified: isLocallyModified(s),
      currentRef: s.sourceRef,
    };
    if (s.sourceType === 'managed_local') return { ...base, supported: false, updateAvailable: false, latestRef: null, latestHash: null };
    try {
      const up = await this.upstream(companyId, s);
      const latestHash = contentHashOf(up.files);
      const updateAvailable =
        s.sourceType === 'github' || s.sourceType === 'skills_sh'
          ? up.ref !== s.sourceRef
          : latestHash !== (originHashOf(s) ?? s.contentHash);
      const verdict = auditSkill(up.files, { sourceProblems: up.problems }).verdict;
      return {
        ...base,
        supported: true,
        updateAvailable,
        latestRef: up.ref,
        latestHash,
        latestAuditVerdict: verdict,
        checkedAt: new Date().toISOString(),
      };
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
  async installUpdate(
    actor: Actor,
    companyId: string,
    skillId: string,
    force: boolean,
  ): Promise<{ action: 'updated' | 'unchanged'; skill: SkillResponseDto; warnings: string[]; audit: unknown }> {
    await this.skills.assertManage(actor, companyId);
    const s = await this.skills.loadSkill(companyId, skillId, true);
    if (s.bundled) throw skillError('skill_update_unsupported', 'Bundled service skills are updated with the service');
    const up = await this.upstream(companyId, s);
    const newHash = contentHashOf(up.files);
    const audit = auditSkill(up.files, { sourceProblems: up.problems });
    if (audit.verdict === 'fail') {
      throw skillError('skill_audit_failed', `The update fails the skill audit (${audit.codes.join(', ')}); it is not installed`, {
        codes: audit.codes,
        verdict: 'fail',
      });
    }
    if (newHash === s.contentHash && originHashOf(s) === newHash)
      return { action: 'unchanged', skill: toSkillResponse(s), warnings: [], audit };
    if (isLocallyModified(s) && !force) {
      throw skillError('skill_locally_modified', 'The skill was modified locally; retry with force: true to replace the changes', {
        skillId: s.id,
      });
    }
    const identity = { ...identityFromFiles(up.files, s.slug), slug: s.slug };
    const w = buildSkillWrite(up.files, identity, s.key, up.origin, { originHash: newHash, problems: up.problems });
    const { skill } = await this.repo.upsert(companyId, w, up.files);
    return { action: 'updated', skill: toSkillResponse(skill), warnings: warningsOf(skill.audit), audit: skill.audit };
  }
}
