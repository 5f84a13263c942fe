import { Injectable } from '@nestjs/common';
import type { Readable } from 'node:stream';
import type { Actor } from '../../common/auth/actor';
import { CompanyAccessService } from '../../common/auth/company-access.service';
import { AgentLookup } from '../agents/agent-lookup.service';
import {
  ExportPreviewPageDto,
  ExportPreviewResponseDto,
  ExportRequestDto,
  ExportResponseDto,
  ImportApplyResponseDto,
  ImportPlanDto,
  ImportRequestDto,
  selectionOf,
} from './dto/portability.dto';
import { packageArchive } from './archive';
import { exportManifest, selectFiles } from './export-manifest';
import { exportFidelity } from './export-fidelity';
import { ExportFidelityDto } from './dto/fidelity.dto';
import { FidelityRepository } from './fidelity.repository';
import { PortabilityExportService } from './portability-export.service';
import { PortabilityImportService } from './portability-import.service';
import { portabilityError } from './portability.errors';

/** Who may do what with a company's package, and the shapes the routes answer. */
@Injectable()
export class PortabilityService {
  constructor(
    private readonly exporter: PortabilityExportService,
    private readonly importer: PortabilityImportService,
    private readonly access: CompanyAccessService,
    private readonly agents: AgentLookup,
    private readonly fidelity: FidelityRepository,
  ) {}

  /** Board, or the CEO agent of that company (the guard has checked company access). */
  async assertBoardOrCeo(actor: Actor, companyId: string): Promise<void> {
    if (actor.kind === 'board') return;
    const agent = await this.agents.inCompany(companyId, actor.agentId);
    if (!agent || agent.companyId !== companyId || agent.role !== 'ceo' || agent.status === 'terminated') {
      throw portabilityError('portability_forbidden', 'Only the board or the CEO agent of this company may do this');
    }
  }

  async exportJson(companyId: string, body: ExportRequestDto): Promise<ExportResponseDto> {
    const sel = selectionOf(body);
    const r = await this.exporter.build(companyId, sel);
    return {
      rootPath: r.pkg.company.slug,
      manifest: exportManifest(r, sel),
      files: selectFiles(r.files, body.selectedFiles),
      warnings: r.warnings,
    };
  }

  /** The board UI's download (`X-Paperclip-Route`): the package as JSON, which the UI zips itself. Board or the CEO agent. */
  async exportForBoardUi(actor: Actor, companyId: string, body: ExportRequestDto): Promise<ExportResponseDto> {
    await this.assertBoardOrCeo(actor, companyId);
    return this.exportJson(companyId, body);
  }

  /** `withContents`: the board UI's preview, files keyed by path with their text (and the size list as `fileInventory`). */
  async exportPreview(
    actor: Actor,
    companyId: string,
    body: ExportRequestDto,
    withContents = false,
  ): Promise<ExportPreviewResponseDto | ExportPreviewPageDto> {
    await this.assertBoardOrCeo(actor, companyId);
    const sel = selectionOf(body);
    const r = await this.exporter.build(companyId, sel);
    const selected = selectFiles(r.files, body.selectedFiles);
    const files = Object.entries(selected)
      .map(([path, content]) => ({ path, bytes: Buffer.byteLength(content, 'utf8') }))
      .sort((a, b) => a.path.localeCompare(b.path));
    const common = {
      rootPath: r.pkg.company.slug,
      manifest: exportManifest(r, sel),
      totalBytes: files.reduce((n, f) => n + f.bytes, 0),
      warnings: r.warnings,
    };
    return withContents ? { ...common, files: selected, fileInventory: files } : { ...common, files };
  }

  async exportArchive(
    actor: Actor,
    companyId: string,
    body: ExportRequestDto,
  ): Promise<{ filename: string; stream: Readable; warnings: string[] }> {
    await this.assertBoardOrCeo(actor, companyId);
    const r = await this.exporter.build(companyId, selectionOf(body));
    const root = r.pkg.company.slug;
    return { filename: `${root}.tar.gz`, stream: packageArchive(root, selectFiles(r.files, body.selectedFiles)), warnings: r.warnings };
  }

  /** What an export keeps and drops, on the company's records now. Board or the CEO agent. */
  async exportFidelity(actor: Actor, companyId: string): Promise<ExportFidelityDto> {
    await this.assertBoardOrCeo(actor, companyId);
    return exportFidelity(companyId, await this.fidelity.counts(companyId));
  }

  /** POST companies/import/preview (board): into a new company, or an existing one the caller can reach. */
  async boardPreview(actor: Actor, body: ImportRequestDto): Promise<ImportPlanDto> {
    return this.importer.preview(body, await this.boardTarget(actor, body));
  }

  /** POST companies/import (board): applies what boardPreview shows. */
  async boardApply(actor: Actor, body: ImportRequestDto): Promise<ImportApplyResponseDto> {
    return this.importer.apply(actor, body, await this.boardTarget(actor, body));
  }

  async companyPreview(actor: Actor, companyId: string, body: ImportRequestDto): Promise<ImportPlanDto> {
    await this.assertCompanyScoped(actor, companyId, body);
    return this.importer.preview(body, companyId);
  }

  async companyApply(actor: Actor, companyId: string, body: ImportRequestDto): Promise<ImportApplyResponseDto> {
    await this.assertCompanyScoped(actor, companyId, body);
    return this.importer.apply(actor, body, companyId);
  }

  private async boardTarget(actor: Actor, body: ImportRequestDto): Promise<string | null> {
    const mode = body.target?.mode ?? 'new_company';
    if (mode === 'new_company') return null;
    const companyId = body.target?.companyId;
    if (!companyId)
      throw portabilityError('import_not_allowed', 'target.companyId is required for mode existing_company', { field: 'target.companyId' });
    await this.access.assertCompanyAccess(actor, companyId);
    return companyId;
  }

  private async assertCompanyScoped(actor: Actor, companyId: string, body: ImportRequestDto): Promise<void> {
    await this.assertBoardOrCeo(actor, companyId);
    if (body.collisionStrategy === 'replace') {
      throw portabilityError('import_not_allowed', 'The collision strategy replace is only available on the board-level import routes', {
        field: 'collisionStrategy',
      });
    }
    const t = body.target;
    if (t && (t.mode !== 'existing_company' || (t.companyId !== undefined && t.companyId !== companyId))) {
      throw portabilityError('import_not_allowed', 'Company-scoped imports only target the route company (mode existing_company)', {
        field: 'target',
      });
    }
  }
}
