import { Injectable } from '@nestjs/common';
import type { Actor } from '../../common/auth/actor';
import { unprocessable } from '../../common/errors/domain-error';
import { Db } from '../../database/db.service';
import { boardUserId } from './board-user';
import {
  CompanySidebarPreferencesDto,
  CompanySidebarPreferencesResponseDto,
  GlobalSidebarPreferencesDto,
  GlobalSidebarPreferencesResponseDto,
} from './dto/preferences.dto';

interface StoredRow {
  preferences: Record<string, unknown>;
  updated_at: Date;
}

const ids = (v: unknown): string[] => (Array.isArray(v) ? (v as string[]) : []);

/** Sidebar preferences of the calling board user: one global document and one per company. PUT replaces a document. */
@Injectable()
export class SidebarPreferencesService {
  constructor(private readonly db: Db) {}

  async getGlobal(actor: Actor): Promise<GlobalSidebarPreferencesResponseDto> {
    const [row] = await this.db.query<StoredRow>(
      `SELECT preferences, updated_at FROM sidebar_preferences WHERE user_id = $1 AND company_id IS NULL`,
      [boardUserId(actor)],
    );
    return this.globalResponse(row);
  }

  async putGlobal(actor: Actor, dto: GlobalSidebarPreferencesDto): Promise<GlobalSidebarPreferencesResponseDto> {
    const preferences = { collapsed: dto.collapsed ?? false, companyOrder: [...new Set(dto.companyOrder ?? [])] };
    const [row] = await this.db.query<StoredRow>(
      `INSERT INTO sidebar_preferences (user_id, company_id, preferences) VALUES ($1, NULL, $2)
       ON CONFLICT (user_id) WHERE company_id IS NULL DO UPDATE SET preferences = EXCLUDED.preferences, updated_at = now()
       RETURNING preferences, updated_at`,
      [boardUserId(actor), JSON.stringify(preferences)],
    );
    return this.globalResponse(row);
  }

  async getCompany(actor: Actor, companyId: string): Promise<CompanySidebarPreferencesResponseDto> {
    const [row] = await this.db.query<StoredRow>(
      `SELECT preferences, updated_at FROM sidebar_preferences WHERE user_id = $1 AND company_id = $2`,
      [boardUserId(actor), companyId],
    );
    return this.companyResponse(companyId, row);
  }

  async putCompany(actor: Actor, companyId: string, dto: CompanySidebarPreferencesDto): Promise<CompanySidebarPreferencesResponseDto> {
    const preferences = {
      projectOrder: await this.ownIds(companyId, 'projects', 'projectOrder', dto.projectOrder ?? []),
      agentOrder: await this.ownIds(companyId, 'agents', 'agentOrder', dto.agentOrder ?? []),
      collapsedSections: [...new Set(dto.collapsedSections ?? [])],
    };
    const [row] = await this.db.query<StoredRow>(
      `INSERT INTO sidebar_preferences (user_id, company_id, preferences) VALUES ($1, $2, $3)
       ON CONFLICT (user_id, company_id) WHERE company_id IS NOT NULL DO UPDATE SET preferences = EXCLUDED.preferences, updated_at = now()
       RETURNING preferences, updated_at`,
      [boardUserId(actor), companyId, JSON.stringify(preferences)],
    );
    return this.companyResponse(companyId, row);
  }

  /** Order lists may only name the company's own projects or agents. */
  private async ownIds(companyId: string, table: 'projects' | 'agents', field: string, requested: string[]): Promise<string[]> {
    const unique = [...new Set(requested)];
    if (!unique.length) return unique;
    const rows = await this.db.query<{ id: string }>(`SELECT id FROM ${table} WHERE company_id = $1 AND id = ANY($2::uuid[])`, [
      companyId,
      unique,
    ]);
    const found = new Set(rows.map((r) => r.id));
    const foreign = unique.find((id) => !found.has(id));
    if (foreign) throw unprocessable(`${field} names ${foreign}, which is not of this company`, 'invalid_reference', { field });
    return unique;
  }

  private globalResponse(row: StoredRow | undefined): GlobalSidebarPreferencesResponseDto {
    const p = row?.preferences ?? {};
    return {
      collapsed: p.collapsed === true,
      companyOrder: ids(p.companyOrder),
      updatedAt: row ? new Date(row.updated_at).toISOString() : null,
    };
  }

  private companyResponse(companyId: string, row: StoredRow | undefined): CompanySidebarPreferencesResponseDto {
    const p = row?.preferences ?? {};
    return {
      companyId,
      projectOrder: ids(p.projectOrder),
      agentOrder: ids(p.agentOrder),
      collapsedSections: ids(p.collapsedSections),
      updatedAt: row ? new Date(row.updated_at).toISOString() : null,
    };
  }
}
