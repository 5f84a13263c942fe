import { Injectable } from '@nestjs/common';
import type { Actor } from '../../common/auth/actor';
import { CompanyAccessService } from '../../common/auth/company-access.service';
import { isUuid } from '../../common/http/uuid';
import { Db } from '../../database/db.service';
import { AuthorizationService } from '../authorization/authorization.service';
import { CatalogSkill, LoadedCatalogSkill, SkillCatalogService, toCatalogResponse } from './skill-catalog.service';
import { auditSkill, AuditResult, SourceProblem } from './skill-audit';
import {
  isSafeRelativePath,
  kindOf,
  parseSkillMd,
  renderSkillMd,
  sha256,
  SKILL_MD,
  SkillMdError,
  slugify,
  StoredSkillFile,
} from './skill-files';
import { buildSkillWrite, identityFromFiles, SkillOrigin, toSkillResponse } from './skill-records';
import { skillError } from './skills.errors';
import { SkillRecord, SkillsRepository } from './skills.repository';
import {
  CreateSkillDto,
  InstallCatalogDto,
  SkillDetailResponseDto,
  SkillFileResponseDto,
  SkillResponseDto,
  UpdateSkillFileDto,
} from './dto/skill.dto';

export interface CatalogInstallResult {
  action: 'created' | 'updated' | 'unchanged';
  skill: SkillResponseDto;
  catalogSkill: CatalogSkill;
  warnings: string[];
}

/** A skill handed over in memory (portability import): files by relative path. */
export interface InMemorySkill {
  files: Array<{ path: string; content: string }>;
  /** canonical key to keep; default `company/<companyId>/<slug>` */
  key?: string;
  slug?: string;
  sourceType?: SkillOrigin['sourceType'];
  sourceLocator?: string | null;
  sourceRef?: string | null;
  metadata?: Record<string, unknown>;
}

export interface SkillWithFiles {
  skill: SkillResponseDto;
  files: StoredSkillFile[];
}

export const warningsOf = (audit: AuditResult | null): string[] =>
  (audit?.findings ?? []).map((f) => `${f.severity === 'fail' ? 'audit fail' : 'audit warning'} ${f.code}: ${f.message}`);

const language = (path: string): string =>
  path.endsWith('.md') ? 'markdown' : /\.(sh|bash|py|js|mjs|cjs|ts|rb|pl|php|ps1)$/.test(path) ? 'code' : 'text';

export const catalogOrigin = (cat: LoadedCatalogSkill): SkillOrigin => ({
  sourceType: 'catalog',
  sourceLocator: `skills/${cat.slug}`,
  sourceRef: cat.contentHash,
  bundled: cat.kind === 'bundled',
  // SPEC: a catalog-installed row has sourceKind `catalog`; catalogKind (and the bundled column) say whether it ships bundled
  metadata: {
    sourceKind: 'catalog',
    catalogKind: cat.kind,
    catalogId: cat.id,
    catalogKey: cat.key,
    category: cat.category,
  },
});

/** Company skills: list (with the bundled ones), detail, files, create, edit, delete, audit, catalog installs. */
@Injectable()
export class SkillsService {
  constructor(
    private readonly db: Db,
    private readonly repo: SkillsRepository,
    private readonly catalog: SkillCatalogService,
    private readonly access: CompanyAccessService,
    private readonly authz: AuthorizationService,
  ) {}

  async assertRead(actor: Actor, companyId: string): Promise<void> {
    await this.access.assertCompanyAccess(actor, companyId);
  }

  /** Mutations need `agents:create` (or the legacy `canCreateAgents` flag on the calling agent). */
  async assertManage(actor: Actor, companyId: string): Promise<void> {
    await this.access.assertCompanyAccess(actor, companyId);
    await this.authz.assert({ actor, action: 'agent.create', companyId });
  }

  async loadSkill(companyId: string, skillId: string, lock = false): Promise<SkillRecord> {
    if (!isUuid(skillId)) throw skillError('skill_not_found', 'Skill not found');
    const s = await this.repo.byId(companyId, skillId, lock);
    if (!s) throw skillError('skill_not_found', 'Skill not found');
    return s;
  }

