import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsString, IsUUID, Matches, MaxLength, MinLength } from 'class-validator';
import { Nullable, OmittableNotNull } from '../../../common/http/optional';

/** The providers a connection may be of (`google` is accepted for `gemini`, as the board UI names it in places). */
export const AI_PROVIDERS = ['anthropic', 'openai', 'gemini', 'openrouter'] as const;
const PROVIDER_INPUTS = [...AI_PROVIDERS, 'google'];
export const AI_METHODS = ['api_key', 'subscription'] as const;
export const AI_OWNERSHIPS = ['personal', 'shared'] as const;
const NAME = /\S/;
const MODEL = /^[A-Za-z0-9._:/@-]+$/;

export class AiConnectionsQueryDto {
  /** accepted for the board UI (the agent whose configuration page asks); the list is the same */
  @OmittableNotNull() @IsUUID() @ApiPropertyOptional({ format: 'uuid' }) agentId?: string;
}

export class CreateAiConnectionDto {
  @IsIn(PROVIDER_INPUTS) @ApiProperty({ enum: PROVIDER_INPUTS }) provider: string;
  /** `api_key`; `subscription` (a browser sign-in) is not supported: 422 `login_method_unsupported` */
  @IsIn(AI_METHODS) @ApiProperty({ enum: AI_METHODS }) method: string;
  @IsString() @Matches(NAME, { message: 'name must not be blank' }) @MaxLength(160) name: string;
  /** `personal`: yours (and your default for the provider); `shared`: any board member's agents may use it */
  @IsIn(AI_OWNERSHIPS) @ApiProperty({ enum: AI_OWNERSHIPS }) ownership: string;
  /** the API key: stored as a company secret, never returned. Required unless `connectionId` reconnects with the stored key */
  @OmittableNotNull()
  @IsString()
  @MinLength(1)
  @MaxLength(32768)
  @ApiPropertyOptional({ writeOnly: true })
  apiKey?: string;
  /**
   * Where the provider's API is reached, when not the vendor's (a gateway, a proxy, a local model
   * server); the destination policy applies (docs/security-outbound.md). Default: the operator's
   * SERVICE_AI_BASE_URLS entry for the provider, else the vendor's endpoint.
   */
  @Nullable() @IsString() @MaxLength(2048) @ApiPropertyOptional({ nullable: true, type: String }) baseUrl?: string | null;
  /** the model agents configured from this connection use when their config names none */
  @Nullable()
  @IsString()
  @Matches(MODEL, { message: 'defaultModel must be a model id' })
  @MaxLength(200)
  @ApiPropertyOptional({ nullable: true, type: String })
  defaultModel?: string | null;
  /** an existing connection to reconnect: its key is replaced by `apiKey` (a new version of its secret) */
  @OmittableNotNull() @IsUUID() @ApiPropertyOptional({ format: 'uuid' }) connectionId?: string;
  /** browser sign-ins only: not supported here */
  @OmittableNotNull() @IsString() @MaxLength(128) loginSessionId?: string;
}

export class UpdateAiConnectionDto {
  @OmittableNotNull() @IsString() @Matches(NAME, { message: 'name must not be blank' }) @MaxLength(160) name?: string;
  /** a new key: a new version of the connection's secret (agents bound to it use it from their next run) */
  @OmittableNotNull() @IsString() @MinLength(1) @MaxLength(32768) @ApiPropertyOptional({ writeOnly: true }) apiKey?: string;
  /** null: back to the operator's default endpoint or the vendor's */
  @Nullable() @IsString() @MaxLength(2048) @ApiPropertyOptional({ nullable: true, type: String }) baseUrl?: string | null;
  @Nullable()
  @IsString()
  @Matches(MODEL, { message: 'defaultModel must be a model id' })
  @MaxLength(200)
  @ApiPropertyOptional({ nullable: true, type: String })
  defaultModel?: string | null;
}

export class SetDefaultAiConnectionDto {
  /** the connection (`grantId` of the list) to use by default for its provider: yours, or the company's for a shared one */
  @IsUUID() @ApiProperty({ format: 'uuid' }) grantId: string;
}

export class AiConnectionTestDto {
  @ApiProperty({ enum: ['pass', 'fail'] }) status: string;
  testedAt: string;
  /** the endpoint asked (the provider's model list) */
  endpoint: string;
  @ApiProperty({ nullable: true, type: Number }) httpStatus: number | null;
  message: string;
  /** the models the key may use, as the provider listed them */
  models: string[];
}

export class AiConnectionLastTestDto {
  @ApiProperty({ enum: ['pass', 'fail'] }) status: string;
  @ApiProperty({ nullable: true, type: String }) message: string | null;
  testedAt: string;
}

export class AiConnectionDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ format: 'uuid' }) companyId: string;
  @ApiProperty({ enum: AI_PROVIDERS }) provider: string;
  @ApiProperty({ enum: ['api_key'] }) method: string;
  name: string;
  @ApiProperty({ enum: AI_OWNERSHIPS }) ownership: string;
  /** the user a personal connection belongs to */
  @ApiProperty({ nullable: true, type: String }) ownerUserId: string | null;
  /** the board UI's grant id: the connection's own id (access is by company and ownership) */
  @ApiProperty({ format: 'uuid' }) grantId: string;
  /** the default of its provider for its owner (for the company, when shared) */
  isDefault: boolean;
  /** `connected`; `key_missing` when its secret was deleted */
  @ApiProperty({ enum: ['connected', 'key_missing'] }) status: string;
  /** the company secret holding the key */
  @ApiProperty({ nullable: true, type: String, format: 'uuid' }) secretId: string | null;
  /** the variable agents get the key in, e.g. ANTHROPIC_API_KEY */
  keyEnv: string;
  @ApiProperty({ nullable: true, type: String }) baseUrl: string | null;
  /** where agents configured from it reach the provider, and why: the connection's own, the operator's default or the vendor's */
  effectiveBaseUrl: string;
  @ApiProperty({ enum: ['connection', 'operator', 'vendor'] }) baseUrlSource: string;
  @ApiProperty({ nullable: true, type: String }) defaultModel: string | null;
  @ApiProperty({ nullable: true, type: AiConnectionLastTestDto }) lastTest: AiConnectionLastTestDto | null;
  @ApiProperty({ nullable: true, type: String }) createdByUserId: string | null;
  createdAt: string;
  updatedAt: string;
}

export class AiConnectionListDto {
  /** the caller (`local-board` for the implicit board): personal connections are theirs */
  currentUserId: string;
  @ApiProperty({ type: [AiConnectionDto] }) connections: AiConnectionDto[];
}

export class AiConnectionRunDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ format: 'uuid' }) agentId: string;
  agentName: string;
  @ApiProperty({ enum: ['queued', 'running'] }) status: string;
  @ApiProperty({ nullable: true, type: String }) startedAt: string | null;
  createdAt: string;
}
