import { ApiDomainErrors } from '../../common/errors/api-domain-errors.decorator';
import { COMPANY_ERRORS } from './companies.errors';
import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query, UseInterceptors } from '@nestjs/common';
import { ApiBody, ApiConsumes, ApiCreatedResponse, ApiTags } from '@nestjs/swagger';
import { LogActivity, NoActivity } from '../../common/activity/log-activity.decorator';
import type { Actor } from '../../common/auth/actor';
import { Authorize } from '../../common/auth/authorize.decorator';
import { CurrentActor } from '../../common/auth/current-actor.decorator';
import { SingleFileUploadInterceptor, UploadedFile, type UploadedFile as File } from '../../common/http/file-upload';
import { CompaniesService } from './companies.service';
import {
  AssetResponseDto,
  BrandingDto,
  CompanyResponseDto,
  CompanyStatsDto,
  CreateCompanyDto,
  ListCompaniesQueryDto,
  UpdateCompanyDto,
} from './dto/company.dto';

const companyDetails = { companyId: (c: { result: Record<string, unknown> }) => c.result.id as string };

@ApiTags('companies')
@ApiDomainErrors(COMPANY_ERRORS)
@Controller('companies')
export class CompaniesController {
  constructor(private readonly companies: CompaniesService) {}

  /** Companies the caller can access; archived ones only with `includeArchived=true`. */
  @Get()
  @Authorize({ callers: ['board'] })
  list(@CurrentActor() actor: Actor, @Query() q: ListCompaniesQueryDto): Promise<CompanyResponseDto[]> {
    return this.companies.list(actor, q.includeArchived === 'true');
  }

  /** Object keyed by company id: `{ agentCount, issueCount }`. */
  @Get('stats')
  @Authorize({ callers: ['board'] })
  stats(@CurrentActor() actor: Actor): Promise<Record<string, CompanyStatsDto>> {
    return this.companies.stats(actor);
  }

  @Get(':companyId')
  @Authorize({ callers: ['board', 'agent'] })
  get(@Param('companyId') companyId: string): Promise<CompanyResponseDto> {
    return this.companies.get(companyId);
  }

  /** Generates the issue prefix; a budget > 0 creates a UTC calendar-month budget policy. */
  @Post()
  @HttpCode(201)
  @Authorize({ callers: ['board'] })
  @LogActivity('company.created', { entityType: 'company', ...companyDetails })
  create(@CurrentActor() actor: Actor, @Body() dto: CreateCompanyDto): Promise<CompanyResponseDto> {
    return this.companies.create(dto, actor);
  }

  /** Board: any field. The company's CEO agent: branding fields only. */
  @Patch(':companyId')
  @Authorize({ callers: ['board', 'agent'] })
  @LogActivity('company.updated', { entityType: 'company', ...companyDetails })
  update(@CurrentActor() actor: Actor, @Param('companyId') companyId: string, @Body() dto: UpdateCompanyDto): Promise<CompanyResponseDto> {
    return this.companies.update(actor, companyId, dto);
  }

  /** Board, or the CEO agent of the company. `logoAssetId` of another company: 422. */
  @Patch(':companyId/branding')
  @Authorize({ callers: ['board', 'agent'] })
  @LogActivity('company.branding_updated', { entityType: 'company', ...companyDetails })
  branding(@CurrentActor() actor: Actor, @Param('companyId') companyId: string, @Body() dto: BrandingDto): Promise<CompanyResponseDto> {
    return this.companies.updateBranding(actor, companyId, dto);
  }

  /** Stores a logo image (PNG, JPEG, GIF, WebP or sanitised SVG); does not attach it. */
  @Post(':companyId/logo')
  @HttpCode(201)
  @Authorize({ callers: ['board', 'agent'] })
  @UseInterceptors(SingleFileUploadInterceptor)
  @ApiConsumes('multipart/form-data')
  @ApiBody({ schema: { type: 'object', required: ['file'], properties: { file: { type: 'string', format: 'binary' } } } })
  @ApiCreatedResponse({ type: AssetResponseDto })
  @LogActivity('company.logo_uploaded', {
    entityType: 'asset',
    entityId: (c) => c.result.assetId as string,
    details: (c) => ({ contentType: c.result.contentType, byteSize: c.result.byteSize }),
  })
  uploadLogo(@CurrentActor() actor: Actor, @Param('companyId') companyId: string, @UploadedFile() file: File): Promise<AssetResponseDto> {
    return this.companies.uploadLogo(actor, companyId, file);
  }

  /** Status becomes `archived`; active agents are paused with reason `company_archived`, their work cancelled. */
  @Post(':companyId/archive')
  @HttpCode(200)
  @Authorize({ callers: ['board'] })
  @LogActivity('company.archived', { entityType: 'company', ...companyDetails, details: () => ({}) })
  archive(@Param('companyId') companyId: string): Promise<CompanyResponseDto> {
    return this.companies.archive(companyId);
  }

  /** Destructive; refused (403 `company_deletion_disabled`) unless SERVICE_ENABLE_COMPANY_DELETION=true. Returns the deleted row. */
  @Delete(':companyId')
  @NoActivity("the company's activity log is deleted with the company")
  @Authorize({ callers: ['board'] })
  remove(@Param('companyId') companyId: string): Promise<CompanyResponseDto> {
    return this.companies.remove(companyId);
  }
}