  /** Bundled catalog skills are (re-)imported whenever a company's list is read: missing or outdated rows are written. */
  async ensureBundled(companyId: string, current?: SkillRecord[]): Promise<boolean> {
    const byKey: Map<string, { contentHash: string; bundled: boolean }> = current
      ? new Map(current.map((s) => [s.key, s]))
      : await this.repo.hashesOf(
          companyId,
          this.catalog.bundled().map((c) => c.key),
        );
    const stale = this.catalog.bundled().filter((c) => byKey.get(c.key)?.contentHash !== c.contentHash || !byKey.get(c.key)?.bundled);
    if (!stale.length) return false;
    await this.db.transaction(async () => {
      for (const cat of stale) await this.writeCatalogSkill(companyId, cat, cat.slug);
    });
    return true;
  }

  private writeCatalogSkill(companyId: string, cat: LoadedCatalogSkill, slug: string) {
    const files = cat.storedFiles;
    const w = buildSkillWrite(files, identityFromFiles(files, cat.slug), cat.key, catalogOrigin(cat), {
      slug,
      originHash: cat.contentHash,
    });
    return this.repo.upsert(companyId, w, files);
  }

  /** Attached-agent counts by key (live agents' desired sets). */
  private async usageCounts(companyId: string): Promise<Map<string, number>> {
    const counts = new Map<string, number>();
    for (const a of await this.repo.agentDesiredKeys(companyId)) for (const k of new Set(a.keys)) counts.set(k, (counts.get(k) ?? 0) + 1);
    return counts;
  }

  async listRecords(companyId: string): Promise<SkillRecord[]> {
    let rows = await this.repo.list(companyId);
    if (await this.ensureBundled(companyId, rows)) rows = await this.repo.list(companyId);
    return rows;
  }

  /** The list as JSON text (built by the database; see SkillsRepository.listJson). */
  async listJson(actor: Actor, companyId: string): Promise<string> {
    await this.assertRead(actor, companyId);
    await this.ensureBundled(companyId);
    return this.repo.listJson(companyId);
  }

  /** The list as objects (same content as listJson; used by other modules and tests of the mapping). */
  async list(actor: Actor, companyId: string): Promise<SkillResponseDto[]> {
    await this.assertRead(actor, companyId);
    const [rows, counts] = await Promise.all([this.listRecords(companyId), this.usageCounts(companyId)]);
    return rows.map((s) => toSkillResponse(s, counts.get(s.key) ?? 0));
  }

  async detail(actor: Actor, companyId: string, skillId: string): Promise<SkillDetailResponseDto> {
    await this.assertRead(actor, companyId);
    const s = await this.loadSkill(companyId, skillId);
    const agents = (await this.repo.agentDesiredKeys(companyId)).filter((a) => a.keys.includes(s.key));
    return {
      ...toSkillResponse(s, agents.length),
      usedByAgents: agents.map((a) => ({ id: a.id, name: a.name, urlKey: a.urlKey, adapterType: a.adapterType, status: a.status })),
      audit: s.audit as unknown as Record<string, unknown> | null,
    };
  }

  async getFile(actor: Actor, companyId: string, skillId: string, path = SKILL_MD): Promise<SkillFileResponseDto> {
    await this.assertRead(actor, companyId);
    const s = await this.loadSkill(companyId, skillId);
    const f = await this.repo.file(companyId, s.id, path);
    if (!f) throw skillError('skill_file_not_found', `The skill has no file ${path}`);
    if (f.content === null) throw skillError('skill_file_not_previewable', `${path} is not a previewable text file`);
    return {
      skillId: s.id,
      path: f.path,
      kind: f.kind,
      sizeBytes: f.sizeBytes,
      sha256: f.sha256,
      content: f.content,
      language: language(f.path),
      editable: !s.bundled,
    };
  }

  /** Writes one file of an editable skill (created when absent); SKILL.md must stay valid. */
  async patchFile(actor: Actor, companyId: string, skillId: string, dto: UpdateSkillFileDto): Promise<SkillFileResponseDto> {
    await this.assertManage(actor, companyId);
    const s = await this.loadSkill(companyId, skillId, true);
    if (s.bundled) throw skillError('skill_not_editable', 'Bundled service skills are read-only.');
    if (!isSafeRelativePath(dto.path) || !kindOf(dto.path)) {
      throw skillError('invalid_skill_path', 'path must be SKILL.md or a relative path under references/, scripts/ or assets/', {
        field: 'path',
      });
    }
    if (dto.path === SKILL_MD) assertValidSkillMd(dto.content);
    const bytes = Buffer.from(dto.content, 'utf8');
    const written: StoredSkillFile = {
      path: dto.path,
      kind: kindOf(dto.path)!,
      sizeBytes: bytes.length,
      sha256: sha256(bytes),
      content: dto.content,
    };
    const files = [...(await this.repo.files(companyId, s.id)).filter((f) => f.path !== dto.path), written].sort((a, b) =>
      a.path < b.path ? -1 : 1,
    );
    const identity = { ...identityFromFiles(files, s.slug), slug: s.slug };
    const w = buildSkillWrite(files, identity, s.key, originOfRecord(s), { originHash: originHashOf(s) });
    await this.repo.upsert(companyId, w, files);
    return this.getFile(actor, companyId, s.id, dto.path);
  }

