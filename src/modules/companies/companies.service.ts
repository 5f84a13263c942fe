import { Injectable } from '@nestjs/common';
import type { Actor } from '../../common/auth/actor';
import { AuthRegistry } from '../../common/auth/auth-registry.port';
import { CompanyAccessService } from '../../common/auth/company-access.service';
import { forbidden, notFound } from '../../common/errors/domain-error';
import { WorkCancellation } from '../../common/events/work-cancellation.port';
import { contentTypeAllowed, UploadedFile } from '../../common/http/file-upload';
import { sanitizeSvg } from '../../common/http/svg-sanitizer';
import { isUuid } from '../../common/http/uuid';
import { AppConfig } from '../../config/app-config';
import { Db } from '../../database/db.service';
import { AgentScopesRepository } from '../agents/agent-scopes.repository';
import { BudgetSyncService } from '../budgets/budget-sync.service';
import { AssetEntity } from '../storage/asset.entity';
import { AssetsService } from '../storage/assets.service';
import { StorageService } from '../storage/storage.service';
import { companyError } from './companies.errors';
import { CompaniesRepository } from './companies.repository';
import { CompanyEntity } from './company.entity';
import { AssetResponseDto, BrandingDto, CompanyResponseDto, CompanyStatsDto, CreateCompanyDto, UpdateCompanyDto } from './dto/company.dto';

const LOGO_TYPES = ['image/png', 'image/jpeg', 'image/gif', 'image/webp', 'image/svg+xml'];
const BRANDING_FIELDS = ['name', 'description', 'brandColor', 'logoAssetId'] as const;

export function toCompanyResponse(c: CompanyEntity): CompanyResponseDto {
  return {
    id: c.id,
    name: c.name,
    description: c.description,
    status: c.status,
    pauseReason: c.pauseReason,
    issuePrefix: c.issuePrefix,
    issueCounter: c.issueCounter,
    budgetMonthlyCents: c.budgetMonthlyCents,
    spentMonthlyCents: c.spentMonthlyCents,
    requireBoardApprovalForNewAgents: c.requireBoardApprovalForNewAgents,
    brandColor: c.brandColor,
    logoAssetId: c.logoAssetId,
    logoUrl: c.logoAssetId ? `/api/assets/${c.logoAssetId}/content` : null,
    // the consent fields appear once set
    ...(c.feedbackSharingEnabled !== null && c.feedbackSharingEnabled !== undefined
      ? {
          feedbackSharingEnabled: c.feedbackSharingEnabled,
          feedbackSharingConsentedAt: c.feedbackSharingConsentedAt?.toISOString() ?? null,
          feedbackSharingConsentedByUserId: c.feedbackSharingConsentedByUserId,
        }
      : {}),
    createdAt: c.createdAt.toISOString(),
    updatedAt: c.updatedAt.toISOString(),
  };
}

export function toAssetResponse(a: AssetEntity): AssetResponseDto {
  return {
    assetId: a.id,
    companyId: a.companyId,
    contentType: a.contentType,
    byteSize: a.byteSize,
    sha256: a.sha256,
    originalFilename: a.originalFilename,
    contentPath: `/api/assets/${a.id}/content`,
    createdAt: a.createdAt.toISOString(),
  };
}

/** Issue prefix base: the first three letters of the name, upper-cased (`CO` when it has none). */
export function prefixBase(name: string): string {
  const letters = name
    .normalize('NFKD')
    .replace(/[^A-Za-z]/g, '')
    .toUpperCase();
  return letters.slice(0, 3) || 'CO';
}

@Injectable()
export class CompaniesService {
  constructor(
    private readonly db: Db,
    private readonly repo: CompaniesRepository,
    private readonly config: AppConfig,
    private readonly access: CompanyAccessService,
    private readonly budgets: BudgetSyncService,
    private readonly assets: AssetsService,
    private readonly storage: StorageService,
    private readonly cancellation: WorkCancellation,
    private readonly registry: AuthRegistry,
    private readonly agents: AgentScopesRepository,
  ) {}

  async list(actor: Actor, includeArchived: boolean): Promise<CompanyResponseDto[]> {
    const ids = await this.access.accessibleCompanyIds(actor);
    return (await this.repo.list(includeArchived, ids)).map(toCompanyResponse);
  }

