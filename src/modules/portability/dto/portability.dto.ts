import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsDefined,
  IsIn,
  IsNotEmpty,
  IsObject,
  IsOptional,
  IsString,
  IsUUID,
  MaxLength,
  ValidateNested,
} from 'class-validator';

/** What an export contains (omitted: everything but issues). */
export class ExportIncludeDto {
  /** accepted for the board UI: the company is always exported */
  @ApiPropertyOptional({ default: true }) @IsOptional() @IsBoolean() company?: boolean;
  /** accepted for the board UI: projects are always exported */
  @ApiPropertyOptional({ default: true }) @IsOptional() @IsBoolean() projects?: boolean;
  @ApiPropertyOptional({ default: true }) @IsOptional() @IsBoolean() agents?: boolean;
  @ApiPropertyOptional({ default: true }) @IsOptional() @IsBoolean() skills?: boolean;
  @ApiPropertyOptional({ default: true }) @IsOptional() @IsBoolean() routines?: boolean;
  /** issues (tasks) with their documents and comments; default false */
  @ApiPropertyOptional({ default: false }) @IsOptional() @IsBoolean() issues?: boolean;
}

/** Body of the export routes (all fields optional; `{}` exports the configuration). */
export class ExportRequestDto {
  @ApiPropertyOptional({ type: ExportIncludeDto }) @IsOptional() @ValidateNested() @Type(() => ExportIncludeDto) include?: ExportIncludeDto;
  /** only these files of the package (paths as in `files`); omitted: all */
  @IsOptional() @IsArray() @ArrayMaxSize(50_000) @IsString({ each: true }) @MaxLength(1000, { each: true }) selectedFiles?: string[];
}

export interface ExportSelectionDto {
  includeAgents?: boolean;
  includeSkills?: boolean;
  includeRoutines?: boolean;
  includeIssues?: boolean;
}

export const selectionOf = (dto: ExportRequestDto | undefined): ExportSelectionDto => ({
  includeAgents: dto?.include?.agents,
  includeSkills: dto?.include?.skills,
  includeRoutines: dto?.include?.routines,
  includeIssues: dto?.include?.issues ?? false,
});

export class SecretDeclarationDto {
  name: string;
  @ApiProperty({ nullable: true, type: String }) description: string | null;
}

export class PackageCompanyDto {
  slug: string;
  name: string;
  @ApiProperty({ nullable: true, type: String }) description: string | null;
}

export class PackageAgentDto {
  slug: string;
  name: string;
  /** its AGENTS.md */
  path: string;
  role: string;
  /** the slug of its manager, or null */
  @ApiProperty({ nullable: true, type: String }) reportsToSlug: string | null;
}

export class PackageProjectDto {
  slug: string;
  name: string;
  path: string;
  @ApiProperty({ nullable: true, type: String }) description: string | null;
}

export class PackageSkillDto {
  slug: string;
  /** the skill's canonical key in the exporting company */
  key: string;
  path: string;
}

/** A task (an exported issue) or a routine (`recurring: true`). */
export class PackageTaskDto {
  slug: string;
  title: string;
  /** its TASK.md */
  path: string;
  recurring: boolean;
  /** the issue's identifier in the exporting company (tasks only) */
  @ApiProperty({ nullable: true, type: String }) identifier: string | null;
  @ApiProperty({ nullable: true, type: String }) projectSlug: string | null;
  @ApiProperty({ nullable: true, type: String }) assigneeAgentSlug: string | null;
  status: string;
}

/** What the export was asked to include. */
export class PackageIncludesDto {
  company: boolean;
  agents: boolean;
  projects: boolean;
  skills: boolean;
  routines: boolean;
  issues: boolean;
}

