import { Injectable } from '@nestjs/common';
import { isSensitiveKey } from '../../common/activity/sanitize';
import type { Actor } from '../../common/auth/actor';
import { notFound } from '../../common/errors/domain-error';
import { slugify } from '../../common/http/slug';
import { isUuid } from '../../common/http/uuid';
import { endpointOutbound } from '../../common/net/outbound-guard';
import { AppConfig } from '../../config/app-config';
import { Db } from '../../database/db.service';
import { SecretsService } from '../secrets/secrets.service';
import type {
  CatalogListDto,
  CreateToolConnectionDto,
  CredentialRefDto,
  HealthCheckDto,
  ToolConnectionDto,
  TransportConfigDto,
  UpdateToolConnectionDto,
} from './dto/tool-connection.dto';
import { RemoteMcpClient } from './remote-mcp-client';
import { ToolConnectionsRepository } from './tool-connections.repository';
import { toCatalogEntryDto, toConnectionDto } from './tool-views';
import { toolError } from './tools.errors';
import type { CredentialRef, ToolConnection, Transport, TransportConfig } from './tool.types';

/** Header and variable names that carry credentials: they go in credentialRefs (secrets), never in plain config. */
const SENSITIVE_NAME = /^(authorization|proxy-authorization|cookie|x-api-key|api-key|x-auth-token)$/i;
const sensitive = (name: string) =>
  SENSITIVE_NAME.test(name) || isSensitiveKey(name.replace(/-/g, '_')) || /(^|[-_])(key|token|secret|password)$/i.test(name);

/** A connection's secret headers (or variables) resolved, with the values to scrub from anything they could reach. */
export interface ResolvedCredentials {
  values: Record<string, string>;
  secrets: string[];
}

/**
 * Company tool connections: remote MCP servers (reached through the gateway with their secret
 * headers) and local commands (run by the agent's CLI), grouped into applications, with the
 * catalog of tools each remote server lists.
 */
@Injectable()
export class ToolConnectionsService {
  constructor(
    private readonly repo: ToolConnectionsRepository,
    private readonly secrets: SecretsService,
    private readonly config: AppConfig,
    private readonly db: Db,
  ) {}

  private get remote(): RemoteMcpClient {
    return new RemoteMcpClient(endpointOutbound(this.config));
  }

  async list(companyId: string): Promise<ToolConnectionDto[]> {
    return (await this.repo.listConnections(companyId)).map(toConnectionDto);
  }

  /**
   * The connection of the route's company (`companyId`: resolved and checked by the guard,
   * undefined when it knows no such connection): 404 for an unknown one and another company's alike.
   */
  async load(companyId: string | undefined, id: string, lock = false): Promise<ToolConnection> {
    const c = companyId && isUuid(id) ? await this.repo.findConnection(companyId, id, lock) : null;
    if (!c) throw notFound('Tool connection');
    return c;
  }

  async get(actor: Actor, companyId: string | undefined, id: string): Promise<ToolConnectionDto> {
    return toConnectionDto(await this.load(companyId, id));
  }

  async create(
    actor: Actor,
    companyId: string,
    dto: CreateToolConnectionDto,
    galleryKey: string | null = null,
  ): Promise<ToolConnectionDto> {
    const transport: Transport = dto.transport ?? 'mcp_remote';
    const transportConfig = this.checkTransport(transport, dto.transportConfig ?? {});
    const credentialRefs = await this.checkCredentials(companyId, transport, dto.credentialRefs ?? []);
    const toolPrefix = await this.prefixFor(companyId, dto.toolPrefix, dto.name);
    const application = dto.applicationId
      ? await this.repo.findApplication(companyId, dto.applicationId)
      : await this.repo.ensureApplication(
          companyId,
          `${toolPrefix}-${Date.now().toString(36)}`,
          dto.applicationName ?? dto.name,
          transport === 'mcp_remote' ? 'mcp_http' : 'mcp_stdio',
        );
    if (!application)
      throw toolError('invalid_reference', 'applicationId is not an application of this company', { field: 'applicationId' });
    const created = await this.repo.insertConnection(companyId, {
      applicationId: application.id,
      name: dto.name,
      toolPrefix,
      transport,
      authKind: dto.authKind ?? (credentialRefs.length ? 'api_key' : 'none'),
      status: dto.enabled === false ? 'disabled' : 'active',
      transportConfig,
      credentialRefs,
      galleryKey,
      approvalTimeoutSec: dto.approvalTimeoutSec ?? 3600,
      createdByAgentId: actor.kind === 'agent' ? actor.agentId : null,
      createdByUserId: actor.kind === 'board' ? actor.userId : null,
    });
    // the catalog is read when the board asks (catalog/refresh, health-check): no call leaves on a create
    return toConnectionDto(created);
  }