  /** Agent (non-terminated) and issue counts per accessible company, keyed by company id. */
  async stats(actor: Actor): Promise<Record<string, CompanyStatsDto>> {
    const ids = await this.access.accessibleCompanyIds(actor);
    const rows = await this.repo.counts(ids ?? null);
    return Object.fromEntries(rows.map((r) => [r.id, { agentCount: r.agentCount, issueCount: r.issueCount }]));
  }

  async getEntity(companyId: string): Promise<CompanyEntity> {
    const c = isUuid(companyId) ? await this.repo.findById(companyId) : null;
    if (!c) throw notFound('Company');
    return c;
  }

  async get(companyId: string): Promise<CompanyResponseDto> {
    return toCompanyResponse(await this.getEntity(companyId));
  }

  async create(dto: CreateCompanyDto, creator?: Actor): Promise<CompanyResponseDto> {
    const id = await this.insertWithUniquePrefix(dto);
    if (creator?.kind === 'board' && creator.source !== 'local_implicit') await this.registry.membershipChecker?.addCreator?.(creator, id);
    const budget = dto.budgetMonthlyCents ?? 0;
    if (budget > 0) await this.budgets.syncMonthlyPolicy(id, 'company', id, budget);
    return this.get(id);
  }

  /** The base prefix, then BASE2, BASE3, … after the highest in use; the unique index backs it up. */
  private async insertWithUniquePrefix(dto: CreateCompanyDto): Promise<string> {
    const base = prefixBase(dto.name);
    // creates of one base take turns (until commit); other bases are not held up
    await this.repo.lockIssuePrefix(base);
    // the highest suffix in use for this base (BASE counts as 1): an index range scan on the prefix
    const top = await this.repo.topPrefixSuffix(base);
    return this.repo.insert({
      name: dto.name.trim(),
      description: dto.description ?? null,
      issuePrefix: top === 0 ? base : `${base}${top + 1}`,
      budgetMonthlyCents: dto.budgetMonthlyCents ?? 0,
      requireBoardApprovalForNewAgents: dto.requireBoardApprovalForNewAgents ?? false,
      brandColor: dto.brandColor ?? null,
    });
  }

  /** Board: any field. The company's CEO agent: branding fields only. */
  async update(actor: Actor, companyId: string, dto: UpdateCompanyDto): Promise<CompanyResponseDto> {
    const company = await this.lockCompany(companyId);
    if (actor.kind === 'agent') {
      const extra = Object.keys(dto).filter((k) => !(BRANDING_FIELDS as readonly string[]).includes(k));
      if (extra.length) throw forbidden(`Agents may only change branding fields; not ${extra.join(', ')}`);
      await this.assertCeoAgent(actor, companyId);
    }
    await this.applyBranding(company, dto);
    if (dto.requireBoardApprovalForNewAgents !== undefined) company.requireBoardApprovalForNewAgents = dto.requireBoardApprovalForNewAgents;
    if (
      dto.feedbackSharingEnabled !== undefined &&
      actor.kind === 'board' &&
      dto.feedbackSharingEnabled !== company.feedbackSharingEnabled
    ) {
      // a new consent starts now; withdrawing it clears it (traces recorded before a consent never become shared)
      company.feedbackSharingEnabled = dto.feedbackSharingEnabled;
      company.feedbackSharingConsentedAt = dto.feedbackSharingEnabled ? new Date() : null;
      company.feedbackSharingConsentedByUserId = dto.feedbackSharingEnabled ? actor.userId : null;
    }
    if (dto.budgetMonthlyCents !== undefined && dto.budgetMonthlyCents !== company.budgetMonthlyCents) {
      company.budgetMonthlyCents = dto.budgetMonthlyCents;
      await this.budgets.syncMonthlyPolicy(company.id, 'company', company.id, dto.budgetMonthlyCents);
    }
    if (dto.status !== undefined && dto.status !== company.status) {
      if (dto.status === 'archived') return this.archive(companyId);
      company.status = dto.status;
      company.pauseReason = dto.status === 'paused' ? 'manual' : null;
    }
    await this.repo.save(company);
    return this.get(companyId);
  }

