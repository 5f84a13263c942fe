import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsIn,
  IsOptional,
  IsString,
  IsUUID,
  Matches,
  MaxLength,
  MinLength,
  ValidateIf,
} from 'class-validator';
import { RefersTo } from '../../../common/references/refers-to.decorator';

/** POST /companies/{companyId}/skills: an empty managed skill (key `company/<companyId>/<slug>`). */
export class CreateSkillDto {
  /** display name; the slug is derived from it unless given */
  @IsString() @MinLength(1) @MaxLength(200) name: string;
  /** kebab-case; derived from the name when omitted */
  @IsOptional()
  @IsString()
  @Matches(/^[a-z0-9]+(-[a-z0-9]+)*$/, { message: 'slug must be kebab-case (a-z, 0-9, single hyphens)' })
  @MaxLength(80)
  slug?: string;
  @IsOptional() @IsString() @MaxLength(2000) description?: string;
  /** SKILL.md body (markdown). Frontmatter in it is kept; name and description are filled in when absent. */
  @IsOptional() @IsString() @MaxLength(4 * 1024 * 1024) markdown?: string;
}

/** PATCH /companies/{companyId}/skills/{skillId}/files: write one file (created when absent). */
export class UpdateSkillFileDto {
  /** `SKILL.md` or a path under `references/`, `scripts/` or `assets/` */
  @IsString() @MinLength(1) @MaxLength(512) path: string;
  /** the whole new text of the file */
  @IsString() @MaxLength(4 * 1024 * 1024) content: string;
}

export class SkillFileQueryDto {
  /** default `SKILL.md` */
  @IsOptional() @IsString() @MaxLength(512) path?: string;
}

export class ImportSkillsDto {
  /**
   * A GitHub URL (optionally `tree/<ref>/<path>` or `blob/<ref>/<path>`), `owner/repo`,
   * `owner/repo/skill`, a skills-index URL or install command, an http(s) URL to a SKILL.md, or an
   * absolute local path to a SKILL.md, a folder with one, or a folder with many. URLs are fetched
   * through the outbound guard: loopback, link-local (169.254.169.254), private, CGNAT,
   * unique-local, multicast and unspecified destinations are refused after DNS and on every
   * redirect, in every deployment mode (422 `url_not_allowed` with `reason`), unless
   * SERVICE_OUTBOUND_ALLOW names them. Local paths must lie under SERVICE_WORKSPACE_ROOTS, outside
   * the service's data and key files, and (service running as root) be readable by other users
   * (422 `path_not_allowed` with `reason`).
   */
  @IsString() @MinLength(1) @MaxLength(2000) source: string;
}

export class ScanProjectsDto {
  @RefersTo('project') @IsOptional() @IsArray() @ArrayMaxSize(500) @IsUUID('all', { each: true }) projectIds?: string[];
  @RefersTo('workspace') @IsOptional() @IsArray() @ArrayMaxSize(500) @IsUUID('all', { each: true }) workspaceIds?: string[];
}

export class InstallCatalogDto {
  /** catalog id, key or unique slug */
  @IsString() @MinLength(1) @MaxLength(300) catalogSkillId: string;
  /** slug override for the company copy; null or omitted keeps the catalog slug */
  @IsOptional()
  @ValidateIf((_o, v) => v !== null)
  @IsString()
  @Matches(/^[a-z0-9]+(-[a-z0-9]+)*$/, { message: 'slug must be kebab-case' })
  @MaxLength(80)
  slug?: string | null;
  /** overwrite a locally modified copy */
  @IsOptional() @IsBoolean() force?: boolean;
}

export class ForceDto {
  @IsOptional() @IsBoolean() force?: boolean;
}

export class CatalogQueryDto {
  @IsOptional() @IsIn(['bundled', 'optional']) kind?: 'bundled' | 'optional';
  @IsOptional() @IsString() @MaxLength(100) category?: string;
  @IsOptional() @IsString() @MaxLength(200) q?: string;
}

export class SyncAgentSkillsDto {
  /** skill ids, canonical keys, or slugs that exactly one company skill has; the list replaces the agent's set */
  @IsArray() @ArrayMaxSize(500) @IsString({ each: true }) @MaxLength(300, { each: true }) desiredSkills: string[];
}

export class SkillInventoryEntryDto {
  @ApiProperty() path: string;
  @ApiProperty({ enum: ['skill', 'reference', 'script', 'asset'] }) kind: string;
  @ApiProperty() sizeBytes: number;
  @ApiProperty() sha256: string;
}

