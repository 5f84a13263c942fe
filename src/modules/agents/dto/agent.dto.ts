import { OmittableNotNull } from '../../../common/http/optional';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  Allow,
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsNotEmpty,
  IsObject,
  IsOptional,
  IsString,
  IsUUID,
  Max,
  MaxLength,
  Min,
  ValidateIf,
} from 'class-validator';
import type { AgentStatus } from '../agent.entity';
import { RefersTo } from '../../../common/references/refers-to.decorator';

const MAX_CENTS = 2_147_483_647;
export const AGENT_STATUSES: AgentStatus[] = ['active', 'paused', 'idle', 'running', 'error', 'pending_approval', 'terminated'];

/** Fields shared by POST agents and POST agent-hires. */
export class CreateAgentDto {
  /** a company-unique URL key is derived from it; duplicates get -2, -3, … */
  @IsString() @IsNotEmpty() @MaxLength(200) name: string;
  @ApiPropertyOptional({ example: 'engineer', description: 'label such as ceo, engineer, general; default general' })
  @IsOptional()
  @IsString()
  @IsNotEmpty()
  @MaxLength(100)
  role?: string;
  @IsOptional() @ValidateIf((_, v) => v !== null) @IsString() @MaxLength(200) title?: string | null;
  @IsOptional() @IsString() @MaxLength(20_000) capabilities?: string;
  /** manager: an agent of the same company */
  @ApiPropertyOptional({ format: 'uuid', nullable: true, type: String })
  @RefersTo('agent')
  @IsOptional()
  @ValidateIf((_, v) => v !== null)
  @IsUUID()
  reportsTo?: string | null;
  @ApiProperty({ example: 'process', description: 'a built-in or registered adapter type' })
  @IsString()
  @IsNotEmpty()
  @MaxLength(100)
  adapterType: string;
  @ApiPropertyOptional({
    example: { command: 'true' },
    description:
      'adapter specific; env values are strings or secret references (adding or changing a secret reference needs the board or ' +
      'agents:create: 403 `secret_binding_not_granted`; low-trust review agents get none: 422 `low_trust_secret_binding`). ' +
      'Webhook targets (http `url`/`cancelUrl`, gateway_a `url`) may not be private, link-local or unspecified addresses ' +
      '(422 `url_not_allowed`); loopback is allowed in local_trusted mode only; SERVICE_OUTBOUND_ALLOW re-opens chosen hosts.',
  })
  @IsOptional()
  @IsObject()
  adapterConfig?: Record<string, unknown>;
  @ApiPropertyOptional({ example: { heartbeat: { enabled: false, intervalSec: 300 } } })
  @IsOptional()
  @IsObject()
  runtimeConfig?: Record<string, unknown>;
  /** > 0 creates a monthly agent budget policy */
  @IsOptional() @IsInt() @Min(0) @Max(MAX_CENTS) budgetMonthlyCents?: number;
  /** persisted under adapterConfig.serviceSkillSync.desiredSkills */
  @IsOptional() @IsArray() @ArrayMaxSize(200) @IsString({ each: true }) desiredSkills?: string[];
  /** arbitrary; `serviceBuiltInAgent` is reserved for the built-in agents feature */
  @IsOptional() @IsObject() metadata?: Record<string, unknown>;
}

export class HireAgentDto extends CreateAgentDto {
  @RefersTo('issue') @ApiPropertyOptional({ format: 'uuid' }) @IsOptional() @IsUUID() sourceIssueId?: string;
  @RefersTo('issue')
  @ApiPropertyOptional({ type: [String] })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(100)
  @IsUUID('all', { each: true })
  sourceIssueIds?: string[];
}

export class UpdateAgentDto {
  @OmittableNotNull() @IsString() @IsNotEmpty() @MaxLength(200) name?: string;
  @OmittableNotNull() @IsString() @IsNotEmpty() @MaxLength(100) role?: string;
  @IsOptional() @ValidateIf((_, v) => v !== null) @IsString() @MaxLength(200) title?: string | null;
  @IsOptional() @IsString() @MaxLength(20_000) capabilities?: string;
  @ApiPropertyOptional({ format: 'uuid', nullable: true, type: String })
  @RefersTo('agent')
  @IsOptional()
  @ValidateIf((_, v) => v !== null)
  @IsUUID()
  reportsTo?: string | null;
  @IsOptional() @IsString() @IsNotEmpty() @MaxLength(100) adapterType?: string;
  /**
   * merged into the stored config unless replaceAdapterConfig is true. Adding or changing a secret
   * reference in `env` needs the board or agents:create (an agent's own key: 403
   * `secret_binding_not_granted`); webhook targets follow the outbound rules (422 `url_not_allowed`).
   */
  @IsOptional() @IsObject() adapterConfig?: Record<string, unknown>;
  @IsOptional() @IsBoolean() replaceAdapterConfig?: boolean;
  @IsOptional() @IsObject() runtimeConfig?: Record<string, unknown>;
  @IsOptional() @IsInt() @Min(0) @Max(MAX_CENTS) budgetMonthlyCents?: number;
  @ApiPropertyOptional({ enum: AGENT_STATUSES }) @IsOptional() @IsIn(AGENT_STATUSES) status?: AgentStatus;
  @OmittableNotNull() @IsObject() metadata?: Record<string, unknown>;
  /** not accepted here: use PATCH /api/agents/{agentId}/permissions */
  @ApiPropertyOptional({ deprecated: true, description: 'rejected; use PATCH /permissions' }) @Allow() permissions?: unknown;
  /** not accepted here: use POST /api/agents/{agentId}/skills/sync */
  @ApiPropertyOptional({ deprecated: true, description: 'rejected; use skills/sync' }) @Allow() desiredSkills?: unknown;
}

