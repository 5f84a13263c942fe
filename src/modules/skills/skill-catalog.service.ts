import { TenantDir, withDir } from '../../common/fs/tenant-dir';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Injectable, Logger } from '@nestjs/common';
import YAML from 'yaml';
import { readLocalSkillFolder } from './skill-sources';
import {
  contentHashOf,
  identityOf,
  inventoryOf,
  InventoryEntry,
  normalizeRef,
  parseSkillMd,
  sha256,
  SKILL_MD,
  StoredSkillFile,
  toStoredFiles,
  trustLevelOf,
  TrustLevel,
} from './skill-files';
import { skillError } from './skills.errors';

/** Owner and repository part of the canonical keys of the skills this service ships. */
export const CATALOG_KEY_PREFIX = 'service/catalog';

export interface CatalogSkill {
  id: string;
  key: string;
  kind: 'bundled' | 'optional';
  category: string;
  slug: string;
  name: string;
  description: string | null;
  trustLevel: TrustLevel;
  compatibility: string;
  defaultInstall: boolean;
  recommendedForRoles: string[];
  requires: string[];
  tags: string[];
  files: InventoryEntry[];
  contentHash: string;
}

export interface LoadedCatalogSkill extends CatalogSkill {
  storedFiles: StoredSkillFile[];
  locator: string;
}

interface ManifestEntry {
  slug: string;
  kind?: string;
  category?: string;
  defaultInstall?: boolean;
  recommendedForRoles?: string[];
  requires?: string[];
  tags?: string[];
}

/** A stable UUID-shaped id derived from a catalog key (so ids survive catalog updates). */
export function catalogIdOf(key: string): string {
  const h = sha256(`catalog:${key}`);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/** The folder holding `catalog.yaml`: SERVICE_SKILLS_CATALOG_DIR, else `skills/` of the installation. */
export function findCatalogDir(): string | null {
  const configured = process.env.SERVICE_SKILLS_CATALOG_DIR?.trim();
  if (configured) return fs.existsSync(path.join(configured, 'catalog.yaml')) ? configured : null;
  let dir = __dirname;
  for (let i = 0; i < 8; i++) {
    const candidate = path.join(dir, 'skills');
    if (fs.existsSync(path.join(candidate, 'catalog.yaml'))) return candidate;
    const up = path.dirname(dir);
    if (up === dir) break;
    dir = up;
  }
  return null;
}

/**
 * The shipped catalog: the skill folders under `skills/` of the installation, described by
 * `skills/catalog.yaml`. Read once at start; read-only afterwards.
 */
@Injectable()
export class SkillCatalogService {
  private readonly logger = new Logger('SkillCatalog');
  private loaded: LoadedCatalogSkill[] | null = null;

  all(): LoadedCatalogSkill[] {
    if (!this.loaded) this.loaded = this.load();
    return this.loaded;
  }

  bundled(): LoadedCatalogSkill[] {
    return this.all().filter((s) => s.kind === 'bundled');
  }

  list(filter: { kind?: string; category?: string; q?: string } = {}): LoadedCatalogSkill[] {
    const q = filter.q?.trim().toLowerCase();
    return this.all().filter(
      (s) =>
        (!filter.kind || s.kind === filter.kind) &&
        (!filter.category || s.category === filter.category) &&
        (!q || [s.key, s.slug, s.name, s.description ?? '', ...s.tags].some((t) => t.toLowerCase().includes(q))),
    );
  }

  /** By id, key or unique slug; 404 unknown, 422 a slug several entries share. */
  resolve(ref: string): LoadedCatalogSkill {
    const all = this.all();
    const byId = all.find((s) => s.id === ref);
    if (byId) return byId;
    const n = normalizeRef(ref);
    const byKey = all.find((s) => s.key === n);
    if (byKey) return byKey;
    const bySlug = all.filter((s) => s.slug === n);
    if (bySlug.length === 1) return bySlug[0];
    if (bySlug.length > 1)
      throw skillError('ambiguous_catalog_reference', `Catalog reference "${ref}" matches several skills; use the id or key`);
    throw skillError('catalog_skill_not_found', 'Catalog skill not found');
  }

  find(ref: string): LoadedCatalogSkill | undefined {
    try {
      return this.resolve(ref);
    } catch {
      return undefined;
    }
  }

  private load(): LoadedCatalogSkill[] {
    const dir = findCatalogDir();
    if (!dir) {
      this.logger.warn('no skill catalog found (skills/catalog.yaml); the catalog is empty');
      return [];
    }
    const manifest = YAML.parse(fs.readFileSync(path.join(dir, 'catalog.yaml'), 'utf8')) as { skills?: ManifestEntry[] };
    const out: LoadedCatalogSkill[] = [];
    for (const entry of manifest.skills ?? []) {
      const folder = path.join(dir, entry.slug);
      // the service's own shipped files: no tenant's rights to apply
      const read = withDir(TenantDir.open(fs.realpathSync(folder), { rights: null }), readLocalSkillFolder);
      const stored = toStoredFiles(read.files);
      const md = stored.find((f) => f.path === SKILL_MD);
      if (!md?.content) throw new Error(`catalog skill ${entry.slug} has no SKILL.md`);
      const ident = identityOf(parseSkillMd(md.content).frontmatter, entry.slug);
      const key = `${CATALOG_KEY_PREFIX}/${entry.slug}`;
      out.push({
        id: catalogIdOf(key),
        key,
        kind: entry.kind === 'bundled' ? 'bundled' : 'optional',
        category: entry.category ?? 'general',
        slug: entry.slug,
        name: ident.name,
        description: ident.description,
        trustLevel: trustLevelOf(stored),
        compatibility: 'compatible',
        defaultInstall: entry.defaultInstall === true,
        recommendedForRoles: entry.recommendedForRoles ?? [],
        requires: entry.requires ?? [],
        tags: entry.tags ?? [],
        files: inventoryOf(stored),
        contentHash: contentHashOf(stored),
        storedFiles: stored,
        locator: folder,
      });
    }
    return out;
  }
}

/** The public shape of a catalog entry (no file contents). */
export function toCatalogResponse(s: LoadedCatalogSkill): CatalogSkill {
  const { storedFiles: _f, locator: _l, ...rest } = s;
  return rest;
}
