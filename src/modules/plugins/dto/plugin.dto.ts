import { ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, IsNotEmpty, IsObject, IsOptional, IsString, IsUUID, Matches, Max, MaxLength, Min } from 'class-validator';
import { OmittableNotNull } from '../../../common/http/optional';

/**
 * Where a plugin package comes from: `localPath` (a folder, or a `.tgz`/`.tar.gz` tarball on this
 * machine) or `packageName` (+ `version`, a version or dist-tag) fetched from the npm registry
 * configured by SERVICE_PLUGINS_NPM_REGISTRY. `localPath` wins when both are given.
 */
export class InstallPluginDto {
  @OmittableNotNull() @IsString() @IsNotEmpty() @MaxLength(4096) localPath?: string;
  @OmittableNotNull() @IsString() @IsNotEmpty() @MaxLength(214) packageName?: string;
  @OmittableNotNull() @IsString() @IsNotEmpty() @MaxLength(100) version?: string;
}

/** Upgrade: same as install; with no source, the plugin's recorded source is read again. */
export class UpgradePluginDto extends InstallPluginDto {}

/** Instance config of a plugin, checked against the manifest's configSchema. */
export class PluginConfigDto {
  /** the config object; secret fields (`"x-secret": true`) take a string or `{ type: "secret_ref", companyId, secretId, version }` */
  @IsObject() config: Record<string, unknown>;
  /** the company a plain secret value is stored in (as a company secret); required when a secret field is a string */
  @OmittableNotNull() @IsUUID() secretsCompanyId?: string;
}

export class TestPluginConfigDto {
  @IsObject() config: Record<string, unknown>;
}

/** Runs a tool of an enabled plugin. */
export class ExecuteToolDto {
  /** `pluginKey:toolName`, or the tool name when only one enabled plugin has it */
  @IsString() @IsNotEmpty() @MaxLength(200) @Matches(/^([a-z0-9][a-z0-9._-]*:)?[a-z0-9][a-z0-9._-]*$/) tool: string;
  /** checked against the tool's inputSchema */
  @ApiPropertyOptional({ type: 'object', additionalProperties: true }) @OmittableNotNull() input?: unknown;
  /** the company the call is made for (an agent's own company is always used for agents) */
  @OmittableNotNull() @IsUUID() companyId?: string;
}

/** A data feed or action request from the UI or the bridge. */
export class PluginCallDto {
  @OmittableNotNull() @IsObject() params?: Record<string, unknown>;
  /** company the request is about (company access is checked); without it, instance admin only */
  @OmittableNotNull() @IsUUID() companyId?: string;
}

export class BridgeCallDto extends PluginCallDto {
  /** the data feed or action key declared in the manifest */
  @IsString() @IsNotEmpty() @MaxLength(64) key: string;
}

export class LocalFolderDto {
  /** absolute path; must lie under one of the allowed roots (SERVICE_PLUGINS_FOLDER_ROOTS) */
  @IsString() @IsNotEmpty() @MaxLength(4096) path: string;
}

export class RecentQueryDto {
  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(500) limit?: number;
}

/** A UI slot or launcher as the plugin's manifest declares it. */
export class PluginUiSlotDto {
  /** where it goes, e.g. `dashboard.widget`, `sidebar.launcher` */
  slot: string;
  label: string;
}

/** The UI an enabled plugin contributes (GET /api/plugins/ui-contributions). */
export class PluginUiContributionDto {
  pluginId: string;
  pluginKey: string;
  displayName: string;
  version: string;
  slots: PluginUiSlotDto[];
  launchers: PluginUiSlotDto[];
}