  async update(actor: Actor, companyId: string | undefined, id: string, dto: UpdateToolConnectionDto): Promise<ToolConnectionDto> {
    const c = await this.load(companyId, id, true);
    if (c.status === 'archived') throw toolError('connection_archived', 'This connection is archived');
    const transportConfig = dto.transportConfig ? this.checkTransport(c.transport, dto.transportConfig) : undefined;
    const credentialRefs = dto.credentialRefs ? await this.checkCredentials(c.companyId, c.transport, dto.credentialRefs) : undefined;
    if (dto.toolPrefix && dto.toolPrefix !== c.toolPrefix && (await this.repo.prefixTaken(c.companyId, dto.toolPrefix, c.id)))
      throw toolError('tool_prefix_taken', `Another connection of the company uses the tool prefix ${dto.toolPrefix}`);
    const status = dto.status ?? (dto.enabled === undefined ? undefined : dto.enabled ? 'active' : 'disabled');
    const updated = await this.repo.updateConnection(c.companyId, c.id, {
      name: dto.name,
      authKind: dto.authKind,
      transportConfig,
      credentialRefs,
      toolPrefix: dto.toolPrefix,
      approvalTimeoutSec: dto.approvalTimeoutSec,
      status,
    });
    return toConnectionDto(updated);
  }

  /** Archived: no agent reaches it any more; its records stay. */
  async archive(actor: Actor, companyId: string | undefined, id: string): Promise<ToolConnectionDto> {
    const c = await this.load(companyId, id, true);
    await this.repo.archiveConnection(c.companyId, c.id);
    return toConnectionDto((await this.repo.findConnection(c.companyId, c.id))!);
  }

  async catalog(actor: Actor, companyId: string | undefined, id: string): Promise<CatalogListDto> {
    const c = await this.load(companyId, id);
    const entries = await this.repo.listCatalog(c.companyId, c.id);
    return { catalog: entries.map(toCatalogEntryDto), refreshedAt: c.lastCatalogRefreshAt ? c.lastCatalogRefreshAt.toISOString() : null };
  }

  /**
   * Asks the remote server for its tools (through the gateway, with the connection's secrets) and
   * keeps them as the catalog; the answer says whether the server was reachable. A local connection
   * has no catalog here (its command runs only inside an agent's run).
   */
  async refresh(actor: Actor, companyId: string | undefined, id: string): Promise<HealthCheckDto> {
    // the remote call runs outside the request's transaction (no connection held while it waits)
    const c = await this.db.detached(() => this.load(companyId, id));
    const outcome = await this.db.detached(() => this.fetchCatalog(c));
    const fresh = (await this.repo.findConnection(c.companyId, c.id))!;
    const catalog = (await this.repo.listCatalog(c.companyId, c.id)).filter((e) => e.status === 'active').map(toCatalogEntryDto);
    return {
      status: outcome.ok ? 'ok' : 'error',
      message: outcome.message,
      toolCount: fresh.toolCount,
      connection: toConnectionDto(fresh),
      catalog,
      runtimeSlot: null,
    };
  }

  /** The secret values of a connection's credential refs of this placement, by header or variable name. */
  async resolveCredentials(c: ToolConnection, placement: 'header' | 'env'): Promise<ResolvedCredentials> {
    const values: Record<string, string> = {};
    const secrets: string[] = [];
    for (const ref of c.credentialRefs.filter((r) => r.placement === placement)) {
      const { value } = await this.secrets.resolveValue(c.companyId, ref.secretId, ref.version ?? 'latest');
      values[ref.key] = `${ref.prefix ?? ''}${value}`;
      secrets.push(value);
    }
    return { values, secrets };
  }

  /** The headers of a remote connection's requests: its plain headers and its secret ones. */
  async headersFor(c: ToolConnection): Promise<ResolvedCredentials> {
    const resolved = await this.resolveCredentials(c, 'header');
    return { values: { ...(c.transportConfig.headers ?? {}), ...resolved.values }, secrets: resolved.secrets };
  }

  private async fetchCatalog(c: ToolConnection): Promise<{ ok: boolean; message: string | null }> {
    if (c.transport !== 'mcp_remote') {
      await this.repo.recordHealth(c.companyId, c.id, 'unchecked', 'a local command runs only inside an agent run', false);
      return { ok: true, message: 'a local command runs only inside an agent run' };
    }
    let headers: ResolvedCredentials;
    try {
      headers = await this.headersFor(c);
    } catch (err) {
      await this.repo.recordHealth(c.companyId, c.id, 'missing_secret', (err as Error).message, false);
      return { ok: false, message: (err as Error).message };
    }
    try {
      const tools = await this.remote.listTools(c.transportConfig.url ?? '', headers.values);
      await this.db.transaction(async () => {
        await this.repo.replaceCatalog(c.companyId, c.id, tools);
        await this.repo.recordHealth(c.companyId, c.id, 'ok', `${tools.length} tools`, true);
      });
      return { ok: true, message: `${tools.length} tools` };
    } catch (err) {
      const message = scrub(`the server did not answer: ${(err as Error).message}`, headers.secrets).slice(0, 1000);
      await this.repo.recordHealth(c.companyId, c.id, 'error', message, false);
      return { ok: false, message };
    }
  }

