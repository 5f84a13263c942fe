import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsNotEmpty, IsObject, IsOptional, IsString, IsUUID, Matches, MaxLength } from 'class-validator';
import { RefersTo } from '../../../common/references/refers-to.decorator';

export class ModelOptionDto {
  id: string;
  label: string;
}

export class ModelsQueryDto {
  /** accepted for the board UI; the list is static per runtime */
  @IsOptional() @IsString() @MaxLength(10) refresh?: string;
  @IsOptional() @IsString() @MaxLength(100) provider?: string;
  @IsOptional() @IsString() @MaxLength(200) environmentId?: string;
}

export class DetectModelResponseDto {
  /** the model the CLI would use without `adapterConfig.model` (its own settings or env), when known */
  @ApiProperty({ nullable: true, type: String }) model: string | null;
  candidates: string[];
  /** where the model was found: `instance_config`, `cli_settings` or `default` */
  @ApiProperty({ nullable: true, type: String }) source: string | null;
}

export class TestEnvironmentDto {
  /** the config to test (the form's current values); env values may be secret references */
  @IsOptional() @IsObject() adapterConfig?: Record<string, unknown>;
  /**
   * the agent the test is for (its edit form): the CLI is checked as that agent's OS identity would run it, and the
   * test prompt's usage is booked to it; its stored config is not read (send the config to test in `adapterConfig`)
   */
  @RefersTo('agent') @IsOptional() @IsUUID() agentId?: string;
  /** values used for this test only (never stored), e.g. `{ "ANTHROPIC_API_KEY": "…" }` */
  @IsOptional() @IsObject() testCredentials?: Record<string, unknown>;
  /** accepted for the board UI: only the local environment exists here */
  @IsOptional() @IsString() @MaxLength(200) environmentId?: string;
  @IsOptional() @IsObject() aiConnection?: Record<string, unknown>;
}

export class EnvironmentCheckDto {
  code: string;
  @ApiProperty({ enum: ['info', 'warn', 'error'] }) level: string;
  message: string;
  @ApiPropertyOptional() detail?: string;
  @ApiPropertyOptional() hint?: string;
}

export class EnvironmentReportDto {
  adapterType: string;
  testedAt: string;
  @ApiProperty({ enum: ['pass', 'warn', 'fail'] }) status: string;
  @ApiProperty({ type: [EnvironmentCheckDto] }) checks: EnvironmentCheckDto[];
}

export class StartLoginDto {
  /**
   * The API key to sign in with. Required: this service supports the API-key login only (stored as
   * a company secret). Browser and subscription (OAuth) logins are not supported: 422 `login_method_unsupported`.
   */
  @ApiPropertyOptional({ writeOnly: true })
  @IsOptional()
  @IsString()
  @IsNotEmpty()
  @MaxLength(4096)
  apiKey?: string;
  /** the variable the key is bound to (default: the runtime's key variable, e.g. ANTHROPIC_API_KEY) */
  @IsOptional() @IsString() @Matches(/^[A-Za-z_][A-Za-z0-9_]*$/) @MaxLength(100) envName?: string;
  @ApiPropertyOptional({ enum: ['api_key'] }) @IsOptional() @IsIn(['api_key', 'subscription']) method?: string;
  @IsOptional() @IsString() @MaxLength(200) environmentId?: string;
  @IsOptional() @IsObject() aiConnection?: Record<string, unknown>;
}

export class LoginSessionDto {
  /** the id of the company secret holding the key */
  sessionId: string;
  adapterType: string;
  @ApiProperty({ enum: ['authenticated'] }) status: string;
  @ApiProperty({ enum: ['api_key'] }) method: string;
  /** what to put into the agent's `adapterConfig.env`: the key as a secret reference */
  @ApiProperty({ type: Object }) envBinding: Record<string, { type: 'secret_ref'; secretId: string; version: 'latest' }>;
  /** browser logins only: never set here */
  @ApiProperty({ nullable: true, type: Object }) prompt: null;
  @ApiProperty({ nullable: true, type: String }) environmentId: string | null;
  createdAt: string;
}

export class AuthSignalDto {
  /** present: a key is configured for the type on this instance or the CLI has a stored login; absent: neither */
  @ApiProperty({ enum: ['present', 'absent', 'unknown'] }) status: string;
  @ApiProperty({ nullable: true, type: String }) source: string | null;
}