  /** An empty managed skill: key `company/<companyId>/<slug>`, SKILL.md from the given markdown or a stub. */
  async create(actor: Actor, companyId: string, dto: CreateSkillDto): Promise<SkillResponseDto> {
    await this.assertManage(actor, companyId);
    const slug = dto.slug ?? (slugify(dto.name) || 'skill');
    let text: string;
    if (dto.markdown !== undefined) {
      const parsed = assertValidSkillMd(dto.markdown);
      text = renderSkillMd(
        {
          ...parsed.frontmatter,
          name: parsed.frontmatter.name ?? dto.name,
          description: parsed.frontmatter.description ?? dto.description,
        },
        parsed.body,
      );
    } else {
      text = renderSkillMd(
        { name: dto.name, description: dto.description },
        `# ${dto.name}\n\n${dto.description ?? 'Describe when to use this skill and the steps to follow.'}\n`,
      );
    }
    const bytes = Buffer.from(text, 'utf8');
    const files: StoredSkillFile[] = [{ path: SKILL_MD, kind: 'skill', sizeBytes: bytes.length, sha256: sha256(bytes), content: text }];
    const identity = { ...identityFromFiles(files, slug), slug };
    const key = `company/${companyId}/${slug}`;
    const w = buildSkillWrite(
      files,
      identity,
      key,
      { sourceType: 'managed_local', sourceLocator: null, sourceRef: null, metadata: { sourceKind: 'managed_local' } },
      { originHash: null },
    );
    const row = await this.repo.insertNew(companyId, w, files);
    if (!row) throw skillError('skill_slug_taken', `A skill with the key ${key} already exists`, { field: 'slug', key });
    return toSkillResponse(row);
  }

  async remove(actor: Actor, companyId: string, skillId: string): Promise<SkillResponseDto> {
    await this.assertManage(actor, companyId);
    const s = await this.loadSkill(companyId, skillId, true);
    if (s.bundled) throw skillError('skill_not_deletable', 'Bundled service skills cannot be deleted');
    await this.repo.delete(companyId, s.id);
    return toSkillResponse(s);
  }

  /** The audit route: local-path and catalog-managed skills only. */
  async audit(actor: Actor, companyId: string, skillId: string): Promise<AuditResult> {
    await this.assertManage(actor, companyId);
    const s = await this.loadSkill(companyId, skillId, true);
    if (s.sourceType !== 'local_path' && s.sourceType !== 'catalog') {
      throw skillError(
        'skill_audit_unsupported',
        'The audit route covers local-path and catalog-managed skills; other skills are audited on import and update',
      );
    }
    return this.auditFiles(companyId, s, await this.repo.files(companyId, s.id));
  }

  /**
   * Audits these files as the skill's and stores the result. `fromSource`: the files are the
   * skill's source as it is now (a local-path folder); the installed copy stays the stored one
   * (`installedHash`), and an edit of it made here is drift too.
   */
  async auditFiles(
    companyId: string,
    s: SkillRecord,
    files: StoredSkillFile[],
    problems: SourceProblem[] = [],
    fromSource = false,
  ): Promise<AuditResult> {
    const origin = originHashOf(s);
    let result = auditSkill(files, { originHash: origin, sourceProblems: problems });
    if (fromSource) {
      const findings = [...result.findings];
      if (origin && s.contentHash !== origin && !result.codes.includes('origin_drift')) {
        findings.push({
          code: 'origin_drift',
          severity: 'warning',
          path: null,
          line: null,
          message: 'The installed copy was edited since it was imported',
        });
      }
      const verdict = findings.some((f) => f.severity === 'fail') ? 'fail' : findings.length ? 'warning' : 'pass';
      result = { ...result, findings, verdict, codes: [...new Set(findings.map((f) => f.code))], installedHash: s.contentHash };
    }
    await this.repo.setAudit(companyId, s.id, result);
    return result;
  }

