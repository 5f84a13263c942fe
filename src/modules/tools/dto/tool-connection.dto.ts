import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
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
  Matches,
  Max,
  MaxLength,
  Min,
  ValidateNested,
} from 'class-validator';
import { OmittableNotNull } from '../../../common/http/optional';
import { TRANSPORTS } from '../tool.types';

export class CredentialRefDto {
  /** a label for the board */
  @IsString() @IsNotEmpty() @MaxLength(120) name: string;
  /** a secret of the company */
  @IsUUID() secretId: string;
  /** `latest` (default) or a version number */
  @ApiPropertyOptional({
    oneOf: [
      { type: 'string', enum: ['latest'] },
      { type: 'integer', minimum: 1 },
    ],
  })
  @IsOptional()
  version?: 'latest' | number;
  /** `header` (remote: a header of the server's requests) or `env` (local: a variable of the command) */
  @ApiProperty({ enum: ['header', 'env'] }) @IsIn(['header', 'env']) placement: 'header' | 'env';
  /** the header or variable name */
  @IsString() @Matches(/^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,160}$/) key: string;
  /** put before the value, e.g. `Bearer ` */
  @ApiPropertyOptional({ nullable: true, type: String }) @IsOptional() @IsString() @MaxLength(120) prefix?: string | null;
}

export class TransportConfigDto {
  /** remote: the server's Streamable HTTP endpoint (http or https) */
  @IsOptional() @IsString() @MaxLength(2000) url?: string;
  /** remote: headers that are not secret (secrets go in credentialRefs) */
  @ApiPropertyOptional({ type: 'object', additionalProperties: { type: 'string' } }) @IsOptional() @IsObject() headers?: Record<
    string,
    string
  >;
  /** local: the command the agent's CLI starts */
  @IsOptional() @IsString() @MaxLength(2000) command?: string;
  @IsOptional() @IsArray() @ArrayMaxSize(100) @IsString({ each: true }) @MaxLength(2000, { each: true }) args?: string[];
  /** local: variables that are not secret (secrets go in credentialRefs) */
  @ApiPropertyOptional({ type: 'object', additionalProperties: { type: 'string' } }) @IsOptional() @IsObject() env?: Record<string, string>;
}

export class CreateToolConnectionDto {
  @IsString() @IsNotEmpty() @MaxLength(160) name: string;
  /** `mcp_remote` (default): reached through the service's gateway; `local_stdio`: a command run by the agent's CLI */
  @ApiPropertyOptional({ enum: TRANSPORTS, default: 'mcp_remote' }) @IsOptional() @IsIn(TRANSPORTS) transport?: (typeof TRANSPORTS)[number];
  @ApiPropertyOptional({ enum: ['none', 'api_key'], default: 'none' }) @IsOptional() @IsIn(['none', 'api_key']) authKind?:
    'none' | 'api_key';
  @ApiPropertyOptional({ type: TransportConfigDto })
  @IsOptional()
  @ValidateNested()
  @Type(() => TransportConfigDto)
  transportConfig?: TransportConfigDto;
  @ApiPropertyOptional({ type: [CredentialRefDto] })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(20)
  @ValidateNested({ each: true })
  @Type(() => CredentialRefDto)
  credentialRefs?: CredentialRefDto[];
  /** the prefix of this connection's tools for agents (`<prefix>__<tool>`); default: from the name */
  @IsOptional() @IsString() @Matches(/^[a-z][a-z0-9_]{0,23}$/) toolPrefix?: string;
  /** group under this application (default: an application of its own) */
  @IsOptional() @IsUUID() applicationId?: string;
  @IsOptional() @IsString() @IsNotEmpty() @MaxLength(160) applicationName?: string;
  /** how long a call of an "ask" tool waits for the board before it times out (default 3600) */
  @IsOptional() @IsInt() @Min(1) @Max(604_800) approvalTimeoutSec?: number;
  /** default true */
  @IsOptional() @IsBoolean() enabled?: boolean;
}

