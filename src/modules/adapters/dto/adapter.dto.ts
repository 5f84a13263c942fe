import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsNotEmpty, IsObject, IsOptional, IsString, Matches, MaxLength, ValidateIf } from 'class-validator';
import { OmittableNotNull } from '../../../common/http/optional';

export class AdapterOverrideStateDto {
  /** wakes of this type's agents are skipped (`adapter_disabled`) */
  disabled: boolean;
  @ApiProperty({ nullable: true, type: String }) reason: string | null;
  /** external types: installs and reinstalls of another version are refused */
  @ApiProperty({ nullable: true, type: String }) pinnedVersion: string | null;
}

export class AdapterPackageDto {
  name: string;
  version: string;
  @ApiProperty({ enum: ['local', 'tarball', 'npm'] }) sourceKind: string;
  /** folder or tarball path, or `name@version` */
  sourceRef: string;
  hasUiParser: boolean;
  /** bumped by install and reinstall (every instance re-fetches) */
  installGeneration: number;
  /** bumped by reload, install and reinstall (every instance re-imports) */
  loadGeneration: number;
  installedAt: string;
  updatedAt: string;
}

export class AdapterLoadStateDto {
  version: string;
  loadGeneration: number;
  loadedAt: string;
}

export class AdapterTypeDto {
  type: string;
  label: string;
  builtIn: boolean;
  /** `builtin` or `external` (the board UI groups and filters by it) */
  @ApiProperty({ enum: ['builtin', 'external'] }) source: 'builtin' | 'external';
  /** force-disabled by the operator (the same as `override.disabled`): the board UI offers no new agents of it */
  disabled: boolean;
  /** how many models the type offers (`GET /api/companies/{id}/adapters/{type}/models`); 0 without a model choice */
  modelsCount: number;
  /** an executor is available on this instance, so runs of this type can start */
  executable: boolean;
  @ApiProperty({ type: Object }) configSchema: Record<string, unknown>;
  /** instance-level configuration merged under each agent's adapterConfig at run time */
  @ApiProperty({ type: Object }) instanceConfig: Record<string, unknown>;
  override: AdapterOverrideStateDto;
  /** the installed package (external types); null for built-in types */
  @ApiProperty({ type: AdapterPackageDto, nullable: true }) package: AdapterPackageDto | null;
  /** what the answering instance has loaded: built-in types always (the service's version, generation 0); external types once imported, else null */
  @ApiPropertyOptional({ type: AdapterLoadStateDto, nullable: true }) loaded?: AdapterLoadStateDto | null;
  /** why the answering instance could not load the package */
  @ApiPropertyOptional({ type: String, nullable: true }) loadError?: string | null;
  /** the code of the load error: `code_tampered` when the installed code changed since install (hash mismatch) */
  @ApiPropertyOptional({ type: String, nullable: true }) loadErrorCode?: string | null;
}

/**
 * Where an adapter package comes from: `localPath` (a folder, copied at install and never loaded in
 * place, or a `.tgz`/`.tar.gz`/`.tar` tarball on the service's machine; 422 `install_source_insecure`
 * when it or a folder above it is writable by others) or `packageName` (+ `version`, a version
 * or dist-tag) fetched from the npm registry of SERVICE_PLUGINS_NPM_REGISTRY. `localPath` wins.
 */
export class InstallAdapterDto {
  @OmittableNotNull() @IsString() @IsNotEmpty() @MaxLength(4096) localPath?: string;
  @OmittableNotNull() @IsString() @IsNotEmpty() @MaxLength(214) packageName?: string;
  @OmittableNotNull() @IsString() @IsNotEmpty() @MaxLength(100) version?: string;
}

/** Replaces the instance-level configuration of the type (checked against its config schema). */
export class PatchAdapterConfigDto {
  @ApiProperty({ type: Object, example: { timeoutSec: 600 } })
  @IsObject()
  config: Record<string, unknown>;
}

/** Operator override; fields left out keep their value. */
export class AdapterOverrideDto {
  /** true: wakes of the type's agents are skipped with reason `adapter_disabled`; false lifts it */
  @OmittableNotNull() @IsBoolean() disabled?: boolean;
  /** shown with the override (kept while disabled) */
  @ApiPropertyOptional({ nullable: true, type: String, maxLength: 500 })
  @IsOptional()
  @ValidateIf((_, v) => v !== null)
  @IsString()
  @MaxLength(500)
  reason?: string | null;
  /** freeze an external type at its installed version (null unpins) */
  @ApiPropertyOptional({ nullable: true, type: String, maxLength: 100 })
  @IsOptional()
  @ValidateIf((_, v) => v !== null)
  @IsString()
  @Matches(/^[0-9A-Za-z.+-]{1,100}$/, { message: 'pinnedVersion must be a version like 1.2.3' })
  pinnedVersion?: string | null;
}