export class PackageManifestDto {
  @ApiProperty({ example: 'agentcompanies/v1' }) schema: string;
  formatVersion: number;
  @ApiProperty({ type: () => PackageCompanyDto }) company: PackageCompanyDto;
  @ApiProperty({ type: () => [PackageAgentDto] }) agents: PackageAgentDto[];
  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'integer' },
    example: { agents: 1, projects: 0, goals: 0, skills: 0, routines: 0, issues: 0, labels: 0, budgetPolicies: 0 },
  })
  counts: Record<string, number>;
  /** secrets the package declares by name (never their values) */
  @ApiProperty({ type: () => [SecretDeclarationDto] }) requiredSecrets: SecretDeclarationDto[];
  @ApiProperty({ type: () => PackageIncludesDto }) includes: PackageIncludesDto;
  @ApiProperty({ type: () => [PackageProjectDto] }) projects: PackageProjectDto[];
  @ApiProperty({ type: () => [PackageSkillDto] }) skills: PackageSkillDto[];
  /** tasks and routines */
  @ApiProperty({ type: () => [PackageTaskDto] }) issues: PackageTaskDto[];
  /** always []: attachments and images are not exported */
  @ApiProperty({ type: [Object] }) embeddedAssets: never[];
}

/** The package as JSON: markdown files keyed by their path under `rootPath`. */
export class ExportResponseDto {
  @ApiProperty({ example: 'acme' }) rootPath: string;
  @ApiProperty({ type: () => PackageManifestDto }) manifest: PackageManifestDto;
  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'string' },
    example: { 'COMPANY.md': '---\nschema: agentcompanies/v1\n...' },
  })
  files: Record<string, string>;
  /** e.g. inline sensitive env values dropped */
  warnings: string[];
}

export class ExportPreviewFileDto {
  path: string;
  bytes: number;
}

export class ExportPreviewResponseDto {
  @ApiProperty({ example: 'acme' }) rootPath: string;
  @ApiProperty({ type: () => PackageManifestDto }) manifest: PackageManifestDto;
  @ApiProperty({ type: [ExportPreviewFileDto] }) files: ExportPreviewFileDto[];
  totalBytes: number;
  warnings: string[];
}

/** The preview as the board UI reads it (header `X-Paperclip-Route`): file contents keyed by path, as the export answers them. */
export class ExportPreviewPageDto {
  @ApiProperty({ example: 'acme' }) rootPath: string;
  @ApiProperty({ type: () => PackageManifestDto }) manifest: PackageManifestDto;
  @ApiProperty({ type: 'object', additionalProperties: { type: 'string' } }) files: Record<string, string>;
  /** the same files with their sizes */
  @ApiProperty({ type: [ExportPreviewFileDto] }) fileInventory: ExportPreviewFileDto[];
  totalBytes: number;
  warnings: string[];
}

export const COLLISION_STRATEGIES = ['rename', 'skip', 'replace'] as const;
export type CollisionStrategy = (typeof COLLISION_STRATEGIES)[number];

export class ImportSourceDto {
  @ApiProperty({ enum: ['inline'] }) @IsIn(['inline']) type: 'inline';
  /** folder the file paths may start with (stripped) */
  @IsOptional() @IsString() @MaxLength(200) rootPath?: string;
  @ApiProperty({ type: 'object', additionalProperties: { type: 'string' }, description: 'file contents keyed by relative path' })
  @IsObject()
  files: Record<string, string>;
}

export class ImportTargetDto {
  @ApiProperty({ enum: ['new_company', 'existing_company'] }) @IsIn(['new_company', 'existing_company']) mode:
    'new_company' | 'existing_company';
  /** existing_company: the company to import into (company-scoped routes: the route company) */
  @IsOptional() @IsUUID() companyId?: string;
  /** new_company: name of the new company (default: the package's) */
  @IsOptional() @IsString() @IsNotEmpty() @MaxLength(200) newCompanyName?: string;
}

