import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsIn,
  IsInt,
  IsNotEmpty,
  IsObject,
  IsOptional,
  IsString,
  IsUUID,
  Matches,
  Max,
  MaxLength,
  Min,
  ValidateNested,
} from 'class-validator';
import { Nullable, OmittableNotNull } from '../../../common/http/optional';
import { POLICIES, SELECTOR_TYPES } from '../tool.types';

export class ProfileEntryInputDto {
  /** `connection` (all its tools), `tool_name` (with connectionId, or across connections), `catalog_entry`, `application` */
  @ApiProperty({ enum: SELECTOR_TYPES }) @IsIn(SELECTOR_TYPES) selectorType: (typeof SELECTOR_TYPES)[number];
  /** allow, ask (the board approves each call), deny; default allow, or deny with effect exclude */
  @ApiPropertyOptional({ enum: POLICIES }) @IsOptional() @IsIn(POLICIES) policy?: (typeof POLICIES)[number];
  /** the board UI's view: include (= allow unless policy says ask) or exclude (= deny) */
  @ApiPropertyOptional({ enum: ['include', 'exclude'] }) @IsOptional() @IsIn(['include', 'exclude']) effect?: 'include' | 'exclude';
  @ApiPropertyOptional({ nullable: true, type: String, format: 'uuid' }) @Nullable() @IsUUID() applicationId?: string | null;
  @ApiPropertyOptional({ nullable: true, type: String, format: 'uuid' }) @Nullable() @IsUUID() connectionId?: string | null;
  @ApiPropertyOptional({ nullable: true, type: String, format: 'uuid' }) @Nullable() @IsUUID() catalogEntryId?: string | null;
  @ApiPropertyOptional({ nullable: true, type: String }) @Nullable() @IsString() @IsNotEmpty() @MaxLength(240) toolName?: string | null;
}

export class UpdateProfileEntryDto {
  @ApiPropertyOptional({ enum: POLICIES }) @OmittableNotNull() @IsIn(POLICIES) policy?: (typeof POLICIES)[number];
  @ApiPropertyOptional({ enum: ['include', 'exclude'] }) @OmittableNotNull() @IsIn(['include', 'exclude']) effect?: 'include' | 'exclude';
  @ApiPropertyOptional({ nullable: true, type: String }) @Nullable() @IsString() @IsNotEmpty() @MaxLength(240) toolName?: string | null;
}

export class CreateToolProfileDto {
  /** a stable key (letters, digits, `.`, `_`, `:`, `-`); default from the name */
  @IsOptional() @IsString() @Matches(/^[a-z0-9][a-z0-9._:-]{0,159}$/i) profileKey?: string;
  @IsString() @IsNotEmpty() @MaxLength(160) name: string;
  @ApiPropertyOptional({ nullable: true, type: String }) @Nullable() @IsString() @MaxLength(4000) description?: string | null;
  @ApiPropertyOptional({ enum: ['draft', 'active', 'disabled'], default: 'active' })
  @IsOptional()
  @IsIn(['draft', 'active', 'disabled'])
  status?: string;
  /** what a tool no entry names gets: deny (default) or allow */
  @ApiPropertyOptional({ enum: ['deny', 'allow'], default: 'deny' }) @IsOptional() @IsIn(['deny', 'allow']) defaultAction?:
    'deny' | 'allow';
  @ApiPropertyOptional({ nullable: true, type: Object }) @Nullable() @IsObject() metadata?: Record<string, unknown> | null;
  @ApiPropertyOptional({ type: [ProfileEntryInputDto] })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(250)
  @ValidateNested({ each: true })
  @Type(() => ProfileEntryInputDto)
  entries?: ProfileEntryInputDto[];
}

export class UpdateToolProfileDto {
  @OmittableNotNull() @IsString() @Matches(/^[a-z0-9][a-z0-9._:-]{0,159}$/i) profileKey?: string;
  @OmittableNotNull() @IsString() @IsNotEmpty() @MaxLength(160) name?: string;
  @ApiPropertyOptional({ nullable: true, type: String }) @Nullable() @IsString() @MaxLength(4000) description?: string | null;
  @ApiPropertyOptional({ enum: ['draft', 'active', 'disabled', 'archived'] })
  @OmittableNotNull()
  @IsIn(['draft', 'active', 'disabled', 'archived'])
  status?: string;
  @ApiPropertyOptional({ enum: ['deny', 'allow'] }) @OmittableNotNull() @IsIn(['deny', 'allow']) defaultAction?: 'deny' | 'allow';
  @ApiPropertyOptional({ nullable: true, type: Object }) @Nullable() @IsObject() metadata?: Record<string, unknown> | null;
}

