import { ApiProperty } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsString, IsUUID, Max, MaxLength, Min } from 'class-validator';

export const ARTIFACT_KINDS = ['image', 'video', 'text', 'document', 'file', 'all'] as const;
export const ARTIFACT_GROUP_BY = ['none', 'task', 'parent_task'] as const;

export class ListArtifactsQueryDto {
  /** media kind filter, default `all` */
  @IsOptional() @IsIn(ARTIFACT_KINDS) kind?: (typeof ARTIFACT_KINDS)[number];
  @IsOptional() @IsUUID() projectId?: string;
  /** case-insensitive substring of the title, preview text, issue title or identifier; max 160 characters */
  @IsOptional() @IsString() @MaxLength(160) q?: string;
  /** `none` (default), `task` (the artifact's issue) or `parent_task` (its parent, else itself) */
  @IsOptional() @IsIn(ARTIFACT_GROUP_BY) groupBy?: (typeof ARTIFACT_GROUP_BY)[number];
  /** expand one group: its artifacts plus `selectedGroup` */
  @IsOptional() @IsUUID() groupIssueId?: string;
  /** 1 to 100, default 30 */
  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(100) limit?: number;
  /** opaque, from `nextCursor` */
  @IsOptional() @IsString() @MaxLength(500) cursor?: string;
}

export class ArtifactIssueDto {
  id: string;
  identifier: string;
  title: string;
}

export class ArtifactNamedDto {
  id: string;
  name: string;
}

export class ArtifactDto {
  /** `document:<id>`, `attachment:<id>` or `work_product:<id>` */
  id: string;
  source: 'document' | 'attachment' | 'work_product';
  /** image | video | text | document | file, or empty when unknown */
  mediaKind: string;
  title: string;
  @ApiProperty({ nullable: true, type: String }) previewText: string | null;
  @ApiProperty({ nullable: true, type: String }) contentType: string | null;
  @ApiProperty({ nullable: true, type: String }) contentPath: string | null;
  @ApiProperty({ nullable: true, type: String }) openPath: string | null;
  @ApiProperty({ nullable: true, type: String }) downloadPath: string | null;
  issue: ArtifactIssueDto;
  @ApiProperty({ nullable: true, type: ArtifactNamedDto }) project: ArtifactNamedDto | null;
  @ApiProperty({ nullable: true, type: ArtifactNamedDto }) createdByAgent: ArtifactNamedDto | null;
  updatedAt: string;
  href: string;
}

export class ArtifactGroupDto {
  /** `<groupBy>:<issueId>` */
  id: string;
  groupBy: string;
  issue: ArtifactIssueDto;
  title: string;
  count: number;
  mediaKinds: string[];
  /** the group's newest artifacts (up to 3) */
  previewArtifacts: ArtifactDto[];
  updatedAt: string;
  href: string;
}

export class ArtifactListResponseDto {
  artifacts: ArtifactDto[];
  /** grouped modes without groupIssueId */
  groups?: ArtifactGroupDto[];
  /** with groupIssueId */
  @ApiProperty({ nullable: true, type: ArtifactGroupDto }) selectedGroup?: ArtifactGroupDto | null;
  @ApiProperty({ nullable: true, type: String }) nextCursor: string | null;
}
