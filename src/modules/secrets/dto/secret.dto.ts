import { OmittableNotNull } from '../../../common/http/optional';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsNotEmpty, IsOptional, IsString, MaxLength, ValidateIf } from 'class-validator';

export class CreateSecretDto {
  @IsString() @IsNotEmpty() @MaxLength(200) name: string;
  /** the plaintext; stored encrypted (local_encrypted) and never returned */
  @ApiProperty({ writeOnly: true })
  @IsString()
  @MaxLength(65_536)
  value: string;
  /** provider id from GET secret-providers; omitted: the deployment default if valid, else `local_encrypted` */
  @IsOptional() @IsString() @IsNotEmpty() @MaxLength(100) provider?: string;
  @IsOptional() @ValidateIf((_, v) => v !== null) @IsString() @MaxLength(10_000) description?: string | null;
  /** required by providers whose descriptor has `requiresExternalRef` */
  @IsOptional() @ValidateIf((_, v) => v !== null) @IsString() @IsNotEmpty() @MaxLength(1000) externalRef?: string | null;
}

export class UpdateSecretDto {
  @OmittableNotNull() @IsString() @IsNotEmpty() @MaxLength(200) name?: string;
  @IsOptional() @ValidateIf((_, v) => v !== null) @IsString() @MaxLength(10_000) description?: string | null;
  @IsOptional() @ValidateIf((_, v) => v !== null) @IsString() @IsNotEmpty() @MaxLength(1000) externalRef?: string | null;
}

export class RotateSecretDto {
  @ApiProperty({ writeOnly: true })
  @IsString()
  @MaxLength(65_536)
  value: string;
  /** omitted keeps the existing reference */
  @IsOptional() @IsString() @IsNotEmpty() @MaxLength(1000) externalRef?: string;
}

export class SecretProviderDto {
  id: string;
  label: string;
  requiresExternalRef: boolean;
}

/** Metadata only: no route returns a value from here. */
export class SecretResponseDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ format: 'uuid' }) companyId: string;
  name: string;
  /** the name again, under the key the board UI matches to an env variable (its new-agent form offers a secret named `ANTHROPIC_API_KEY` as a saved key) */
  key: string;
  /** always `company`: secrets belong to a company (the board UI also knows per-user secrets, which this service has not) */
  @ApiProperty({ enum: ['company'] }) scope: 'company';
  /** always `active`: a deleted secret is gone */
  @ApiProperty({ enum: ['active'] }) status: 'active';
  provider: string;
  @ApiProperty({ nullable: true, type: String }) externalRef: string | null;
  latestVersion: number;
  @ApiProperty({ nullable: true, type: String }) description: string | null;
  @ApiProperty({ nullable: true, type: String, format: 'uuid' }) createdByAgentId: string | null;
  @ApiProperty({ nullable: true, type: String }) createdByUserId: string | null;
  createdAt: string;
  updatedAt: string;
}

export class GrantedSecretDto {
  /** the alias: the secret's key (its name), the same whichever variable or config path binds it; `POST …/secrets/{key}/value` reads it */
  key: string;
  name: string;
  @ApiProperty({ nullable: true, type: String }) description: string | null;
  @ApiProperty({ enum: ['env', 'api', 'both'] }) delivery: string;
  @ApiPropertyOptional({ enum: ['api_key', 'token', 'password', 'connection_string', 'certificate', 'generic'] }) projectionClass: string;
  latestVersion: number;
  @ApiProperty({ oneOf: [{ type: 'string', enum: ['latest'] }, { type: 'integer' }] }) versionSelector: 'latest' | number;
  resolvedVersion: number;
}

export class GrantedSecretListDto {
  @ApiProperty({ type: [GrantedSecretDto] }) secrets: GrantedSecretDto[];
}

export class SecretValueDto {
  key: string;
  value: string;
  version: number;
}