  private checkTransport(transport: Transport, t: TransportConfigDto): TransportConfig {
    const bad = (message: string) => toolError('invalid_transport_config', message, { field: 'transportConfig' });
    const strings = (o: unknown, what: string): Record<string, string> => {
      if (o === undefined) return {};
      if (!o || typeof o !== 'object' || Array.isArray(o)) throw bad(`${what} must be an object of strings`);
      for (const [k, v] of Object.entries(o as Record<string, unknown>)) {
        if (typeof v !== 'string' || !/^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,160}$/.test(k) || v.length > 4000 || /[\r\n\0]/.test(v))
          throw bad(`${what}.${k.slice(0, 40)} must be a valid name with a string value`);
        if (sensitive(k))
          throw toolError(
            'sensitive_config',
            `${what}.${k} looks like a credential: keep it as a company secret and name it in credentialRefs`,
            {
              field: `transportConfig.${what}.${k}`,
            },
          );
      }
      return o as Record<string, string>;
    };
    if (transport === 'mcp_remote') {
      if (t.command !== undefined || t.args !== undefined || t.env !== undefined)
        throw bad('a remote connection has a url (and headers), not a command');
      if (!t.url) throw bad('a remote connection needs transportConfig.url');
      let url: URL;
      try {
        url = new URL(t.url);
      } catch {
        throw bad('transportConfig.url is not a URL');
      }
      if (url.username || url.password)
        throw toolError('sensitive_config', 'Credentials in the URL: keep them as company secrets in credentialRefs', {
          field: 'transportConfig.url',
        });
      const { guard, options } = endpointOutbound(this.config);
      const refusal = guard.refusalOf(t.url, options);
      if (refusal) throw toolError('url_not_allowed', refusal.message, { reason: refusal.reason, field: 'transportConfig.url' });
      return { url: t.url, headers: strings(t.headers, 'headers') };
    }
    if (t.url !== undefined || t.headers !== undefined) throw bad('a local connection has a command (and args, env), not a url');
    if (!t.command?.trim() || /[\0\r\n]/.test(t.command)) throw bad('a local connection needs transportConfig.command');
    return { command: t.command, args: t.args ?? [], env: strings(t.env, 'env') };
  }

  private async checkCredentials(companyId: string, transport: Transport, refs: CredentialRefDto[]): Promise<CredentialRef[]> {
    const placement = transport === 'mcp_remote' ? 'header' : 'env';
    const known = await this.secrets.findInCompany(
      companyId,
      refs.map((r) => r.secretId),
    );
    return refs.map((r, i) => {
      if (r.placement !== placement)
        throw toolError('invalid_transport_config', `credentialRefs[${i}]: a ${transport} connection takes ${placement} credentials`, {
          field: `credentialRefs.${i}.placement`,
        });
      if (!known.has(r.secretId))
        throw toolError('invalid_reference', `credentialRefs[${i}].secretId is not a secret of this company`, {
          field: `credentialRefs.${i}.secretId`,
        });
      if (r.version !== undefined && r.version !== 'latest' && !(Number.isInteger(r.version) && r.version > 0))
        throw toolError('invalid_transport_config', `credentialRefs[${i}].version must be "latest" or a positive integer`, {
          field: `credentialRefs.${i}.version`,
        });
      if (placement === 'env' && !/^[A-Za-z_][A-Za-z0-9_]*$/.test(r.key))
        throw toolError('invalid_transport_config', `credentialRefs[${i}].key must be a variable name`, {
          field: `credentialRefs.${i}.key`,
        });
      return { name: r.name, secretId: r.secretId, version: r.version ?? 'latest', placement, key: r.key, prefix: r.prefix ?? null };
    });
  }

  /** The given prefix (409 when taken), else one made from the name, unique in the company. */
  private async prefixFor(companyId: string, given: string | undefined, name: string): Promise<string> {
    if (given) {
      if (await this.repo.prefixTaken(companyId, given))
        throw toolError('tool_prefix_taken', `Another connection of the company uses the tool prefix ${given}`);
      return given;
    }
    let base = slugify(name, 20, 'tools').replace(/-/g, '_');
    if (!/^[a-z]/.test(base)) base = `t_${base}`.slice(0, 20);
    for (let n = 1; ; n++) {
      const candidate = n === 1 ? base : `${base}_${n}`;
      if (!(await this.repo.prefixTaken(companyId, candidate))) return candidate;
    }
  }
}

/** `text` with every secret value replaced (an error message or a result that echoes a header). */
export function scrub(text: string, secrets: string[]): string {
  let out = text;
  for (const s of secrets) if (s.length >= 4) out = out.split(s).join('[redacted]');
  return out;
}
