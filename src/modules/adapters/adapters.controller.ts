import { ApiDomainErrors } from '../../common/errors/api-domain-errors.decorator';
import { ADAPTER_ERRORS } from './adapters.errors';
import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Res } from '@nestjs/common';
import { ApiOkResponse, ApiProduces, ApiTags } from '@nestjs/swagger';
import type { FastifyReply as Response } from 'fastify';
import { InstanceAudit } from '../../common/activity/log-activity.decorator';
import type { Actor } from '../../common/auth/actor';
import { Authorize } from '../../common/auth/authorize.decorator';
import { CurrentActor } from '../../common/auth/current-actor.decorator';
import { notFound } from '../../common/errors/domain-error';
import { AdapterExecutors } from './adapter-executors';
import { AdapterRegistry, AdapterTypeDefinition } from './adapter-registry.service';
import { AdapterSettingsRecord, ExternalAdapterRecord } from './adapters.repository';
import { AdapterOverrideDto, AdapterTypeDto, InstallAdapterDto, PatchAdapterConfigDto } from './dto/adapter.dto';
import { ExternalAdaptersService } from './external-adapters.service';
import { RuntimeSetupService } from './runtimes/runtime-setup.service';
import { VERSION } from '../../version';

/** When this process loaded its built-in adapters (they load with the service). */
const BUILT_INS_LOADED_AT = new Date().toISOString();

/** The adapter registry: built-in types and external packages; administration needs an instance admin. */
@ApiTags('adapters')
@ApiDomainErrors(ADAPTER_ERRORS)
@Controller('adapters')
export class AdaptersController {
  constructor(
    private readonly registry: AdapterRegistry,
    private readonly executors: AdapterExecutors,
    private readonly external: ExternalAdaptersService,
    private readonly setup: RuntimeSetupService,
  ) {}

  private view(
    d: AdapterTypeDefinition | undefined,
    type: string,
    ext: ExternalAdapterRecord | null,
    s: AdapterSettingsRecord | null | undefined,
  ): AdapterTypeDto {
    const builtIn = d?.builtIn ?? false;
    return {
      type,
      label: d?.label ?? ext?.label ?? type,
      builtIn,
      source: builtIn ? 'builtin' : 'external',
      disabled: s?.disabled ?? false,
      modelsCount: this.setup.modelCount(type),
      executable: !!this.executors.get(type),
      configSchema: (d?.configSchema ?? { type: 'object', properties: {} }) as unknown as Record<string, unknown>,
      instanceConfig: s?.config ?? {},
      override: { disabled: s?.disabled ?? false, reason: s?.disabledReason ?? null, pinnedVersion: s?.pinnedVersion ?? null },
      package: ext
        ? {
            name: ext.packageName,
            version: ext.version,
            sourceKind: ext.sourceKind,
            sourceRef: ext.sourceRef,
            hasUiParser: ext.hasUiParser,
            installGeneration: Number(ext.installGeneration),
            loadGeneration: Number(ext.loadGeneration),
            installedAt: ext.createdAt.toISOString(),
            updatedAt: ext.updatedAt.toISOString(),
          }
        : null,
      ...(builtIn ? { loaded: { version: VERSION, loadGeneration: 0, loadedAt: BUILT_INS_LOADED_AT } } : {}),
      ...(ext
        ? {
            loaded: this.external.loadState(type),
            loadError: this.external.loadError(type),
            loadErrorCode: this.external.loadErrorCode(type),
          }
        : {}),
    };
  }

  private async one(type: string): Promise<AdapterTypeDto> {
    const [exts, settings] = await Promise.all([this.external.externals(), this.external.settings()]);
    const ext = exts.find((e) => e.type === type) ?? null;
    const d = this.registry.get(type);
    if (!d && !ext) throw notFound('Adapter type');
    return this.view(d, type, ext, settings.get(type));
  }

  /** Every adapter type: built-in ones and installed packages (also those this instance failed to load), with instance config and overrides. */
  @Get()
  @Authorize({ callers: ['board'] })
  async list(): Promise<AdapterTypeDto[]> {
    const [exts, settings] = await Promise.all([this.external.externals(), this.external.settings()]);
    const types = new Set([...this.registry.list().map((d) => d.type), ...exts.map((e) => e.type)]);
    return [...types].map((type) =>
      this.view(this.registry.get(type), type, exts.find((e) => e.type === type) ?? null, settings.get(type)),
    );
  }

