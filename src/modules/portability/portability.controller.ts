import { ApiDomainErrors } from '../../common/errors/api-domain-errors.decorator';
import { PORTABILITY_ERRORS } from './portability.errors';
import { Body, Controller, Get, HttpCode, Param, Post, StreamableFile } from '@nestjs/common';
import { ExportFidelityDto } from './dto/fidelity.dto';
import { ApiExtraModels, ApiOkResponse, ApiProduces, ApiTags } from '@nestjs/swagger';
import { ApiBoardUiPage, BoardUiPage } from '../../common/http/board-ui-page';
import { NoActivity } from '../../common/activity/log-activity.decorator';
import type { Actor } from '../../common/auth/actor';
import { Authorize } from '../../common/auth/authorize.decorator';
import { CurrentActor } from '../../common/auth/current-actor.decorator';
import {
  ExportPreviewPageDto,
  ExportPreviewResponseDto,
  ExportRequestDto,
  ExportResponseDto,
  ImportApplyResponseDto,
  ImportPlanDto,
  ImportRequestDto,
} from './dto/portability.dto';
import { PortabilityService } from './portability.service';

/**
 * Company packages (agentcompanies/v1 markdown with YAML frontmatter). Limits of an imported
 * package: 50,000 files, 1 MiB per file, 64 MiB in all (JSON body up to 96 MiB); beyond: 422.
 */
@ApiTags('portability')
@ApiDomainErrors(PORTABILITY_ERRORS)
@Controller()
export class PortabilityController {
  constructor(private readonly portability: PortabilityService) {}

  /** The company as a package: markdown files keyed by path. Any caller with company access. Never secret values, keys, runs, costs or activity. */
  @Post('companies/:companyId/export')
  @HttpCode(200)
  @NoActivity('read-only')
  @Authorize({ callers: ['board', 'agent'] })
  exportJson(@Param('companyId') companyId: string, @Body() body: ExportRequestDto): Promise<ExportResponseDto> {
    return this.portability.exportJson(companyId, body);
  }

  /**
   * What an export with these selections contains: manifest, file list with sizes, warnings. Board
   * or the company's CEO agent. The board UI (header `X-Paperclip-Route`) gets the files with their
   * text, keyed by path (ExportPreviewPageDto), to show them.
   */
  @Post('companies/:companyId/exports/preview')
  @HttpCode(200)
  @NoActivity('read-only')
  @Authorize({ callers: ['board', 'agent'] })
  @ApiBoardUiPage('ExportPreviewPageDto (files keyed by path, with their text)')
  @ApiExtraModels(ExportPreviewPageDto)
  exportPreview(
    @CurrentActor() actor: Actor,
    @Param('companyId') companyId: string,
    @Body() body: ExportRequestDto,
    @BoardUiPage() boardUi: boolean,
  ): Promise<ExportPreviewResponseDto | ExportPreviewPageDto> {
    return this.portability.exportPreview(actor, companyId, body, boardUi);
  }

  /**
   * The package as a downloadable `.tar.gz` (streamed; folder `<company-slug>/`). Board or the
   * company's CEO agent. The board UI (header `X-Paperclip-Route`), which zips the package itself,
   * gets it as JSON (ExportResponseDto, as `POST …/export`).
   */
  @Post('companies/:companyId/exports')
  @HttpCode(200)
  @NoActivity('read-only')
  @ApiProduces('application/gzip', 'application/json')
  @ApiOkResponse({ description: 'tar.gz of the package folder (the board UI: ExportResponseDto as JSON)' })
  @ApiBoardUiPage('ExportResponseDto as JSON')
  @Authorize({ callers: ['board', 'agent'] })
  async exportArchive(
    @CurrentActor() actor: Actor,
    @Param('companyId') companyId: string,
    @Body() body: ExportRequestDto,
    @BoardUiPage() boardUi: boolean,
  ): Promise<StreamableFile | ExportResponseDto> {
    if (boardUi) return this.portability.exportForBoardUi(actor, companyId, body);
    const { filename, stream } = await this.portability.exportArchive(actor, companyId, body);
    return new StreamableFile(stream, { type: 'application/gzip', disposition: `attachment; filename="${filename}"` });
  }

  /**
   * What an export of the company keeps and drops: the company's records counted by kind, each
   * kept kind with how the package carries it, each dropped kind with why, and a warning per
   * dropped kind the company has records of. Board or the company's CEO agent.
   */
  @Get('companies/:companyId/export/fidelity')
  @Authorize({ callers: ['board', 'agent'] })
  async exportFidelity(@CurrentActor() actor: Actor, @Param('companyId') companyId: string): Promise<ExportFidelityDto> {
    return this.portability.exportFidelity(actor, companyId);
  }

  /** Board only: what importing the package would do, into a new company (`target.mode` new_company, default) or an existing one. */
  @Post('companies/import/preview')
  @HttpCode(200)
  @NoActivity('read-only')
  @Authorize({ callers: ['board'] })
  boardPreview(@CurrentActor() actor: Actor, @Body() body: ImportRequestDto): Promise<ImportPlanDto> {
    return this.portability.boardPreview(actor, body);
  }

  /**
   * Board only: applies the import `companies/import/preview` shows (new or existing company; all
   * collision strategies including `replace`), in one transaction with its activity records.
   */
  @Post('companies/import')
  @HttpCode(201)
  @NoActivity('the service records company.imported and one record per entity')
  @Authorize({ callers: ['board'] })
  boardApply(@CurrentActor() actor: Actor, @Body() body: ImportRequestDto): Promise<ImportApplyResponseDto> {
    return this.portability.boardApply(actor, body);
  }

  /** Board or the company's CEO agent: what importing into this company would do. `replace` is refused (422). */
  @Post('companies/:companyId/imports/preview')
  @HttpCode(200)
  @NoActivity('read-only')
  @Authorize({ callers: ['board', 'agent'] })
  companyPreview(
    @CurrentActor() actor: Actor,
    @Param('companyId') companyId: string,
    @Body() body: ImportRequestDto,
  ): Promise<ImportPlanDto> {
    return this.portability.companyPreview(actor, companyId, body);
  }

  /** Board or the company's CEO agent: applies the previewed import into this company, all or nothing. `replace` is refused (422). */
  @Post('companies/:companyId/imports/apply')
  @HttpCode(200)
  @NoActivity('the service records company.imported and one record per entity')
  @Authorize({ callers: ['board', 'agent'] })
  companyApply(
    @CurrentActor() actor: Actor,
    @Param('companyId') companyId: string,
    @Body() body: ImportRequestDto,
  ): Promise<ImportApplyResponseDto> {
    return this.portability.companyApply(actor, companyId, body);
  }
}