  async installCatalog(actor: Actor, companyId: string, dto: InstallCatalogDto): Promise<CatalogInstallResult> {
    await this.assertManage(actor, companyId);
    return this.installCatalogSkill(companyId, dto.catalogSkillId, { slug: dto.slug ?? undefined, force: dto.force });
  }

  /**
   * Installs (or refreshes) a catalog skill in a company by id, key or unique slug; attaches it to
   * no agent. Exported for the built-in agents feature (e.g. `reflection-coach`). A locally modified
   * copy is held (409) unless `force`.
   */
  async installCatalogSkill(
    companyId: string,
    catalogRef: string,
    opts: { slug?: string; force?: boolean } = {},
  ): Promise<CatalogInstallResult> {
    const cat = this.catalog.resolve(catalogRef);
    const existing = await this.repo.byKey(companyId, cat.key);
    const slug = opts.slug ?? existing?.slug ?? cat.slug;
    if (existing && existing.contentHash === cat.contentHash && existing.slug === slug && originHashOf(existing) === cat.contentHash) {
      return {
        action: 'unchanged',
        skill: toSkillResponse(existing),
        catalogSkill: toCatalogResponse(cat),
        warnings: warningsOf(existing.audit).filter((w) => !w.includes('shipped_script')),
      };
    }
    if (existing && isLocallyModified(existing) && !opts.force) {
      throw skillError('skill_locally_modified', 'The installed copy was modified locally; retry with force: true to replace it', {
        skillId: existing.id,
      });
    }
    const { skill, created } = await this.writeCatalogSkill(companyId, cat, slug);
    return {
      action: created ? 'created' : 'updated',
      skill: toSkillResponse(skill),
      catalogSkill: toCatalogResponse(cat),
      warnings: warningsOf(skill.audit),
    };
  }

  /** Restores a catalog skill to the shipped files (its pinned origin); held on local modification unless force. */
  async reset(
    actor: Actor,
    companyId: string,
    skillId: string,
    force: boolean,
  ): Promise<{ action: 'updated' | 'unchanged'; skill: SkillResponseDto; warnings: string[] }> {
    await this.assertManage(actor, companyId);
    const s = await this.loadSkill(companyId, skillId, true);
    if (s.sourceType !== 'catalog') throw skillError('skill_update_unsupported', 'Only catalog-managed skills can be reset');
    const cat = this.catalog.find(String(s.metadata.catalogKey ?? s.key));
    if (!cat) throw skillError('catalog_skill_not_found', 'The catalog no longer ships this skill');
    if (s.contentHash === cat.contentHash && originHashOf(s) === cat.contentHash)
      return { action: 'unchanged', skill: toSkillResponse(s), warnings: [] };
    if (isLocallyModified(s) && !force) {
      throw skillError('skill_locally_modified', 'The skill was modified locally; retry with force: true to discard the changes', {
        skillId: s.id,
      });
    }
    const warnings =
      originHashOf(s) && originHashOf(s) !== cat.contentHash
        ? [`The pinned origin ${originHashOf(s)} is no longer shipped; restored the shipped version ${cat.contentHash}`]
        : [];
    const { skill } = await this.writeCatalogSkill(companyId, cat, s.slug);
    return { action: 'updated', skill: toSkillResponse(skill), warnings };
  }

  // ---------------------------------------------------------------- for other modules

  /** A company skill by id, canonical key or unique slug, or null. */
  async findSkill(companyId: string, ref: string): Promise<SkillRecord | null> {
    const rows = await this.listRecords(companyId);
    const n = ref.trim().toLowerCase();
    const hit = rows.find((r) => r.id === n) ?? rows.find((r) => r.key === n.replace(/^\/+|\/+$/g, ''));
    if (hit) return hit;
    const bySlug = rows.filter((r) => r.slug === n);
    return bySlug.length === 1 ? bySlug[0] : null;
  }