export class UpdateToolConnectionDto {
  @OmittableNotNull() @IsString() @IsNotEmpty() @MaxLength(160) name?: string;
  @ApiPropertyOptional({ enum: ['none', 'api_key'] }) @OmittableNotNull() @IsIn(['none', 'api_key']) authKind?: 'none' | 'api_key';
  @ApiPropertyOptional({ type: TransportConfigDto })
  @OmittableNotNull()
  @ValidateNested()
  @Type(() => TransportConfigDto)
  transportConfig?: TransportConfigDto;
  @ApiPropertyOptional({ type: [CredentialRefDto] })
  @OmittableNotNull()
  @IsArray()
  @ArrayMaxSize(20)
  @ValidateNested({ each: true })
  @Type(() => CredentialRefDto)
  credentialRefs?: CredentialRefDto[];
  @OmittableNotNull() @IsString() @Matches(/^[a-z][a-z0-9_]{0,23}$/) toolPrefix?: string;
  @OmittableNotNull() @IsInt() @Min(1) @Max(604_800) approvalTimeoutSec?: number;
  @OmittableNotNull() @IsBoolean() enabled?: boolean;
  @ApiPropertyOptional({ enum: ['active', 'disabled'] }) @OmittableNotNull() @IsIn(['active', 'disabled']) status?: 'active' | 'disabled';
}

/** The board UI's app setup: a gallery preset and the values of its credential fields. */
export class ConnectAppDto {
  /** the gallery app (GET …/tools/gallery) */
  @IsString() @IsNotEmpty() @MaxLength(120) galleryKey: string;
  @IsOptional() @IsString() @MaxLength(120) connectionMethodKey?: string;
  @IsOptional() @IsString() @IsNotEmpty() @MaxLength(160) name?: string;
  /** field key -> the secret's value (stored as a new company secret) */
  @ApiPropertyOptional({ type: 'object', additionalProperties: { type: 'string' } }) @IsOptional() @IsObject() credentialValues?: Record<
    string,
    string
  >;
  /** field key -> an existing company secret's id, instead of a value */
  @ApiPropertyOptional({ type: 'object', additionalProperties: { type: 'string', format: 'uuid' } })
  @IsOptional()
  @IsObject()
  credentialSecretIds?: Record<string, string>;
  /** the local command's arguments after the preset's (e.g. a folder) */
  @IsOptional() @IsArray() @ArrayMaxSize(50) @IsString({ each: true }) @MaxLength(2000, { each: true }) extraArgs?: string[];
}

export class ToolConnectionDto {
  id: string;
  companyId: string;
  applicationId: string;
  applicationName: string;
  name: string;
  /** the connection's name in agents' tool names (`<toolPrefix>__<tool>`) */
  toolPrefix: string;
  uid: string;
  @ApiProperty({ enum: ['managed'] }) connectionKind: string;
  @ApiProperty({ enum: ['tool'] }) connectionPurpose: string;
  @ApiProperty({ enum: ['customer'] }) ownership: string;
  @ApiProperty({ enum: TRANSPORTS }) transport: string;
  @ApiProperty({ enum: ['none', 'api_key'] }) authKind: string;
  credentialSource: string;
  @ApiProperty({ nullable: true, type: Object }) externalCredential: null;
  credentialPolicy: string;
  @ApiProperty({ enum: ['active', 'disabled', 'archived'] }) status: string;
  enabled: boolean;
  /** same as transportConfig */
  @ApiProperty({ type: TransportConfigDto }) config: TransportConfigDto;
  @ApiProperty({ type: TransportConfigDto }) transportConfig: TransportConfigDto;
  @ApiProperty({ type: [CredentialRefDto] }) credentialRefs: CredentialRefDto[];
  @ApiProperty({ type: [Object] }) credentialSecretRefs: unknown[];
  @ApiProperty({ nullable: true, type: String }) galleryKey: string | null;
  approvalTimeoutSec: number;
  /** unchecked, ok, error */
  healthStatus: string;
  @ApiProperty({ nullable: true, type: String }) healthMessage: string | null;
  @ApiProperty({ nullable: true, type: String }) healthCheckedAt: string | null;
  @ApiProperty({ nullable: true, type: String }) lastHealthAt: string | null;
  @ApiProperty({ nullable: true, type: String }) lastCatalogRefreshAt: string | null;
  @ApiProperty({ nullable: true, type: String }) lastError: string | null;
  @ApiProperty({ nullable: true, type: String }) lastUsedAt: string | null;
  /** active tools in the catalog (remote connections) */
  toolCount: number;
  @ApiProperty({ type: [Object] }) installs: unknown[];
  @ApiProperty({ nullable: true, type: String }) createdByAgentId: string | null;
  @ApiProperty({ nullable: true, type: String }) createdByUserId: string | null;
  createdAt: string;
  updatedAt: string;
}