export class UpdateAgentPermissionsDto {
  @IsOptional() @IsBoolean() canCreateAgents?: boolean;
  /** ensures an active company membership and writes (true) or clears (false) the tasks:assign grant */
  @IsOptional() @IsBoolean() canAssignTasks?: boolean;
  /** agent authorization policy block (private visibility, protected assignment, approval); null clears */
  @ApiPropertyOptional({ nullable: true, example: { assignmentPolicy: { mode: 'protected' } } })
  @IsOptional()
  @ValidateIf((_, v) => v !== null)
  @IsObject()
  authorizationPolicy?: Record<string, unknown> | null;
}

export class UpdateAgentBudgetDto {
  @IsInt() @Min(0) @Max(MAX_CENTS) budgetMonthlyCents: number;
}

export class CreateAgentKeyDto {
  @IsString() @IsNotEmpty() @MaxLength(200) name: string;
}

export class GetAgentQueryDto {
  /** needed to resolve a shortname for board callers */
  @IsOptional() @IsString() companyId?: string;
}

export class ChainLinkDto {
  id: string;
  name: string;
  urlKey: string;
  role: string;
  @ApiProperty({ nullable: true, type: String }) title: string | null;
}

export class AgentResponseDto {
  id: string;
  companyId: string;
  name: string;
  urlKey: string;
  role: string;
  @ApiProperty({ nullable: true, type: String }) title: string | null;
  capabilities: string;
  @ApiProperty({ nullable: true, type: String }) reportsTo: string | null;
  adapterType: string;
  @ApiProperty({ description: 'empty when configRedacted' }) adapterConfig: Record<string, unknown>;
  @ApiProperty({ description: 'empty when configRedacted' }) runtimeConfig: Record<string, unknown>;
  /** true when the caller cannot read this agent's configuration */
  configRedacted: boolean;
  budgetMonthlyCents: number;
  spentMonthlyCents: number;
  @ApiProperty({ enum: AGENT_STATUSES }) status: string;
  @ApiProperty({ nullable: true, type: String }) pauseReason: string | null;
  @ApiProperty({ example: { canCreateAgents: true } }) permissions: Record<string, unknown>;
  metadata: Record<string, unknown>;
  sourceIssueIds: string[];
  @ApiProperty({ nullable: true, type: String }) terminatedAt: string | null;
  createdAt: string;
  updatedAt: string;
}

export class MembershipDto {
  id: string;
  companyId: string;
  principalType: string;
  principalId: string;
  membershipRole: string;
  status: string;
  createdAt: string;
  updatedAt: string;
}

export class GrantDto {
  id: string;
  permissionKey: string;
  @ApiProperty({ nullable: true }) scope: unknown;
  @ApiProperty({ nullable: true, type: String }) grantedBy: string | null;
  createdAt: string;
}

export class AgentAccessDto {
  canAssignTasks: boolean;
  @ApiProperty({ enum: ['ceo_role', 'agent_creator', 'explicit_grant', 'simple_default', 'none'] }) taskAssignSource: string;
  @ApiProperty({ nullable: true, type: MembershipDto }) membership: MembershipDto | null;
  grants: GrantDto[];
}

export class AgentDetailResponseDto extends AgentResponseDto {
  /** managers from the direct one up to the root */
  chainOfCommand: ChainLinkDto[];
  access: AgentAccessDto;
}

export class AgentKeyResponseDto {
  id: string;
  agentId: string;
  companyId: string;
  name: string;
  /** the first characters of the token, to recognise it */
  tokenPrefix: string;
  revoked: boolean;
  @ApiProperty({ nullable: true, type: String }) revokedAt: string | null;
  @ApiProperty({ nullable: true, type: String }) lastUsedAt: string | null;
  createdAt: string;
}

export class CreatedAgentKeyResponseDto extends AgentKeyResponseDto {
  /** shown once */
  token: string;
}

export class AgentSkillsSnapshotDto {
  adapterType: string;
  supported: boolean;
  @ApiProperty({ enum: ['persistent', 'ephemeral', 'unsupported'] }) mode: string;
  desiredSkills: string[];
  entries: Record<string, unknown>[];
  warnings: string[];
}

export class EnvironmentCheckDto {
  /** what was checked, e.g. `command`, `url` */
  name: string;
  ok: boolean;
  message: string;
}

/** The adapter's environment check of an agent's configuration (nothing is stored). */
export class AgentEnvironmentReportDto {
  @ApiProperty({ format: 'uuid' }) agentId: string;
  adapterType: string;
  /** every check passed */
  ok: boolean;
  @ApiProperty({ type: [EnvironmentCheckDto] }) checks: EnvironmentCheckDto[];
  @ApiProperty({ format: 'date-time' }) testedAt: string;
}
