import { ProjectResponseDto } from '../../projects/dto/project.dto';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayNotEmpty,
  IsArray,
  IsBoolean,
  IsDateString,
  IsIn,
  IsInt,
  IsNotEmpty,
  IsObject,
  IsOptional,
  IsString,
  IsUUID,
  MaxLength,
  Min,
} from 'class-validator';
import { ISSUE_PRIORITIES, ISSUE_STATUSES, IssuePriority, IssueStatus } from '../issue.types';
import { RefersTo } from '../../../common/references/refers-to.decorator';
import { OmittableNotNull, Nullable } from '../../../common/http/optional';

const MAX_TEXT = 100_000;

export class IssueFieldsDto {
  @Nullable() @IsString() @MaxLength(MAX_TEXT) @ApiPropertyOptional({ nullable: true, type: String }) description?: string | null;
  @OmittableNotNull() @IsIn(ISSUE_STATUSES) @ApiPropertyOptional({ enum: ISSUE_STATUSES }) status?: IssueStatus;
  @OmittableNotNull() @IsIn(ISSUE_PRIORITIES) @ApiPropertyOptional({ enum: ISSUE_PRIORITIES }) priority?: IssuePriority;
  @RefersTo('project') @Nullable() @IsUUID() @ApiPropertyOptional({ nullable: true, type: String, format: 'uuid' }) projectId?:
    string | null;
  @RefersTo('goal') @Nullable() @IsUUID() @ApiPropertyOptional({ nullable: true, type: String, format: 'uuid' }) goalId?: string | null;
  /** parent issue (UUID or identifier) of the same company; no cycles */
  @RefersTo('issue') @Nullable() @IsString() @MaxLength(100) @ApiPropertyOptional({ nullable: true, type: String }) parentId?:
    string | null;
  /** blockers (UUIDs or identifiers) of the same company; PATCH replaces the set */
  @RefersTo('issue')
  @OmittableNotNull()
  @IsArray()
  @ArrayMaxSize(100)
  @IsString({ each: true })
  @MaxLength(100, { each: true })
  blockedByIssueIds?: string[];
  /** company labels; PATCH replaces the set */
  @RefersTo('label') @OmittableNotNull() @IsArray() @ArrayMaxSize(100) @IsUUID('all', { each: true }) labelIds?: string[];
  /** needs task-assignment permission (authorization decision) */
  @Nullable() @IsUUID() @ApiPropertyOptional({ nullable: true, type: String, format: 'uuid' }) assigneeAgentId?: string | null;
  @Nullable() @IsString() @IsNotEmpty() @MaxLength(200) @ApiPropertyOptional({ nullable: true, type: String }) assigneeUserId?:
    string | null;
  @Nullable() @IsObject() @ApiPropertyOptional({ nullable: true, type: Object }) executionPolicy?: Record<string, unknown> | null;
  @RefersTo('workspace')
  @Nullable()
  @IsUUID()
  @ApiPropertyOptional({ nullable: true, type: String, format: 'uuid' })
  executionWorkspaceId?: string | null;
  @Nullable() @IsString() @MaxLength(100) @ApiPropertyOptional({ nullable: true, type: String }) executionWorkspacePreference?:
    string | null;
  @Nullable() @IsObject() @ApiPropertyOptional({ nullable: true, type: Object }) executionWorkspaceSettings?: Record<
    string,
    unknown
  > | null;
  /** copies the workspace settings of another issue of the company (fields given explicitly win) */
  @RefersTo('issue')
  @Nullable()
  @IsString()
  @MaxLength(100)
  @ApiPropertyOptional({ nullable: true, type: String })
  inheritExecutionWorkspaceFromIssueId?: string | null;
  /** hides the issue from lists; null shows it again */
  @Nullable() @IsDateString() @ApiPropertyOptional({ nullable: true, type: String, format: 'date-time' }) hiddenAt?: string | null;
}

export class CreateIssueDto extends IssueFieldsDto {
  @IsString() @IsNotEmpty() @MaxLength(500) title: string;
  /** e.g. `manual` (default), `routine_execution` */
  @OmittableNotNull() @IsString() @IsNotEmpty() @MaxLength(100) originKind?: string;
  @Nullable() @IsString() @MaxLength(200) @ApiPropertyOptional({ nullable: true, type: String }) originId?: string | null;
}

export class UpdateIssueDto extends IssueFieldsDto {
  @OmittableNotNull() @IsString() @IsNotEmpty() @MaxLength(500) title?: string;
  /** markdown comment added in the same transaction */
  @OmittableNotNull() @IsString() @IsNotEmpty() @MaxLength(MAX_TEXT) comment?: string;
  /** with a comment: a done or cancelled issue moves to todo (unless a status is given) */
  @OmittableNotNull() @IsBoolean() reopen?: boolean;
  /** with a comment, board only: cancels the assignee's active run for this issue */
  @OmittableNotNull() @IsBoolean() interrupt?: boolean;
}

