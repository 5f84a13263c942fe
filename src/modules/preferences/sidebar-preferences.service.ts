import { Injectable } from '@nestjs/common';
import type { Actor } from '../../common/auth/actor';
import { isoRequired } from '../../database/row-mapping';
import { boardUserId } from './board-user';
import {
  CompanySidebarPreferencesDto,
  CompanySidebarPreferencesResponseDto,
  GlobalSidebarPreferencesDto,
  GlobalSidebarPreferencesResponseDto,
} from './dto/preferences.dto';
import { preferencesError } from './preferences.errors';
import { PreferencesRepository, SidebarPreferencesRecord } from './preferences.repository';

const ids = (v: unknown): string[] => (Array.isArray(v) ? (v as string[]) : []);

/** Sidebar preferences of the calling board user: one global document and one per company. PUT replaces a document. */
@Injectable()
export class SidebarPreferencesService {
  constructor(private readonly repo: PreferencesRepository) {}

  async getGlobal(actor: Actor): Promise<GlobalSidebarPreferencesResponseDto> {
    return this.globalResponse(await this.repo.globalSidebar(boardUserId(actor)));
  }

  async putGlobal(actor: Actor, dto: GlobalSidebarPreferencesDto): Promise<GlobalSidebarPreferencesResponseDto> {
    const preferences = { collapsed: dto.collapsed ?? false, companyOrder: [...new Set(dto.companyOrder ?? [])] };
    return this.globalResponse(await this.repo.putGlobalSidebar(boardUserId(actor), preferences));
  }

  async getCompany(actor: Actor, companyId: string): Promise<CompanySidebarPreferencesResponseDto> {
    return this.companyResponse(companyId, await this.repo.companySidebar(boardUserId(actor), companyId));
  }

  async putCompany(actor: Actor, companyId: string, dto: CompanySidebarPreferencesDto): Promise<CompanySidebarPreferencesResponseDto> {
    const preferences = {
      projectOrder: await this.ownIds(companyId, 'projects', 'projectOrder', dto.projectOrder ?? []),
      agentOrder: await this.ownIds(companyId, 'agents', 'agentOrder', dto.agentOrder ?? []),
      collapsedSections: [...new Set(dto.collapsedSections ?? [])],
    };
    return this.companyResponse(companyId, await this.repo.putCompanySidebar(boardUserId(actor), companyId, preferences));
  }

  /** Order lists may only name the company's own projects or agents. */
  private async ownIds(companyId: string, table: 'projects' | 'agents', field: string, requested: string[]): Promise<string[]> {
    const unique = [...new Set(requested)];
    if (!unique.length) return unique;
    const found = await this.repo.ownIds(companyId, table, unique);
    const foreign = unique.find((id) => !found.has(id));
    if (foreign) throw preferencesError('invalid_reference', `${field} names ${foreign}, which is not of this company`, { field });
    return unique;
  }

  private globalResponse(row: SidebarPreferencesRecord | undefined): GlobalSidebarPreferencesResponseDto {
    const p = row?.preferences ?? {};
    return {
      collapsed: p.collapsed === true,
      companyOrder: ids(p.companyOrder),
      updatedAt: row ? isoRequired(row.updatedAt) : null,
    };
  }

  private companyResponse(companyId: string, row: SidebarPreferencesRecord | undefined): CompanySidebarPreferencesResponseDto {
    const p = row?.preferences ?? {};
    return {
      companyId,
      projectOrder: ids(p.projectOrder),
      agentOrder: ids(p.agentOrder),
      collapsedSections: ids(p.collapsedSections),
      updatedAt: row ? isoRequired(row.updatedAt) : null,
    };
  }
}
