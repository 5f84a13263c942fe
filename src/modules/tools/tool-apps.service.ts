import { Injectable } from '@nestjs/common';
import type { Actor } from '../../common/auth/actor';
import { isUuid } from '../../common/http/uuid';
import { SecretsService } from '../secrets/secrets.service';
import type { ConnectAppDto, CredentialRefDto, ToolApplicationDto, ToolConnectionDto } from './dto/tool-connection.dto';
import type { ToolGalleryDto } from './dto/tool-gallery.dto';
import { ToolConnectionsRepository } from './tool-connections.repository';
import { ToolConnectionsService } from './tool-connections.service';
import { galleryMethod, TOOL_GALLERY } from './tool-gallery';
import { toApplicationDto } from './tool-views';
import { toolError } from './tools.errors';

/** The gallery of well-known servers, connecting one from its preset, and the applications connections are grouped under. */
@Injectable()
export class ToolAppsService {
  constructor(
    private readonly connections: ToolConnectionsService,
    private readonly repo: ToolConnectionsRepository,
    private readonly secrets: SecretsService,
  ) {}

  gallery(): ToolGalleryDto {
    return {
      capabilities: {
        canCreateOrganizationGrant: false,
        organizationGrantReason: 'Connections are company-wide',
        canSetCompanyInstall: true,
        companyInstallReason: null,
      },
      credentialSources: {},
      apps: TOOL_GALLERY as unknown as Record<string, unknown>[],
    };
  }

  async applications(companyId: string): Promise<ToolApplicationDto[]> {
    return (await this.repo.listApplications(companyId)).map(toApplicationDto);
  }

  /** A connection from a preset: each credential field's value becomes a company secret (or names an existing one). */
  async connect(actor: Actor, companyId: string, dto: ConnectAppDto): Promise<ToolConnectionDto> {
    const found = galleryMethod(dto.galleryKey, dto.connectionMethodKey);
    if (!found)
      throw toolError(
        'invalid_reference',
        `No gallery app ${dto.galleryKey}${dto.connectionMethodKey ? ` with method ${dto.connectionMethodKey}` : ''}`,
        { field: 'galleryKey' },
      );
    const { app, method } = found;
    const refs: CredentialRefDto[] = [];
    const fields = method.credentialFields ?? [];
    const given = Object.entries(dto.credentialValues ?? {});
    for (const field of fields) {
      // a one-key preset takes the one value given, whatever the client called its field (the UI's own gallery names differ)
      const value = dto.credentialValues?.[field.key] ?? (fields.length === 1 && given.length === 1 ? given[0][1] : undefined);
      const existing = dto.credentialSecretIds?.[field.key];
      let secretId: string | undefined;
      if (typeof existing === 'string' && isUuid(existing)) secretId = existing;
      else if (typeof value === 'string' && value.length > 0 && value.length <= 65_536)
        secretId = (await this.secrets.createFromRawValue(actor, companyId, `${app.slug}-${field.key}`, value)).id;
      if (!secretId) {
        if (field.required)
          throw toolError('invalid_transport_config', `${field.label} is required`, { field: `credentialValues.${field.key}` });
        continue;
      }
      const placement = method.keyPlacement?.location ?? (method.transport === 'mcp_remote' ? 'header' : 'env');
      refs.push({
        name: field.label,
        secretId,
        placement,
        key: method.keyPlacement?.name ?? 'Authorization',
        prefix: method.keyPlacement?.prefix ?? null,
      });
    }
    const remote = method.transport === 'mcp_remote';
    return this.connections.create(
      actor,
      companyId,
      {
        name: dto.name ?? app.name,
        transport: method.transport,
        authKind: refs.length ? 'api_key' : 'none',
        transportConfig: remote
          ? { url: method.defaults.serverUrl }
          : { command: method.defaults.command, args: [...(method.defaults.args ?? []), ...(dto.extraArgs ?? [])] },
        credentialRefs: refs,
        applicationName: app.name,
      },
      app.slug,
    );
  }
}