  /**
   * JSON schema of the type's settings (for a settings form), with `fields`: the extra form fields
   * the board UI renders beyond its own for the type; always `[]` (the UI's agent configuration page
   * reads `fields` and fails without it).
   */
  @Get(':type/config-schema')
  @Authorize({ callers: ['board'] })
  configSchema(@Param('type') type: string): Record<string, unknown> {
    const d = this.registry.get(type);
    if (!d) throw notFound('Adapter type');
    return { ...(d.configSchema as unknown as Record<string, unknown>), fields: [] };
  }

  /**
   * Installs an external adapter package (instance admins): a folder (copied, never loaded in place;
   * 422 install_source_insecure when writable by others), a tarball, or an npm package. The package.json has a `serviceAdapter` object (`entry`, optional `uiParser`);
   * the module exports `type`, `label`, `configSchema`, `execute(ctx)` and `testEnvironment(config)`.
   * Every instance loads it. 409 for a built-in or installed type, 422 for an invalid package.
   */
  @Post('install')
  @InstanceAudit('instance.adapter_installed')
  @Authorize({ callers: ['board'] })
  async install(@CurrentActor() actor: Actor, @Body() dto: InstallAdapterDto): Promise<AdapterTypeDto> {
    const row = await this.external.install(
      actor,
      dto.localPath ? { localPath: dto.localPath } : { packageName: dto.packageName, version: dto.version },
    );
    return this.one(row.type);
  }

  /**
   * Re-imports the module from each instance's sealed copy (hash checked: 409 code_tampered when it
   * changed since install): new runs use it, running runs finish on the old. Edits of a local source
   * folder need a reinstall.
   */
  @Post(':type/reload')
  @HttpCode(200)
  @InstanceAudit('instance.adapter_reloaded')
  @Authorize({ callers: ['board'] })
  async reload(@CurrentActor() actor: Actor, @Param('type') type: string): Promise<AdapterTypeDto> {
    await this.external.reload(actor, type);
    return this.one(type);
  }

  /** Re-runs the install from the recorded source (npm: the pinned version, else latest); every instance re-fetches. */
  @Post(':type/reinstall')
  @HttpCode(200)
  @InstanceAudit('instance.adapter_reinstalled')
  @Authorize({ callers: ['board'] })
  async reinstall(@CurrentActor() actor: Actor, @Param('type') type: string): Promise<AdapterTypeDto> {
    await this.external.reinstall(actor, type);
    return this.one(type);
  }

  /** Replaces the type's instance-level configuration, merged under each agent's adapterConfig at run time (the agent's keys win; `env` merges per variable). */
  @Patch(':type')
  @InstanceAudit('instance.adapter_config_updated')
  @Authorize({ callers: ['board'] })
  async patchConfig(
    @CurrentActor() actor: Actor,
    @Param('type') type: string,
    @Body() dto: PatchAdapterConfigDto,
  ): Promise<AdapterTypeDto> {
    await this.external.putConfig(actor, type, dto.config);
    return this.one(type);
  }

  /** Operator override: `disabled` (wakes of the type's agents are skipped with reason `adapter_disabled`), `reason`, `pinnedVersion` (external types). */
  @Patch(':type/override')
  @InstanceAudit('instance.adapter_override_updated')
  @Authorize({ callers: ['board'] })
  async patchOverride(@CurrentActor() actor: Actor, @Param('type') type: string, @Body() dto: AdapterOverrideDto): Promise<AdapterTypeDto> {
    await this.external.putOverride(actor, type, dto);
    return this.one(type);
  }

  /** Removes an external adapter type from every instance (instance admins); built-in types cannot be deleted (409). */
  @Delete(':type')
  @InstanceAudit('instance.adapter_removed')
  @Authorize({ callers: ['board'] })
  async remove(@CurrentActor() actor: Actor, @Param('type') type: string): Promise<AdapterTypeDto> {
    const before = await this.one(type).catch(() => null);
    const row = await this.external.remove(actor, type);
    return before ?? this.view(undefined, type, row, null);
  }

  /** The package's UI parser script (JavaScript); 404 when the type has none. */
  @Get(':type/ui-parser.js')
  @Authorize({ callers: ['board'] })
  @ApiProduces('application/javascript')
  @ApiOkResponse({ description: 'JavaScript source', schema: { type: 'string' } })
  uiParser(@Param('type') type: string, @Res({ passthrough: true }) res: Response): string {
    const script = this.external.uiParser(type);
    if (script === null) throw notFound('UI parser script');
    void res.header('Content-Type', 'application/javascript; charset=utf-8').header('Cache-Control', 'no-cache');
    return script;
  }
}
