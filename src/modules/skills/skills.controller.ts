import { ApiDomainErrors } from '../../common/errors/api-domain-errors.decorator';
import { SKILL_ERRORS } from './skills.errors';
import { Body, Controller, Delete, Get, Header, HttpCode, Param, Patch, Post, Query, Res } from '@nestjs/common';
import { ApiOkResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { LogActivity } from '../../common/activity/log-activity.decorator';
import type { Actor } from '../../common/auth/actor';
import { Authorize } from '../../common/auth/authorize.decorator';
import { CurrentActor } from '../../common/auth/current-actor.decorator';
import { ImportResult, SkillImportService } from './skill-import.service';
import { ScanResult, SkillScanService } from './skill-scan.service';
import { SkillUpdateService } from './skill-update.service';
import { AuditResult } from './skill-audit';
import { CatalogInstallResult, SkillsService } from './skills.service';
import {
  AuditResponseDto,
  CreateSkillDto,
  ForceDto,
  ImportSkillsDto,
  InstallCatalogDto,
  ScanProjectsDto,
  SkillDetailResponseDto,
  SkillFileQueryDto,
  SkillFileResponseDto,
  SkillResponseDto,
  UpdateSkillFileDto,
} from './dto/skill.dto';

const companyEntity = { entityType: 'company', entityId: (c: { params: Record<string, string> }) => c.params.companyId };

@ApiTags('skills')
@ApiDomainErrors(SKILL_ERRORS)
@Controller()
export class SkillsController {
  constructor(
    private readonly skills: SkillsService,
    private readonly imports: SkillImportService,
    private readonly scans: SkillScanService,
    private readonly updates: SkillUpdateService,
  ) {}

  /**
   * The company's skills; the service's bundled skills are (re-)imported on each list and listed
   * first. Lean rows: inventory entries carry `path` and `kind`, `metadata` only `sourceKind`
   * (`catalog` for catalog-installed skills), and `contentHash` is left out (all of them: the
   * detail route).
   */
  @Get('companies/:companyId/skills')
  @Authorize({ callers: ['board', 'agent'] })
  @Header('Content-Type', 'application/json; charset=utf-8')
  @ApiOkResponse({ type: [SkillResponseDto] })
  list(@CurrentActor() actor: Actor, @Param('companyId') companyId: string): Promise<string> {
    return this.skills.listJson(actor, companyId);
  }

  /** Creates an empty managed skill with key `company/<companyId>/<slug>`; 409 when that key exists. */
  @Post('companies/:companyId/skills')
  @HttpCode(201)
  @Authorize({ callers: ['board', 'agent'] })
  @LogActivity('company.skill_created', { entityType: 'company_skill', details: (c) => ({ key: c.result.key, slug: c.result.slug }) })
  create(@CurrentActor() actor: Actor, @Param('companyId') companyId: string, @Body() dto: CreateSkillDto): Promise<SkillResponseDto> {
    return this.skills.create(actor, companyId, dto);
  }

  /**
   * Imports from `source` (GitHub forms pinned to a commit, skills-index URLs and install commands,
   * a raw URL, or a local path). Every imported skill is audited; a failing skill is imported with
   * its verdict (it is not delivered to agents) and listed in `warnings`.
   */
  @Post('companies/:companyId/skills/import')
  @HttpCode(200)
  @Authorize({ callers: ['board', 'agent'] })
  @LogActivity('company.skills_imported', {
    ...companyEntity,
    details: (c) => ({
      source: c.body.source,
      count: (c.result.imported as unknown[]).length,
      keys: (c.result.imported as Array<{ key: string }>).map((s) => s.key),
    }),
  })
  import(@CurrentActor() actor: Actor, @Param('companyId') companyId: string, @Body() dto: ImportSkillsDto): Promise<ImportResult> {
    return this.imports.import(actor, companyId, dto.source);
  }

  /** Scans the project workspaces' root and well-known skill folders; non-destructive. */
  @Post('companies/:companyId/skills/scan-projects')
  @HttpCode(200)
  @Authorize({ callers: ['board', 'agent'] })
  @LogActivity('company.skills_scanned', {
    ...companyEntity,
    details: (c) => ({
      imported: (c.result.imported as unknown[]).length,
      updated: (c.result.updated as unknown[]).length,
      conflicts: (c.result.conflicts as unknown[]).length,
    }),
  })
  scanProjects(@CurrentActor() actor: Actor, @Param('companyId') companyId: string, @Body() dto: ScanProjectsDto): Promise<ScanResult> {
    return this.scans.scanProjects(actor, companyId, dto ?? {});
  }

  /** Installs a catalog skill: 201 fresh install (`action: created`), 200 refresh (`updated` or `unchanged`). Attaches it to no agent. */
  @Post('companies/:companyId/skills/install-catalog')
  @HttpCode(201)
  @Authorize({ callers: ['board', 'agent'] })
  @LogActivity('company.skill_catalog_installed', {
    entityType: 'company_skill',
    entityId: (c) => (c.result.skill as { id: string }).id,
    details: (c) => ({ action: c.result.action, catalogSkillId: (c.result.catalogSkill as { id: string }).id }),
    skip: (c) => c.result.action === 'unchanged',
  })
  async installCatalog(
    @CurrentActor() actor: Actor,
    @Param('companyId') companyId: string,
    @Body() dto: InstallCatalogDto,
    @Res({ passthrough: true }) res: FastifyReply,
  ): Promise<CatalogInstallResult> {
    const result = await this.skills.installCatalog(actor, companyId, dto);
    if (result.action !== 'created') res.status(200);
    return result;
  }

  /** One skill with its usage (the live agents whose desired set holds it) and last audit. */
  @Get('companies/:companyId/skills/:skillId')
  @Authorize({ callers: ['board', 'agent'] })
  detail(
    @CurrentActor() actor: Actor,
    @Param('companyId') companyId: string,
    @Param('skillId') skillId: string,
  ): Promise<SkillDetailResponseDto> {
    return this.skills.detail(actor, companyId, skillId);
  }

  /** A file's text (`path` defaults to SKILL.md); unknown path 404; binary or oversized files are not previewable (422). */
  @Get('companies/:companyId/skills/:skillId/files')
  @Authorize({ callers: ['board', 'agent'] })
  file(
    @CurrentActor() actor: Actor,
    @Param('companyId') companyId: string,
    @Param('skillId') skillId: string,
    @Query() q: SkillFileQueryDto,
  ): Promise<SkillFileResponseDto> {
    return this.skills.getFile(actor, companyId, skillId, q.path || undefined);
  }

  /** Writes `{ path, content }` (created when absent) of an editable skill; bundled skills are read-only (422). */
  @Patch('companies/:companyId/skills/:skillId/files')
  @Authorize({ callers: ['board', 'agent'] })
  @LogActivity('company.skill_file_updated', {
    entityType: 'company_skill',
    entityId: (c) => c.params.skillId,
    details: (c) => ({ path: c.body.path }),
  })
  patchFile(
    @CurrentActor() actor: Actor,
    @Param('companyId') companyId: string,
    @Param('skillId') skillId: string,
    @Body() dto: UpdateSkillFileDto,
  ): Promise<SkillFileResponseDto> {
    return this.skills.patchFile(actor, companyId, skillId, dto);
  }

  /** Upstream comparison (pinned commit vs the tracked ref's commit), or the shipped version for catalog skills. */
  @Get('companies/:companyId/skills/:skillId/update-status')
  @Authorize({ callers: ['board', 'agent'] })
  updateStatus(
    @CurrentActor() actor: Actor,
    @Param('companyId') companyId: string,
    @Param('skillId') skillId: string,
  ): Promise<Record<string, unknown>> {
    return this.updates.updateStatus(actor, companyId, skillId);
  }

  /** Installs the upstream version. 422 `skill_audit_failed` when it fails the audit (force does not override); 409 when modified locally unless force. */
  @Post('companies/:companyId/skills/:skillId/install-update')
  @HttpCode(200)
  @Authorize({ callers: ['board', 'agent'] })
  @LogActivity('company.skill_updated', {
    entityType: 'company_skill',
    entityId: (c) => c.params.skillId,
    details: (c) => ({ action: c.result.action, force: c.body.force === true }),
  })
  installUpdate(
    @CurrentActor() actor: Actor,
    @Param('companyId') companyId: string,
    @Param('skillId') skillId: string,
    @Body() dto: ForceDto,
  ) {
    return this.updates.installUpdate(actor, companyId, skillId, dto?.force === true);
  }

  /** Audit verdict (`pass` | `warning` | `fail`) with codes and hashes; local-path and catalog-managed skills only. */
  @Post('companies/:companyId/skills/:skillId/audit')
  @HttpCode(200)
  @Authorize({ callers: ['board', 'agent'] })
  @LogActivity('company.skill_audited', {
    entityType: 'company_skill',
    entityId: (c) => c.params.skillId,
    details: (c) => ({ verdict: c.result.verdict, codes: c.result.codes }),
  })
  audit(@CurrentActor() actor: Actor, @Param('companyId') companyId: string, @Param('skillId') skillId: string): Promise<AuditResponseDto> {
    return this.updates.audit(actor, companyId, skillId) as Promise<AuditResult & AuditResponseDto>;
  }

  /** Restores a catalog-managed skill to its shipped files; 409 when modified locally unless force. */
  @Post('companies/:companyId/skills/:skillId/reset')
  @HttpCode(200)
  @Authorize({ callers: ['board', 'agent'] })
  @LogActivity('company.skill_reset', {
    entityType: 'company_skill',
    entityId: (c) => c.params.skillId,
    details: (c) => ({ action: c.result.action, force: c.body.force === true }),
  })
  reset(@CurrentActor() actor: Actor, @Param('companyId') companyId: string, @Param('skillId') skillId: string, @Body() dto: ForceDto) {
    return this.skills.reset(actor, companyId, skillId, dto?.force === true);
  }

  /** Deletes a skill; bundled skills cannot be deleted (409). Agents keeping its key see it as `missing`. */
  @Delete('companies/:companyId/skills/:skillId')
  @Authorize({ callers: ['board', 'agent'] })
  @LogActivity('company.skill_deleted', { entityType: 'company_skill', details: (c) => ({ key: c.result.key }) })
  remove(
    @CurrentActor() actor: Actor,
    @Param('companyId') companyId: string,
    @Param('skillId') skillId: string,
  ): Promise<SkillResponseDto> {
    return this.skills.remove(actor, companyId, skillId);
  }
}