export class SkillResponseDto {
  @ApiProperty() id: string;
  @ApiProperty() companyId: string;
  /** canonical key */
  /** the skills folder it is filed in (see /companies/{companyId}/folders?kind=skill), null when unfiled */
  @ApiProperty({ nullable: true, type: String, format: 'uuid' }) folderId: string | null;
  /** the list only: that folder's path (names joined by `/`) */
  @ApiPropertyOptional({ nullable: true, type: String }) folderPath?: string | null;
  @ApiProperty() key: string;
  @ApiProperty() slug: string;
  @ApiProperty() name: string;
  @ApiProperty({ nullable: true, type: String }) description: string | null;
  @ApiProperty({ enum: ['catalog', 'github', 'skills_sh', 'url', 'local_path', 'managed_local'] }) sourceType: string;
  @ApiProperty({ nullable: true, type: String }) sourceLocator: string | null;
  /** pinned commit (GitHub) or null */
  @ApiProperty({ nullable: true, type: String }) sourceRef: string | null;
  @ApiProperty({ enum: ['markdown_only', 'assets', 'scripts_executables'] }) trustLevel: string;
  @ApiProperty() compatibility: string;
  @ApiProperty({ type: [SkillInventoryEntryDto] }) fileInventory: SkillInventoryEntryDto[];
  @ApiProperty() metadata: Record<string, unknown>;
  /** byte-exact hash of the installed files */
  @ApiProperty() contentHash: string;
  @ApiProperty() bundled: boolean;
  @ApiProperty() editable: boolean;
  @ApiProperty({ nullable: true, type: String }) editableReason: string | null;
  @ApiProperty() sourceLabel: string;
  @ApiProperty() sourceBadge: string;
  @ApiProperty({ nullable: true, type: String }) sourcePath: string | null;
  @ApiProperty({ nullable: true, type: String }) catalogKind: string | null;
  @ApiProperty({ nullable: true, type: String }) originHash: string | null;
  /** last audit verdict (on import, update and the audit route) */
  @ApiProperty({ nullable: true, type: String }) auditVerdict: string | null;
  /** metadata `categories`, else the catalog category, else [] */
  @ApiProperty({ type: [String] }) categories: string[];
  /** presentation strings from the skill's metadata (SKILL.md frontmatter `metadata`), else null */
  @ApiProperty({ nullable: true, type: String }) iconUrl: string | null;
  @ApiProperty({ nullable: true, type: String }) color: string | null;
  @ApiProperty({ nullable: true, type: String }) tagline: string | null;
  @ApiProperty({ nullable: true, type: String }) authorName: string | null;
  @ApiProperty({ nullable: true, type: String }) homepageUrl: string | null;
  /** live agents that have the skill in their desired set */
  @ApiProperty() attachedAgentCount: number;
  @ApiProperty() createdAt: string;
  @ApiProperty() updatedAt: string;
}

export class SkillUsageDto {
  @ApiProperty() id: string;
  @ApiProperty() name: string;
  @ApiProperty() urlKey: string;
  @ApiProperty() adapterType: string;
  @ApiProperty() status: string;
}

export class SkillDetailResponseDto extends SkillResponseDto {
  /** agents that use the skill */
  @ApiProperty({ type: [SkillUsageDto] }) usedByAgents: SkillUsageDto[];
  @ApiPropertyOptional() audit?: Record<string, unknown> | null;
}

export class SkillFileResponseDto {
  @ApiProperty() skillId: string;
  @ApiProperty() path: string;
  @ApiProperty() kind: string;
  @ApiProperty() sizeBytes: number;
  @ApiProperty() sha256: string;
  @ApiProperty() content: string;
  @ApiProperty({ enum: ['markdown', 'text', 'code'] }) language: string;
  @ApiProperty() editable: boolean;
}

export class AuditResponseDto {
  @ApiProperty({ enum: ['pass', 'warning', 'fail'] }) verdict: string;
  @ApiProperty({ type: [String] }) codes: string[];
  @ApiProperty() findings: Array<Record<string, unknown>>;
  @ApiProperty() installedHash: string;
  @ApiProperty({ nullable: true, type: String }) originHash: string | null;
  @ApiProperty() scanVersion: string;
  @ApiProperty() auditedAt: string;
}