  async updateBranding(actor: Actor, companyId: string, dto: BrandingDto): Promise<CompanyResponseDto> {
    const company = await this.lockCompany(companyId);
    if (actor.kind === 'agent') await this.assertCeoAgent(actor, companyId);
    await this.applyBranding(company, dto);
    await this.repo.save(company);
    return this.get(companyId);
  }

  /** Replacing or clearing the logo removes the previous asset record (and its bytes after commit). */
  private async applyBranding(company: CompanyEntity, dto: BrandingDto): Promise<void> {
    if (dto.name !== undefined) company.name = dto.name.trim();
    if (dto.description !== undefined) company.description = dto.description;
    if (dto.brandColor !== undefined) company.brandColor = dto.brandColor ? dto.brandColor.toLowerCase() : null;
    if (dto.logoAssetId !== undefined && dto.logoAssetId !== company.logoAssetId) {
      if (dto.logoAssetId !== null) {
        const asset = await this.assets.findInCompany(company.id, dto.logoAssetId);
        if (!asset)
          throw companyError('invalid_logo_asset', 'logoAssetId must reference an asset of this company', { field: 'logoAssetId' });
      }
      const previous = company.logoAssetId ? await this.assets.findInCompany(company.id, company.logoAssetId) : null;
      company.logoAssetId = dto.logoAssetId;
      await this.repo.save(company);
      if (previous) await this.assets.remove(previous);
    }
  }

  private async assertCeoAgent(actor: Actor, companyId: string): Promise<void> {
    if (actor.kind !== 'agent') return;
    if (!(await this.agents.isLiveCeo(companyId, actor.agentId)))
      throw forbidden('Only the board or the company CEO agent may change branding');
  }

  async uploadLogo(actor: Actor, companyId: string, file: UploadedFile): Promise<AssetResponseDto> {
    await this.getEntity(companyId);
    const contentType = (file.mimetype || '').split(';')[0].trim().toLowerCase();
    if (!contentTypeAllowed(contentType, LOGO_TYPES)) {
      throw companyError('unsupported_media_type', `Logo must be one of ${LOGO_TYPES.join(', ')}`);
    }
    let data = file.buffer;
    if (contentType === 'image/svg+xml') {
      const clean = sanitizeSvg(data.toString('utf8'));
      if (!clean) throw companyError('unsafe_svg', 'The SVG is empty or unsafe', { field: 'file' });
      data = Buffer.from(clean, 'utf8');
    }
    const asset = await this.assets.create({ companyId, kind: 'logo', contentType, data, originalFilename: file.originalname, actor });
    return toAssetResponse(asset);
  }

  /** Status `archived` (left out of default listings); active agents are paused with reason `company_archived`. */
  async archive(companyId: string): Promise<CompanyResponseDto> {
    const company = await this.lockCompany(companyId);
    if (company.status !== 'archived') {
      company.status = 'archived';
      company.pauseReason = null;
      await this.repo.save(company);
      await this.agents.pauseAll(companyId, 'company_archived');
      await this.cancellation.cancel({ companyId }, 'company_archived');
    }
    return this.get(companyId);
  }

  /** Hard delete with everything the company owns; only when SERVICE_ENABLE_COMPANY_DELETION is on. */
  async remove(companyId: string): Promise<CompanyResponseDto> {
    if (!this.config.enableCompanyDeletion) {
      throw companyError(
        'company_deletion_disabled',
        'Company deletion is disabled on this instance (set SERVICE_ENABLE_COMPANY_DELETION=true)',
      );
    }
    const company = await this.lockCompany(companyId);
    const before = toCompanyResponse(company);
    await this.cancellation.cancel({ companyId }, 'company_deleted');
    await this.repo.delete(companyId);
    this.access.forget(companyId);
    this.db.afterCommit(() => this.storage.removeCompany(companyId));
    return before;
  }

  private async lockCompany(companyId: string): Promise<CompanyEntity> {
    const c = isUuid(companyId) ? await this.repo.lockById(companyId) : null;
    if (!c) throw notFound('Company');
    return c;
  }
}
