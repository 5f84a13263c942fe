import { ApiProperty } from '@nestjs/swagger';

/** A provider's health: whether this service can store and read values with it now. */
export class SecretProviderHealthDto {
  provider: string;
  @ApiProperty({ enum: ['ok', 'warn', 'error'] }) status: 'ok' | 'warn' | 'error';
  message: string;
  @ApiProperty({ type: [String] }) warnings: string[];
  @ApiProperty({ type: [String] }) backupGuidance: string[];
  @ApiProperty({ type: 'object', additionalProperties: true }) details: Record<string, unknown>;
}

export class SecretProvidersHealthDto {
  @ApiProperty({ type: [SecretProviderHealthDto] }) providers: SecretProviderHealthDto[];
}

/**
 * A provider as a vault configuration of the company. This service's providers are built in and
 * configured by the operator (the environment), so each is listed once, read-only.
 */
export class SecretProviderConfigDto {
  /** the provider id (`local_encrypted`, `env`, …) */
  id: string;
  companyId: string;
  provider: string;
  displayName: string;
  @ApiProperty({ enum: ['ready', 'unavailable'] }) status: 'ready' | 'unavailable';
  /** the deployment default (new secrets that name no provider use it) */
  isDefault: boolean;
  /** always true: providers are built in */
  builtIn: boolean;
  @ApiProperty({ type: 'object', additionalProperties: true }) config: Record<string, unknown>;
  @ApiProperty({ enum: ['ok', 'warn', 'error'] }) healthStatus: string;
  healthCheckedAt: string;
  healthMessage: string;
  @ApiProperty({ type: 'object', additionalProperties: true }) healthDetails: Record<string, unknown>;
  @ApiProperty({ nullable: true, type: String }) disabledAt: null;
}

export class ProviderConfigHealthCheckDto {
  configId: string;
  provider: string;
  @ApiProperty({ enum: ['ok', 'warn', 'error'] }) status: string;
  message: string;
  @ApiProperty({ type: 'object', additionalProperties: true }) details: Record<string, unknown>;
  checkedAt: string;
}