export class ImportIncludeDto {
  @ApiPropertyOptional({ default: true }) @IsOptional() @IsBoolean() company?: boolean;
  @ApiPropertyOptional({ default: true }) @IsOptional() @IsBoolean() agents?: boolean;
  @ApiPropertyOptional({ default: true }) @IsOptional() @IsBoolean() projects?: boolean;
  @ApiPropertyOptional({ default: true }) @IsOptional() @IsBoolean() goals?: boolean;
  @ApiPropertyOptional({ default: true }) @IsOptional() @IsBoolean() skills?: boolean;
  @ApiPropertyOptional({ default: true }) @IsOptional() @IsBoolean() routines?: boolean;
  @ApiPropertyOptional({ default: true }) @IsOptional() @IsBoolean() issues?: boolean;
}

/**
 * Body of the import routes. Collision: an entity of the package whose slug already exists in the
 * target company is renamed (`rename`, default: created under a free name), left as it is (`skip`),
 * or overwritten (`replace`, board-level routes only).
 */
export class ImportRequestDto {
  @ApiProperty({ type: ImportSourceDto }) @IsDefined() @IsObject() @ValidateNested() @Type(() => ImportSourceDto) source: ImportSourceDto;
  @ApiPropertyOptional({ type: ImportTargetDto, description: 'default on company-scoped routes: the route company' })
  @IsOptional()
  @ValidateNested()
  @Type(() => ImportTargetDto)
  target?: ImportTargetDto;
  @ApiPropertyOptional({ enum: COLLISION_STRATEGIES, default: 'rename' })
  @IsOptional()
  @IsIn(COLLISION_STRATEGIES)
  collisionStrategy?: CollisionStrategy;
  @ApiPropertyOptional({ type: ImportIncludeDto }) @IsOptional() @ValidateNested() @Type(() => ImportIncludeDto) include?: ImportIncludeDto;
}

export class PlanItemDto {
  @ApiProperty({ enum: ['company', 'label', 'agent', 'goal', 'project', 'skill', 'routine', 'budget_policy', 'issue'] }) kind: string;
  slug: string;
  /** the package file it comes from */
  path: string;
  @ApiProperty({ enum: ['create', 'update', 'skip', 'rename'] }) action: string;
  name: string;
  /** rename: the name it gets */
  @ApiPropertyOptional({ nullable: true, type: String }) targetName?: string | null;
  /** update/skip/rename: the entity already in the company with that slug */
  @ApiPropertyOptional({ nullable: true, type: String }) existingId?: string | null;
}

export class SecretToSetDto {
  name: string;
  @ApiProperty({ nullable: true, type: String }) description: string | null;
  /** package files whose env declares it */
  usedBy: string[];
}

/** What an import does (preview) or did (apply): the same planner computes both. */
export class ImportPlanDto {
  @ApiProperty({ enum: ['new_company', 'existing_company'] }) mode: string;
  @ApiProperty({ nullable: true, type: String }) companyId: string | null;
  companyName: string;
  @ApiProperty({ enum: COLLISION_STRATEGIES }) collisionStrategy: string;
  @ApiProperty({ type: [PlanItemDto] }) creates: PlanItemDto[];
  @ApiProperty({ type: [PlanItemDto] }) updates: PlanItemDto[];
  @ApiProperty({ type: [PlanItemDto] }) skips: PlanItemDto[];
  @ApiProperty({ type: [PlanItemDto] }) renames: PlanItemDto[];
  /** entities whose slug exists in the target, with the resolution the strategy chose */
  @ApiProperty({ type: [PlanItemDto] }) conflicts: PlanItemDto[];
  warnings: string[];
  @ApiProperty({ type: [SecretToSetDto] }) secretsToSet: SecretToSetDto[];
  @ApiProperty({ type: 'object', additionalProperties: { type: 'integer' }, example: { 'agent.create': 2 } }) counts: Record<
    string,
    number
  >;
}

export class ImportApplyResponseDto extends ImportPlanDto {
  /** ids of the entities created or updated, by kind and package slug */
  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'object', additionalProperties: { type: 'string' } },
    example: { agent: { ceo: '00000000-0000-0000-0000-000000000000' } },
  })
  ids: Record<string, Record<string, string>>;
}
