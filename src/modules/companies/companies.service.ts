import { Injectable } from '@nestjs/common';
import type { Actor } from '../../common/auth/actor';
import { AuthRegistry } from '../../common/auth/auth-registry';
import { CompanyAccessService } from '../../common/auth/company-access.service';
import { DomainError, forbidden, notFound, unprocessable } from '../../common/errors/domain-error';
import { WorkCancellation } from '../../common/events/work-cancellation';
import { contentTypeAllowed, UploadedFile } from '../../common/http/file-upload';
import { sanitizeSvg } from '../../common/http/svg-sanitizer';
import { isUuid } from '../../common/http/uuid';
import { AppConfig } from '../../config/app-config';
import { Db } from '../../database/db.service';
import { BudgetSyncService } from '../budgets/budget-sync.service';
import { AssetEntity } from '../storage/asset.entity';
import { AssetsService } from '../storage/assets.service';
import { StorageService } from '../storage/storage.service';
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
    private readonly config: AppConfig,
    private readonly access: CompanyAccessService,
    private readonly budgets: BudgetSyncService,
    private readonly assets: AssetsService,
    private readonly storage: StorageService,
    private readonly cancellation: WorkCancellation,
    private readonly registry: AuthRegistry,
  ) {}

  private get repo() {
    return this.db.repo(CompanyEntity);
  }

  async list(actor: Actor, includeArchived: boolean): Promise<CompanyResponseDto[]> {
    const ids = await this.access.accessibleCompanyIds(actor);
    const qb = this.repo.createQueryBuilder('c').orderBy('c.created_at', 'ASC');
    if (!includeArchived) qb.andWhere(`c.status <> 'archived'`);
    if (ids) qb.andWhere('c.id = ANY(:ids)', { ids });
    return (await qb.getMany()).map(toCompanyResponse);
  }

  /** Agent (non-terminated) and issue counts per accessible company, keyed by company id. */
  async stats(actor: Actor): Promise<Record<string, CompanyStatsDto>> {
    const ids = await this.access.accessibleCompanyIds(actor);
    const rows = await this.db.query<{ id: string; agent_count: number; issue_count: number }>(
      `SELECT c.id,
              (SELECT count(*)::int FROM agents a WHERE a.company_id = c.id AND a.status <> 'terminated') AS agent_count,
              ${this.issueCountSql()} AS issue_count
         FROM companies c
        WHERE ($1::uuid[] IS NULL OR c.id = ANY($1::uuid[]))`,
      [ids ?? null],
    );
    return Object.fromEntries(rows.map((r) => [r.id, { agentCount: r.agent_count, issueCount: r.issue_count }]));
  }

  /** Issues of the company, hidden ones included. */
  private issueCountSql(): string {
    return `(SELECT count(*)::int FROM issues i WHERE i.company_id = c.id)`;
  }

  async getEntity(companyId: string): Promise<CompanyEntity> {
    const c = isUuid(companyId) ? await this.repo.findOne({ where: { id: companyId } }) : null;
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
    await this.db.query(`SELECT pg_advisory_xact_lock(hashtext('company_issue_prefix:' || $1))`, [base]);
    // the highest suffix in use for this base (BASE counts as 1): an index range scan on the prefix
    const [{ top }] = await this.db.query<{ top: number }>(
      `SELECT COALESCE(MAX(CASE WHEN issue_prefix = $1 THEN 1 ELSE substring(issue_prefix FROM $2::int)::int END), 0)::int AS top
         FROM companies WHERE issue_prefix LIKE $1 || '%' AND issue_prefix ~ ('^' || $1 || '[0-9]*$')`,
      [base, base.length + 1],
    );
    const [row] = await this.db.query<{ id: string }>(
      `INSERT INTO companies (name, description, issue_prefix, budget_monthly_cents, require_board_approval_for_new_agents, brand_color)
       VALUES ($1, $2, $3, $4, $5, $6) RETURNING id`,
      [
        dto.name.trim(),
        dto.description ?? null,
        top === 0 ? base : `${base}${top + 1}`,
        dto.budgetMonthlyCents ?? 0,
        dto.requireBoardApprovalForNewAgents ?? false,
        dto.brandColor ?? null,
      ],
    );
    return row.id;
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
          throw unprocessable('logoAssetId must reference an asset of this company', 'invalid_logo_asset', { field: 'logoAssetId' });
      }
      const previous = company.logoAssetId ? await this.assets.findInCompany(company.id, company.logoAssetId) : null;
      company.logoAssetId = dto.logoAssetId;
      await this.repo.save(company);
      if (previous) await this.assets.remove(previous);
    }
  }

  private async assertCeoAgent(actor: Actor, companyId: string): Promise<void> {
    if (actor.kind !== 'agent') return;
    const rows = await this.db.query(`SELECT 1 FROM agents WHERE id = $1 AND company_id = $2 AND role = 'ceo' AND status <> 'terminated'`, [
      actor.agentId,
      companyId,
    ]);
    if (!rows.length) throw forbidden('Only the board or the company CEO agent may change branding');
  }

  async uploadLogo(actor: Actor, companyId: string, file: UploadedFile): Promise<AssetResponseDto> {
    await this.getEntity(companyId);
    const contentType = (file.mimetype || '').split(';')[0].trim().toLowerCase();
    if (!contentTypeAllowed(contentType, LOGO_TYPES)) {
      throw new DomainError(415, 'unsupported_media_type', `Logo must be one of ${LOGO_TYPES.join(', ')}`);
    }
    let data = file.buffer;
    if (contentType === 'image/svg+xml') {
      const clean = sanitizeSvg(data.toString('utf8'));
      if (!clean) throw unprocessable('The SVG is empty or unsafe', 'unsafe_svg', { field: 'file' });
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
      await this.db.query(
        `UPDATE agents SET status = 'paused', pause_reason = 'company_archived', updated_at = now()
          WHERE company_id = $1 AND status IN ('active', 'idle', 'running', 'error')`,
        [companyId],
      );
      await this.cancellation.cancel({ companyId }, 'company_archived');
    }
    return this.get(companyId);
  }

  /** Hard delete with everything the company owns; only when SERVICE_ENABLE_COMPANY_DELETION is on. */
  async remove(companyId: string): Promise<CompanyResponseDto> {
    if (!this.config.enableCompanyDeletion) {
      throw new DomainError(
        403,
        'company_deletion_disabled',
        'Company deletion is disabled on this instance (set SERVICE_ENABLE_COMPANY_DELETION=true)',
      );
    }
    const company = await this.lockCompany(companyId);
    const before = toCompanyResponse(company);
    await this.cancellation.cancel({ companyId }, 'company_deleted');
    await this.repo.delete({ id: companyId });
    this.access.forget(companyId);
    this.db.afterCommit(() => this.storage.removeCompany(companyId));
    return before;
  }

  private async lockCompany(companyId: string): Promise<CompanyEntity> {
    const c = isUuid(companyId)
      ? await this.repo.createQueryBuilder('c').setLock('pessimistic_write').where('c.id = :id', { id: companyId }).getOne()
      : null;
    if (!c) throw notFound('Company');
    return c;
  }
}
