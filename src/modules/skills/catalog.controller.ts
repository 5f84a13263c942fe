import { ApiDomainErrors } from '../../common/errors/api-domain-errors.decorator';
import { SKILL_ERRORS } from './skills.errors';
import { Controller, Get, Header, Param, Query } from '@nestjs/common';
import { ApiProduces, ApiTags } from '@nestjs/swagger';
import { Authorize, Public } from '../../common/auth/authorize.decorator';
import { AppConfig } from '../../config/app-config';
import { CatalogSkill, LoadedCatalogSkill, SkillCatalogService, toCatalogResponse } from './skill-catalog.service';
import { SKILL_MD } from './skill-files';
import { skillError } from './skills.errors';
import { CatalogQueryDto, SkillFileQueryDto } from './dto/skill.dto';

function catalogFile(s: LoadedCatalogSkill, path = SKILL_MD) {
  const f = s.storedFiles.find((x) => x.path === path);
  if (!f) throw skillError('skill_file_not_found', `The catalog skill has no file ${path}`);
  if (f.kind === 'asset' || f.content === null) throw skillError('skill_file_not_previewable', `${path} is an asset and not previewable`);
  return { catalogSkillId: s.id, path: f.path, kind: f.kind, sizeBytes: f.sizeBytes, sha256: f.sha256, content: f.content };
}

/** The shipped catalog (authenticated callers) and its public face (/api/skills/available|index|{name}). */
@ApiTags('skills')
@ApiDomainErrors(SKILL_ERRORS)
@Controller('skills')
export class SkillCatalogController {
  constructor(
    private readonly catalog: SkillCatalogService,
    private readonly config: AppConfig,
  ) {}

  /** Catalog entries; filters `kind` (bundled | optional), `category` (exact), `q` (key, name, description, tags). */
  @Get('catalog')
  @Authorize({ callers: ['board', 'agent'] })
  list(@Query() q: CatalogQueryDto): CatalogSkill[] {
    return this.catalog.list(q).map(toCatalogResponse);
  }

  /** One entry by id, key or unique slug. */
  @Get('catalog/:catalogId')
  @Authorize({ callers: ['board', 'agent'] })
  one(@Param('catalogId') id: string): CatalogSkill {
    return toCatalogResponse(this.catalog.resolve(decodeURIComponent(id)));
  }

  /** A catalog file's text (`path` default SKILL.md); assets are not previewable (422). */
  @Get('catalog/:catalogId/files')
  @Authorize({ callers: ['board', 'agent'] })
  file(@Param('catalogId') id: string, @Query() q: SkillFileQueryDto) {
    return catalogFile(this.catalog.resolve(decodeURIComponent(id)), q.path || undefined);
  }

  private base(): string {
    return `${this.config.publicUrl}/api/skills`;
  }

  /** Public: the catalog's skills with name, description, kind, category and the URL of their markdown. */
  @Get('available')
  @Public()
  available() {
    return {
      skills: this.catalog.all().map((s) => ({
        name: s.slug,
        key: s.key,
        description: s.description,
        kind: s.kind,
        category: s.category,
        trustLevel: s.trustLevel,
        contentHash: s.contentHash,
        url: `${this.base()}/${s.slug}`,
      })),
    };
  }

  /** Public: a compact index (name, description, URL). */
  @Get('index')
  @Public()
  index() {
    return this.catalog.all().map((s) => ({ name: s.slug, description: s.description, url: `${this.base()}/${s.slug}` }));
  }

  /** Public: one catalog skill's SKILL.md as markdown; unknown name 404. */
  @Get(':skillName')
  @Public()
  @Header('Content-Type', 'text/markdown; charset=utf-8')
  @ApiProduces('text/markdown')
  markdown(@Param('skillName') name: string): string {
    const s = this.catalog.all().find((x) => x.slug === name.toLowerCase());
    if (!s) throw skillError('catalog_skill_not_found', 'Skill not found');
    return catalogFile(s).content;
  }
}