export class BindToolProfileDto {
  /** `company` (every agent of the company; targetId = the company id) or `agent` */
  @ApiProperty({ enum: ['company', 'agent'] }) @IsIn(['company', 'agent']) targetType: 'company' | 'agent';
  @IsString() @IsNotEmpty() @MaxLength(200) targetId: string;
  @IsOptional() @IsInt() @Min(0) @Max(10_000) priority?: number;
}

export class UnbindToolProfileDto {
  @ApiProperty({ enum: ['company', 'agent'] }) @IsIn(['company', 'agent']) targetType: 'company' | 'agent';
  @IsString() @IsNotEmpty() @MaxLength(200) targetId: string;
}

export class ProfileEntryDto {
  id: string;
  companyId: string;
  profileId: string;
  @ApiProperty({ enum: SELECTOR_TYPES }) selectorType: string;
  @ApiProperty({ enum: POLICIES }) policy: string;
  @ApiProperty({ enum: ['include', 'exclude'] }) effect: string;
  @ApiProperty({ nullable: true, type: String }) applicationId: string | null;
  @ApiProperty({ nullable: true, type: String }) connectionId: string | null;
  @ApiProperty({ nullable: true, type: String }) catalogEntryId: string | null;
  @ApiProperty({ nullable: true, type: String }) toolName: string | null;
  @ApiProperty({ nullable: true, type: String }) riskLevel: null;
  @ApiProperty({ nullable: true, type: Object }) conditions: null;
  createdAt: string;
  updatedAt: string;
}

export class ProfileBindingDto {
  id: string;
  companyId: string;
  profileId: string;
  @ApiProperty({ enum: ['company', 'agent'] }) targetType: string;
  targetId: string;
  priority: number;
  @ApiProperty({ type: Object }) metadata: Record<string, unknown>;
  @ApiProperty({ nullable: true, type: String }) createdByAgentId: string | null;
  @ApiProperty({ nullable: true, type: String }) createdByUserId: string | null;
  createdAt: string;
  updatedAt: string;
}

export class ProfileSummaryDto {
  @ApiProperty({ enum: ['all', 'selected'] }) accessMode: string;
  allowedToolCount: number;
  allowedApplicationCount: number;
  excludedToolCount: number;
  totalToolCount: number;
  assignmentCount: number;
  appliesToAgentCount: number;
  isCompanyDefault: boolean;
}

export class ToolProfileDto {
  id: string;
  companyId: string;
  profileKey: string;
  name: string;
  @ApiProperty({ nullable: true, type: String }) description: string | null;
  status: string;
  @ApiProperty({ enum: ['deny', 'allow'] }) defaultAction: string;
  @ApiProperty({ nullable: true, type: String }) newToolsReviewedAt: null;
  newToolsPendingCount: number;
  @ApiProperty({ type: Object }) metadata: Record<string, unknown>;
  @ApiProperty({ type: [ProfileEntryDto] }) entries: ProfileEntryDto[];
  @ApiProperty({ type: [ProfileBindingDto] }) bindings: ProfileBindingDto[];
  @ApiProperty({ type: ProfileSummaryDto }) summary: ProfileSummaryDto;
  createdAt: string;
  updatedAt: string;
}

export class ToolProfileListDto {
  @ApiProperty({ type: [ToolProfileDto] }) profiles: ToolProfileDto[];
}

export class EffectiveToolDto {
  connectionId: string;
  toolPrefix: string;
  toolName: string;
  /** the name agents call it by */
  agentToolName: string;
  @ApiProperty({ enum: POLICIES }) policy: string;
}

export class EffectiveProfilesDto {
  agentId: string;
  @ApiProperty({ type: [ToolProfileDto] }) profiles: ToolProfileDto[];
  @ApiProperty({ type: [ProfileEntryDto] }) entries: ProfileEntryDto[];
  @ApiProperty({ type: [ProfileBindingDto] }) bindings: ProfileBindingDto[];
  /** every tool of the company's remote connections with this agent's policy */
  @ApiProperty({ type: [EffectiveToolDto] }) tools: EffectiveToolDto[];
  /** the local connections the agent's CLI is given */
  @ApiProperty({ type: [String] }) localConnectionIds: string[];
}