export class ListIssuesQueryDto {
  /** one status or a comma-separated list */
  @IsOptional() @IsString() @MaxLength(200) status?: string;
  @IsOptional() @IsUUID() assigneeAgentId?: string;
  /** assignee, creator or commenter */
  @IsOptional() @IsUUID() participantAgentId?: string;
  /** `me` (board callers only) or a user id */
  @IsOptional() @IsString() @MaxLength(200) assigneeUserId?: string;
  @IsOptional() @IsString() @MaxLength(200) touchedByUserId?: string;
  @IsOptional() @IsString() @MaxLength(200) inboxArchivedByUserId?: string;
  @IsOptional() @IsString() @MaxLength(200) unreadForUserId?: string;
  @IsOptional() @IsUUID() projectId?: string;
  @IsOptional() @IsUUID() executionWorkspaceId?: string;
  @IsOptional() @IsUUID() parentId?: string;
  @IsOptional() @IsUUID() labelId?: string;
  @IsOptional() @IsString() @MaxLength(100) originKind?: string;
  @IsOptional() @IsString() @MaxLength(200) originId?: string;
  @IsOptional() @IsIn(['true', 'false']) includeRoutineExecutions?: string;
  /** full-text search over title, identifier, description and comments; best match first */
  @IsOptional() @IsString() @MaxLength(500) q?: string;
  /** positive integer; default 500, at most 1000 per page */
  @IsOptional() @Type(() => Number) @IsInt() @Min(1) limit?: number;
  /** opaque cursor from the `X-Next-Cursor` response header of the previous page */
  @IsOptional() @IsString() @MaxLength(500) cursor?: string;
}

export class CheckoutIssueDto {
  @RefersTo('agent') @IsUUID() agentId: string;
  @IsArray()
  @ArrayNotEmpty()
  @ArrayMaxSize(7)
  @IsIn(ISSUE_STATUSES, { each: true })
  @ApiProperty({ isArray: true, enum: ISSUE_STATUSES })
  expectedStatuses: IssueStatus[];
}

export class LabelSummaryDto {
  id: string;
  name: string;
  @ApiProperty({ nullable: true, type: String }) color: string | null;
}

export class IssueResponseDto {
  id: string;
  companyId: string;
  /** `<PREFIX>-<n>` */
  identifier: string;
  issueNumber: number;
  title: string;
  @ApiProperty({ nullable: true, type: String }) description: string | null;
  @ApiProperty({ enum: ISSUE_STATUSES }) status: string;
  @ApiProperty({ enum: ISSUE_PRIORITIES }) priority: string;
  @ApiProperty({ nullable: true, type: String }) projectId: string | null;
  @ApiProperty({ nullable: true, type: String }) goalId: string | null;
  @ApiProperty({ nullable: true, type: String }) parentId: string | null;
  blockedByIssueIds: string[];
  labelIds: string[];
  labels: LabelSummaryDto[];
  @ApiProperty({ nullable: true, type: String }) assigneeAgentId: string | null;
  @ApiProperty({ nullable: true, type: String }) assigneeUserId: string | null;
  @ApiProperty({ nullable: true, type: String }) checkoutRunId: string | null;
  @ApiProperty({ nullable: true, type: Object }) executionPolicy: Record<string, unknown> | null;
  @ApiProperty({ nullable: true, type: String }) executionWorkspaceId: string | null;
  @ApiProperty({ nullable: true, type: String }) executionWorkspacePreference: string | null;
  @ApiProperty({ nullable: true, type: Object }) executionWorkspaceSettings: Record<string, unknown> | null;
  @ApiProperty({ nullable: true, type: String }) inheritExecutionWorkspaceFromIssueId: string | null;
  @ApiProperty({ nullable: true, type: String }) hiddenAt: string | null;
  originKind: string;
  @ApiProperty({ nullable: true, type: String }) originId: string | null;
  @ApiProperty({ nullable: true, type: String }) createdByAgentId: string | null;
  @ApiProperty({ nullable: true, type: String }) createdByUserId: string | null;
  @ApiProperty({ nullable: true, type: String }) startedAt: string | null;
  @ApiProperty({ nullable: true, type: String }) completedAt: string | null;
  @ApiProperty({ nullable: true, type: String }) cancelledAt: string | null;
  createdAt: string;
  updatedAt: string;
}

export class IssueSummaryDto {
  id: string;
  identifier: string;
  title: string;
  status: string;
  priority: string;
  @ApiProperty({ nullable: true, type: String }) assigneeAgentId: string | null;
  @ApiProperty({ nullable: true, type: String }) projectId: string | null;
  @ApiProperty({ nullable: true, type: String }) goalId: string | null;
  @ApiProperty({ nullable: true, type: String }) parentId: string | null;
  updatedAt: string;
}

export class LegacyPlanDocumentDto {
  key: string;
  title: string;
  format: string;
  body: string;
  /** read-only: parsed from the `<plan>` block of the description */
  source: string;
}

export class IssueDetailResponseDto extends IssueResponseDto {
  /** the project as GET /api/projects/{id} answers it */
  @ApiProperty({ nullable: true, type: ProjectResponseDto }) project: ProjectResponseDto | null;
  @ApiProperty({ nullable: true, type: Object }) goal: Record<string, unknown> | null;
  /** nearest parent first */
  ancestors: IssueSummaryDto[];
  blockedBy: IssueSummaryDto[];
  blocks: IssueSummaryDto[];
  @ApiProperty({ nullable: true, type: Object }) planDocument: Record<string, unknown> | null;
  @ApiProperty({ type: [Object] }) documentSummaries: Record<string, unknown>[];
  @ApiProperty({ nullable: true, type: LegacyPlanDocumentDto }) legacyPlanDocument: LegacyPlanDocumentDto | null;
  @ApiProperty({ type: [Object] }) mentionedProjects: Record<string, unknown>[];
  @ApiProperty({ nullable: true, type: Object }) currentExecutionWorkspace: Record<string, unknown> | null;
  @ApiProperty({ type: [Object] }) workProducts: Record<string, unknown>[];
}
