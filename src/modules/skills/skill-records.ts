import { auditSkill, AuditResult, SourceProblem } from './skill-audit';
import {
  contentHashOf,
  identityOf,
  inventoryOf,
  parseSkillMd,
  SKILL_MD,
  SkillIdentity,
  SkillMdError,
  StoredSkillFile,
  trustLevelOf,
} from './skill-files';
import type { SkillRecord, SkillWrite } from './skills.repository';
import type { SkillResponseDto } from './dto/skill.dto';

/** Where a skill came from, as recorded on its row. */
export interface SkillOrigin {
  sourceType: 'catalog' | 'github' | 'skills_sh' | 'url' | 'local_path' | 'managed_local';
  sourceLocator: string | null;
  sourceRef: string | null;
  /** metadata.sourceKind and source coordinates */
  metadata: Record<string, unknown>;
  bundled?: boolean;
}

/** The identity SKILL.md declares; a missing or broken SKILL.md falls back to the folder name (the audit fails it). */
export function identityFromFiles(files: StoredSkillFile[], folderName: string): SkillIdentity {
  const md = files.find((f) => f.path === SKILL_MD);
  let fm: Record<string, unknown> = {};
  if (md?.content) {
    try {
      fm = parseSkillMd(md.content).frontmatter;
    } catch (err) {
      if (!(err instanceof SkillMdError)) throw err;
    }
  }
  return identityOf(fm, folderName);
}

/**
 * The row of a skill from its files and origin: inventory, trust level, content hash and audit.
 * `originHash`: the hash the files had when installed (drift from it is an audit warning).
 */
export function buildSkillWrite(
  files: StoredSkillFile[],
  identity: SkillIdentity,
  key: string,
  origin: SkillOrigin,
  opts: { slug?: string; originHash?: string | null; problems?: SourceProblem[] } = {},
): SkillWrite {
  const contentHash = contentHashOf(files);
  const audit: AuditResult = auditSkill(files, { originHash: opts.originHash ?? null, sourceProblems: opts.problems });
  return {
    key,
    slug: opts.slug ?? identity.slug,
    name: identity.name,
    description: identity.description,
    sourceType: origin.sourceType,
    sourceLocator: origin.sourceLocator,
    sourceRef: origin.sourceRef,
    trustLevel: trustLevelOf(files),
    compatibility: 'compatible',
    fileInventory: inventoryOf(files),
    metadata: { ...identity.metadata, ...origin.metadata, ...(opts.originHash ? { originHash: opts.originHash } : {}) },
    contentHash,
    audit,
    bundled: origin.bundled === true,
  };
}

const SOURCE_LABELS: Record<string, [string, string]> = {
  service_bundled: ['Service bundled', 'service'],
  catalog: ['Catalog', 'catalog'],
  github: ['GitHub', 'github'],
  skills_sh: ['Skills index', 'skills_sh'],
  url: ['URL', 'url'],
  local_path: ['Local folder', 'local'],
  project_scan: ['Project workspace', 'project'],
  managed_local: ['Created here', 'managed'],
};

/** metadata `categories` (strings), else the catalog `category`, else none (as the list row: see SkillCatalogSourceKind). */
function categoriesOf(m: Record<string, unknown>): string[] {
  if (Array.isArray(m.categories)) return m.categories.map((c) => (typeof c === 'string' ? c : JSON.stringify(c)));
  return typeof m.category === 'string' ? [m.category] : [];
}

export function toSkillResponse(s: SkillRecord, attachedAgentCount = 0): SkillResponseDto {
  const sourceKind = typeof s.metadata.sourceKind === 'string' ? s.metadata.sourceKind : s.sourceType;
  const [sourceLabel, sourceBadge] = s.bundled
    ? SOURCE_LABELS['service_bundled']
    : (SOURCE_LABELS[sourceKind] ?? SOURCE_LABELS[s.sourceType] ?? [s.sourceType, s.sourceType]);
  const text = (k: string) => (typeof s.metadata[k] === 'string' ? (s.metadata[k] as string) : null);
  const isLocal = s.sourceType === 'local_path';
  return {
    id: s.id,
    companyId: s.companyId,
    key: s.key,
    slug: s.slug,
    name: s.name,
    description: s.description,
    sourceType: s.sourceType,
    sourceLocator: s.sourceLocator,
    sourceRef: s.sourceRef,
    trustLevel: s.trustLevel,
    compatibility: s.compatibility,
    fileInventory: s.fileInventory,
    metadata: s.metadata,
    contentHash: s.contentHash,
    bundled: s.bundled,
    folderId: s.folderId,
    editable: !s.bundled,
    editableReason: s.bundled ? 'Bundled service skills are read-only.' : null,
    sourceLabel,
    sourceBadge,
    sourcePath: isLocal ? s.sourceLocator : null,
    catalogKind: typeof s.metadata.catalogKind === 'string' ? s.metadata.catalogKind : null,
    originHash: typeof s.metadata.originHash === 'string' ? s.metadata.originHash : null,
    auditVerdict: s.audit?.verdict ?? null,
    categories: categoriesOf(s.metadata),
    iconUrl: text('iconUrl'),
    color: text('color'),
    tagline: text('tagline'),
    authorName: text('authorName'),
    homepageUrl: text('homepageUrl'),
    attachedAgentCount,
    createdAt: s.createdAt,
    updatedAt: s.updatedAt,
  };
}