  /**
   * Writes several files of an editable skill at once (an approved skill suggestion): same rules
   * as PATCH files (paths, valid SKILL.md, bundled read-only); the skill is audited again.
   */
  async writeFiles(companyId: string, skillId: string, written: Array<{ path: string; content: string }>): Promise<SkillResponseDto> {
    const s = await this.loadSkill(companyId, skillId, true);
    if (s.bundled) throw skillError('skill_not_editable', 'Bundled service skills are read-only.');
    const byPath = new Map((await this.repo.files(companyId, s.id)).map((f) => [f.path, f]));
    for (const w of written) {
      if (!isSafeRelativePath(w.path) || !kindOf(w.path))
        throw skillError('invalid_skill_path', `Invalid skill file path ${w.path}`, { field: 'path' });
      if (w.path === SKILL_MD) assertValidSkillMd(w.content);
      const bytes = Buffer.from(w.content, 'utf8');
      byPath.set(w.path, { path: w.path, kind: kindOf(w.path)!, sizeBytes: bytes.length, sha256: sha256(bytes), content: w.content });
    }
    const files = [...byPath.values()].sort((a, b) => (a.path < b.path ? -1 : 1));
    const identity = { ...identityFromFiles(files, s.slug), slug: s.slug };
    const { skill } = await this.repo.upsert(
      companyId,
      buildSkillWrite(files, identity, s.key, originOfRecord(s), { originHash: originHashOf(s) }),
      files,
    );
    return toSkillResponse(skill);
  }

  /** Every skill of a company with its files (portability export). Bundled skills included. */
  async listWithFiles(companyId: string): Promise<SkillWithFiles[]> {
    const rows = await this.listRecords(companyId);
    const files = await this.repo.filesOf(
      companyId,
      rows.map((r) => r.id),
    );
    return rows.map((r) => ({ skill: toSkillResponse(r), files: files.get(r.id) ?? [] }));
  }

  /**
   * Imports skills handed over in memory (portability import), each audited; a skill whose key
   * exists is updated unless that row is bundled. Call inside the caller's transaction.
   */
  async importFromFiles(companyId: string, skills: InMemorySkill[]): Promise<{ imported: SkillResponseDto[]; warnings: string[] }> {
    const imported: SkillResponseDto[] = [];
    const warnings: string[] = [];
    for (const m of skills) {
      const raw = m.files.filter((f) => isSafeRelativePath(f.path) && kindOf(f.path));
      const files: StoredSkillFile[] = raw.map((f) => {
        const bytes = Buffer.from(f.content, 'utf8');
        return { path: f.path, kind: kindOf(f.path)!, sizeBytes: bytes.length, sha256: sha256(bytes), content: f.content };
      });
      const ident = identityFromFiles(files, m.slug ?? 'skill');
      const slug = m.slug ?? ident.slug;
      const key = m.key ?? ident.explicitKey ?? `company/${companyId}/${slug}`;
      const existing = await this.repo.byKey(companyId, key);
      if (existing?.bundled) {
        warnings.push(`${key}: bundled skill kept as shipped`);
        continue;
      }
      const origin: SkillOrigin = {
        sourceType: m.sourceType ?? 'managed_local',
        sourceLocator: m.sourceLocator ?? null,
        sourceRef: m.sourceRef ?? null,
        metadata: { sourceKind: m.sourceType ?? 'managed_local', ...(m.metadata ?? {}) },
      };
      const originHash = typeof m.metadata?.originHash === 'string' ? m.metadata.originHash : null;
      const { skill } = await this.repo.upsert(companyId, buildSkillWrite(files, { ...ident, slug }, key, origin, { originHash }), files);
      warnings.push(...warningsOf(skill.audit).map((w) => `${key}: ${w}`));
      imported.push(toSkillResponse(skill));
    }
    return { imported, warnings };
  }
}

export function assertValidSkillMd(text: string) {
  try {
    return parseSkillMd(text);
  } catch (err) {
    if (err instanceof SkillMdError) throw skillError('invalid_skill_md', err.message, { field: 'content' });
    throw err;
  }
}

export const originHashOf = (s: SkillRecord): string | null => (typeof s.metadata.originHash === 'string' ? s.metadata.originHash : null);

/** Files differ from what was installed (edited in the service). */
export const isLocallyModified = (s: SkillRecord): boolean => {
  const origin = originHashOf(s);
  return origin !== null && origin !== s.contentHash;
};

export const originOfRecord = (s: SkillRecord): SkillOrigin => ({
  sourceType: s.sourceType as SkillOrigin['sourceType'],
  sourceLocator: s.sourceLocator,
  sourceRef: s.sourceRef,
  bundled: s.bundled,
  metadata: s.metadata,
});
