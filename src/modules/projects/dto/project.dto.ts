import { OmittableNotNull } from '../../../common/http/optional';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  IsArray,
  IsIn,
  IsISO8601,
  IsNotEmpty,
  IsObject,
  IsOptional,
  IsString,
  IsUUID,
  Matches,
  MaxLength,
  ValidateIf,
} from 'class-validator';
import { PROJECT_STATUSES, ProjectStatus } from '../project.entity';
import { CreateWorkspaceDto, WorkspaceResponseDto } from './workspace.dto';
import { RefersTo } from '../../../common/references/refers-to.decorator';

const nullable = () => ValidateIf((_: unknown, v: unknown) => v !== null);

class ProjectFieldsDto {
  @ApiPropertyOptional({ nullable: true, type: String })
  @IsOptional()
  @nullable()
  @IsString()
  @MaxLength(20_000)
  description?: string | null;
  @ApiPropertyOptional({ enum: PROJECT_STATUSES })
  @IsOptional()
  @IsIn(PROJECT_STATUSES)
  status?: ProjectStatus;
  /** preferred: linked goals in order (goals of the company) */
  @RefersTo('goal') @IsOptional() @IsArray() @ArrayMaxSize(100) @IsUUID(undefined, { each: true }) goalIds?: string[];
  /** legacy: a single goal; ignored when goalIds is given */
  @ApiPropertyOptional({ nullable: true, format: 'uuid', type: String })
  @RefersTo('goal')
  @IsOptional()
  @nullable()
  @IsUUID()
  goalId?: string | null;
  @ApiPropertyOptional({ nullable: true, format: 'uuid', type: String })
  @RefersTo('agent')
  @IsOptional()
  @nullable()
  @IsUUID()
  leadAgentId?: string | null;
  /** `YYYY-MM-DD` */
  @ApiPropertyOptional({ nullable: true, type: String, example: '2030-01-31' })
  @IsOptional()
  @nullable()
  @Matches(/^\d{4}-\d{2}-\d{2}$/, { message: 'targetDate must be YYYY-MM-DD' })
  @IsISO8601({ strict: true })
  targetDate?: string | null;
  @ApiPropertyOptional({ nullable: true, type: String, example: '#1f6feb' })
  @IsOptional()
  @nullable()
  @Matches(/^#[0-9a-fA-F]{6}$/, { message: 'color must be a hex color #rrggbb' })
  color?: string | null;
  /**
   * env var name -> inline string or `{ type: "secret_ref", secretId, version? }`; agents running in
   * the project get these, so adding or changing a secret reference needs the board or
   * agents:create (403 `secret_binding_not_granted`)
   */
  @ApiPropertyOptional({ type: 'object', additionalProperties: true })
  @IsOptional()
  @IsObject()
  env?: Record<string, unknown>;
  @ApiPropertyOptional({ nullable: true, type: 'object', additionalProperties: true })
  @IsOptional()
  @nullable()
  @IsObject()
  executionWorkspacePolicy?: Record<string, unknown> | null;
  @ApiPropertyOptional({ nullable: true, type: String, format: 'date-time' })
  @IsOptional()
  @nullable()
  @IsISO8601()
  archivedAt?: string | null;
}

export class UpdateProjectDto extends ProjectFieldsDto {
  /** renaming changes the urlKey; a collision with another project's shortname is 409 */
  @OmittableNotNull() @IsString() @IsNotEmpty() @MaxLength(200) name?: string;
}

export class CreateProjectDto extends ProjectFieldsDto {
  /** normalised to the company-unique urlKey (a taken key gets a numeric suffix) */
  @IsString() @IsNotEmpty() @MaxLength(200) name: string;
  /** seeds the first (primary) workspace; an invalid payload fails the whole creation with 422 */
  @ApiPropertyOptional({ type: CreateWorkspaceDto })
  @IsOptional()
  @IsObject()
  workspace?: Record<string, unknown>;
}

export class GetProjectQueryDto {
  /** the company a shortname is looked up in */
  @IsOptional() @IsUUID() companyId?: string;
}

export class ProjectGoalSummaryDto {
  id: string;
  title: string;
  level: string;
  status: string;
}

/**
 * Where the project's code is, from its primary workspace. Without a workspace every field is null
 * and `origin` is `none`: runs then use the agent's own folder (its `cwd`, else its home).
 */
export class CodebaseDto {
  @ApiProperty({ nullable: true, type: String, format: 'uuid', description: 'the primary workspace' }) workspaceId: string | null;
  @ApiProperty({ nullable: true, type: String }) repoUrl: string | null;
  @ApiProperty({ nullable: true, type: String }) repoRef: string | null;
  @ApiProperty({ nullable: true, type: String }) defaultRef: string | null;
  /** the last segment of repoUrl, without `.git` */
  @ApiProperty({ nullable: true, type: String }) repoName: string | null;
  /** the primary workspace's folder */
  @ApiProperty({ nullable: true, type: String }) cwd: string | null;
  /** the same folder, under the name the board UI reads */
  @ApiProperty({ nullable: true, type: String }) localFolder: string | null;
  /** always null: this service does not check out repositories into folders of its own */
  @ApiProperty({ nullable: true, type: String }) managedFolder: string | null;
  /** the folder runs of the project work in (the workspace folder), or null when none is set */
  @ApiProperty({ nullable: true, type: String }) effectiveLocalFolder: string | null;
  /** `local_folder` (the workspace names a folder), `repository` (a repository only) or `none` (no workspace) */
  @ApiProperty({ enum: ['local_folder', 'repository', 'none'] }) origin: 'local_folder' | 'repository' | 'none';
}

/** A project's active monthly (or lifetime) billed-cents budget. */
export class ProjectBudgetDto {
  amountCents: number;
  /** `lifetime` (the project default) or `calendar_month_utc` */
  windowKind: string;
}

export class ProjectResponseDto {
  id: string;
  companyId: string;
  name: string;
  /** company-unique shortname */
  urlKey: string;
  @ApiProperty({ nullable: true, type: String }) description: string | null;
  @ApiProperty({ enum: PROJECT_STATUSES }) status: string;
  @ApiProperty({ nullable: true, type: String, description: 'legacy: the first linked goal' }) goalId: string | null;
  goalIds: string[];
  goals: ProjectGoalSummaryDto[];
  @ApiProperty({ nullable: true, type: String }) leadAgentId: string | null;
  @ApiProperty({ nullable: true, type: String }) targetDate: string | null;
  @ApiProperty({ nullable: true, type: String }) color: string | null;
  /** always null: projects carry a color, not an icon */
  @ApiProperty({ nullable: true, type: String }) icon: string | null;
  env: Record<string, unknown>;
  @ApiProperty({ nullable: true, type: 'object', additionalProperties: true }) executionWorkspacePolicy: Record<string, unknown> | null;
  @ApiProperty({ nullable: true, type: String }) archivedAt: string | null;
  /** set when a budget hard stop paused the project */
  @ApiProperty({ nullable: true, type: String }) pausedAt: string | null;
  @ApiProperty({ nullable: true, type: String }) pauseReason: string | null;
  /** derived from the primary workspace (every field null and origin `none` without one) */
  codebase: CodebaseDto;
  workspaces: WorkspaceResponseDto[];
  @ApiProperty({ nullable: true, type: WorkspaceResponseDto }) primaryWorkspace: WorkspaceResponseDto | null;
  /** issues of the project (hidden ones excepted) */
  taskCount: number;
  /** the project's active billed-cents budget policy, or null */
  @ApiProperty({ nullable: true, type: ProjectBudgetDto }) budget: ProjectBudgetDto | null;
  /** always null: no plugin manages projects here */
  @ApiProperty({ nullable: true, type: String }) managedByPlugin: string | null;
  createdAt: string;
  updatedAt: string;
}
