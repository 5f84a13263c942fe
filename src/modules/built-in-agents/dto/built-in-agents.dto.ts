import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsIn,
  IsInt,
  IsNotEmpty,
  IsObject,
  IsString,
  Max,
  MaxLength,
  Min,
  ValidateNested,
} from 'class-validator';
import { AgentResponseDto } from '../../agents/dto/agent.dto';
import { BUILT_IN_KEYS, BUILT_IN_STATES } from '../built-in-agents.registry';
import { OmittableNotNull } from '../../../common/http/optional';

export const RESET_RESOURCES = ['agent', 'instructions', 'skill', 'routine'] as const;
export type ResetResource = (typeof RESET_RESOURCES)[number];

export class ProvisionBuiltInAgentDto {
  /** one of the key's allowed adapter types; default: the first of them */
  @OmittableNotNull() @IsString() @IsNotEmpty() @MaxLength(100) adapterType?: string;
  /** adapter setup; may be incomplete (the agent then needs setup). Provisioning again updates it. */
  @OmittableNotNull() @IsObject() adapterConfig?: Record<string, unknown>;
  /** default 0 (the registry default) */
  @OmittableNotNull() @IsInt() @Min(0) @Max(2_147_483_647) budgetMonthlyCents?: number;
}

export class ResetBuiltInAgentDto {
  /** what to restore to registry defaults; omitted = all. Adapter setup is always kept. */
  @OmittableNotNull()
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(4)
  @IsIn(RESET_RESOURCES, { each: true })
  @ApiPropertyOptional({ isArray: true, enum: RESET_RESOURCES })
  resources?: ResetResource[];
}

export class BuiltInRoutineDefinitionDto {
  key: string;
  title: string;
  cronExpression: string;
  timezone: string;
}

export class BuiltInBundleDto {
  /** instructions written for this agent (materialised into adapterConfig.instructions) */
  instructionsVersion: number;
  /** catalog skills provisioned with the agent */
  skills: string[];
  @ApiProperty({ type: [BuiltInRoutineDefinitionDto] }) routines: BuiltInRoutineDefinitionDto[];
  /** permission keys the agent holds, and only these */
  grants: string[];
  startsPaused: boolean;
}

export class BuiltInRoutineStateDto {
  key: string;
  @ApiProperty({ nullable: true, type: String }) routineId: string | null;
  /** active: scheduled; paused: disabled (the initial state) */
  @ApiProperty({ nullable: true, enum: ['active', 'paused'] }) status: string | null;
  @ApiProperty({ nullable: true, type: String }) nextRunAt: string | null;
}

export class BuiltInWarningDto {
  @ApiProperty({ enum: ['built_in_agent_paused'] }) code: string;
  message: string;
}

export class BuiltInSetupDto {
  complete: boolean;
  /** adapter configuration fields still needed, e.g. `adapterConfig.command` */
  missing: string[];
}

/** A definition of the registry with its lifecycle state in the company (configuration redacted). */
export class BuiltInAgentStatusDto {
  @ApiProperty({ enum: BUILT_IN_KEYS }) key: string;
  displayName: string;
  defaultRole: string;
  allowedAdapterTypes: string[];
  defaultAdapterType: string;
  budgetMonthlyCents: number;
  featureKeys: string[];
  @ApiProperty({ enum: BUILT_IN_STATES }) state: string;
  @ApiProperty({ nullable: true, type: String }) agentId: string | null;
  /** the provisioned agent, adapter and runtime configuration redacted */
  @ApiProperty({ nullable: true, type: AgentResponseDto }) agent: AgentResponseDto | null;
  /** the pending hire approval while the state is pending_approval */
  @ApiProperty({ nullable: true, type: String }) approvalId: string | null;
  @ApiProperty({ nullable: true, type: BuiltInSetupDto }) setup: BuiltInSetupDto | null;
  bundle: BuiltInBundleDto;
  @ApiProperty({ type: [BuiltInRoutineStateDto] }) routines: BuiltInRoutineStateDto[];
  @ApiProperty({ type: [BuiltInWarningDto] }) warnings: BuiltInWarningDto[];
}

export class SkillOutcomeDto {
  slug: string;
  /** installed, updated, unchanged, or pending (no skills module to install it yet) */
  status: string;
  @ApiProperty({ nullable: true, type: String }) skillId: string | null;
}

export class ProvisionResultDto extends BuiltInAgentStatusDto {
  /** the approval created when the company requires board approval for new agents (answer 202) */
  @ApiProperty({ nullable: true, type: Object }) approval: Record<string, unknown> | null;
  @ApiProperty({ type: [SkillOutcomeDto] }) skills: SkillOutcomeDto[];
}

export class ResetResultDto extends BuiltInAgentStatusDto {
  @ApiProperty({ isArray: true, enum: RESET_RESOURCES }) reset: string[];
  @ApiProperty({ type: [SkillOutcomeDto] }) skills: SkillOutcomeDto[];
}

export class BuiltInRoutineRunDto {
  /** the routine execution (status issue_created or skipped) */
  run: Record<string, unknown>;
  @ApiProperty({ type: [BuiltInWarningDto] }) warnings: BuiltInWarningDto[];
}

// ---- suggestions

/** Fields of an agent a suggestion may change (applied like PATCH /api/agents/{agentId} when approved). */
export class AgentConfigChangesDto {
  @OmittableNotNull() @IsString() @IsNotEmpty() @MaxLength(200) name?: string;
  @OmittableNotNull() @IsString() @IsNotEmpty() @MaxLength(100) role?: string;
  @OmittableNotNull() @IsString() @MaxLength(200) title?: string;
  @OmittableNotNull() @IsString() @MaxLength(10_000) capabilities?: string;
  /** the agent's instructions (adapterConfig.instructions) */
  @OmittableNotNull() @IsString() @MaxLength(100_000) instructions?: string;
  /** merged into the agent's adapterConfig */
  @OmittableNotNull() @IsObject() adapterConfig?: Record<string, unknown>;
  @OmittableNotNull() @IsObject() runtimeConfig?: Record<string, unknown>;
}

export class AgentConfigSuggestionDto {
  @ValidateNested() @Type(() => AgentConfigChangesDto) @IsObject() changes: AgentConfigChangesDto;
  /** why: the runs and issues the suggestion is based on */
  @IsString() @IsNotEmpty() @MaxLength(20_000) reason: string;
}

export class SkillFileChangeDto {
  @IsString() @IsNotEmpty() @MaxLength(500) path: string;
  @IsString() @MaxLength(512 * 1024) content: string;
}

export class SkillSuggestionDto {
  /** the company skill: id, key or unique slug */
  @IsString() @IsNotEmpty() @MaxLength(500) skill: string;
  @IsArray() @ArrayMinSize(1) @ArrayMaxSize(20) @ValidateNested({ each: true }) @Type(() => SkillFileChangeDto) files: SkillFileChangeDto[];
  @IsString() @IsNotEmpty() @MaxLength(20_000) reason: string;
}