export class ToolConnectionListDto {
  @ApiProperty({ type: [ToolConnectionDto] }) connections: ToolConnectionDto[];
}

export class ToolApplicationDto {
  id: string;
  companyId: string;
  applicationKey: string;
  name: string;
  @ApiProperty({ nullable: true, type: String }) description: string | null;
  @ApiProperty({ enum: ['mcp_http', 'mcp_stdio'] }) type: string;
  status: string;
  @ApiProperty({ nullable: true, type: String }) pluginId: null;
  @ApiProperty({ nullable: true, type: String }) ownerAgentId: null;
  @ApiProperty({ nullable: true, type: String }) ownerUserId: null;
  @ApiProperty({ type: Object }) metadata: Record<string, unknown>;
  @ApiProperty({ nullable: true, type: String }) archivedAt: string | null;
  createdAt: string;
  updatedAt: string;
}

export class ToolApplicationListDto {
  @ApiProperty({ type: [ToolApplicationDto] }) applications: ToolApplicationDto[];
}

export class CatalogEntryDto {
  id: string;
  companyId: string;
  applicationId: string;
  connectionId: string;
  @ApiProperty({ enum: ['tool'] }) entryKind: string;
  /** the tool's name on its server (same as toolName) */
  name: string;
  toolName: string;
  @ApiProperty({ nullable: true, type: String }) title: string | null;
  @ApiProperty({ nullable: true, type: String }) description: string | null;
  @ApiProperty({ nullable: true, type: Object }) inputSchema: Record<string, unknown> | null;
  @ApiProperty({ nullable: true, type: Object }) outputSchema: null;
  /** the server's hints (readOnlyHint, destructiveHint, …) */
  @ApiProperty({ type: Object }) annotations: Record<string, unknown>;
  @ApiProperty({ enum: ['read', 'write', 'destructive'] }) riskLevel: string;
  isReadOnly: boolean;
  isWrite: boolean;
  isDestructive: boolean;
  /** `removed`: no longer listed by the server */
  @ApiProperty({ enum: ['active', 'removed'] }) status: string;
  firstSeenAt: string;
  lastSeenAt: string;
  createdAt: string;
  updatedAt: string;
}

export class CatalogListDto {
  @ApiProperty({ type: [CatalogEntryDto] }) catalog: CatalogEntryDto[];
  @ApiProperty({ nullable: true, type: String }) refreshedAt: string | null;
}

export class HealthCheckDto {
  @ApiProperty({ enum: ['ok', 'error'] }) status: string;
  @ApiProperty({ nullable: true, type: String }) message: string | null;
  toolCount: number;
  @ApiProperty({ type: ToolConnectionDto }) connection: ToolConnectionDto;
  /** the catalog after the refresh */
  @ApiProperty({ type: [CatalogEntryDto] }) catalog: CatalogEntryDto[];
  /** local servers run inside agents' CLIs: no runtime slot here */
  @ApiProperty({ nullable: true, type: Object }) runtimeSlot: null;
}
