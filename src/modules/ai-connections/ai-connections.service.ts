import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { Actor } from '../../common/auth/actor';
import { badRequest, notFound } from '../../common/errors/domain-error';
import { endpointOutbound, type OutboundTarget } from '../../common/net/outbound-guard';
import { AppConfig } from '../../config/app-config';
import { modelProvider } from '../adapters/runtimes/model-providers';
import { AgentsService } from '../agents/agents.service';
import { HeartbeatRunsService } from '../heartbeat/heartbeat-runs.service';
import { SecretsService } from '../secrets/secrets.service';
import { AiConnectionBindings, userOf } from './ai-connection-bindings.service';
import { aiConnectionError } from './ai-connections.errors';
import { AiConnectionsRepository, type AiConnectionRecord } from './ai-connections.repository';
import type {
  AiConnectionDto,
  AiConnectionListDto,
  AiConnectionRunDto,
  AiConnectionTestDto,
  CreateAiConnectionDto,
  UpdateAiConnectionDto,
} from './dto/ai-connection.dto';
import { probeProvider } from './provider-api';

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * A company's AI connections: model-provider accounts (provider, API key kept as a company secret,
 * optional base URL and default model) that agents are configured from. A personal connection is
 * its owner's, and their default for its provider when made; a shared one serves every board member.
 */
@Injectable()
export class AiConnectionsService {
  private readonly outbound: OutboundTarget;

  constructor(
    private readonly repo: AiConnectionsRepository,
    private readonly bindings: AiConnectionBindings,
    private readonly secrets: SecretsService,
    private readonly agents: AgentsService,
    private readonly runs: HeartbeatRunsService,
    config: AppConfig,
  ) {
    this.outbound = endpointOutbound(config);
  }

  view(c: AiConnectionRecord): AiConnectionDto {
    const p = this.bindings.provider(c);
    const base = this.bindings.baseUrl(c);
    return {
      id: c.id,
      companyId: c.companyId,
      provider: c.provider,
      method: c.method,
      name: c.name,
      ownership: c.ownership,
      ownerUserId: c.ownerUserId,
      grantId: c.id,
      isDefault: c.isDefault,
      status: c.secretId ? 'connected' : 'key_missing',
      secretId: c.secretId,
      keyEnv: p.keyEnv,
      baseUrl: c.baseUrl,
      effectiveBaseUrl: base.url,
      baseUrlSource: base.source,
      defaultModel: c.defaultModel,
      lastTest:
        c.lastTestStatus && c.lastTestedAt ? { status: c.lastTestStatus, message: c.lastTestMessage, testedAt: c.lastTestedAt } : null,
      createdByUserId: c.createdByUserId,
      createdAt: c.createdAt,
      updatedAt: c.updatedAt,
    };
  }

  async list(actor: Actor, companyId: string): Promise<AiConnectionListDto> {
    const userId = userOf(actor) ?? '';
    return { currentUserId: userId, connections: (await this.repo.visible(companyId, userId)).map((c) => this.view(c)) };
  }

  /** A connection the caller may see (shared, or their own personal one); 404 otherwise, as for another company's. */
  private async load(actor: Actor, companyId: string, id: string): Promise<AiConnectionRecord> {
    const c = await this.bindings.visible(companyId, id, userOf(actor));
    if (!c) throw notFound('AI connection');
    return c;
  }

  async get(actor: Actor, companyId: string, id: string): Promise<AiConnectionDto> {
    return this.view(await this.load(actor, companyId, id));
  }

  /** A base URL the destination policy allows (checked without DNS here; the connection is checked again when made). */
  private checkedBaseUrl(raw: string | null | undefined): string | null | undefined {
    if (raw === undefined || raw === null) return raw;
    const field = 'baseUrl';
    let u: URL;
    try {
      u = new URL(raw.trim());
    } catch {
      throw badRequest(
        'baseUrl must be an http(s) URL',
        { field, fields: [{ field, messages: ['must be an http(s) URL'] }] },
        'validation_failed',
      );
    }
    if ((u.protocol !== 'http:' && u.protocol !== 'https:') || u.username || u.password)
      throw badRequest(
        'baseUrl must be an http(s) URL without credentials',
        { field, fields: [{ field, messages: ['must be an http(s) URL'] }] },
        'validation_failed',
      );
    const refused = this.outbound.guard.refusalOf(u.toString(), this.outbound.options);
    if (refused) throw aiConnectionError('url_not_allowed', refused.message, { field, reason: refused.reason });
    return u.toString().replace(/\/+$/, '');
  }

  private async storeKey(actor: Actor, companyId: string, provider: string, name: string, key: string): Promise<string> {
    const secret = await this.secrets.create(actor, companyId, {
      name: `ai-connection-${provider}-${randomUUID().slice(0, 8)}`,
      value: key,
      description: `API key of the AI connection "${name}"`,
    });
    return secret.id;
  }

  /** Connects a provider with an API key (or, with `connectionId`, replaces the key of an existing connection). */
  async create(actor: Actor, companyId: string, dto: CreateAiConnectionDto): Promise<AiConnectionDto> {
    if (dto.method !== 'api_key' || dto.loginSessionId)
      throw aiConnectionError(
        'login_method_unsupported',
        'Only API-key connections are supported here: send method "api_key" with apiKey. Browser and subscription sign-ins are not supported.',
        { field: 'method' },
      );
    const provider = modelProvider(dto.provider)!;
    if (dto.connectionId) return this.reconnect(actor, companyId, dto.connectionId, provider.id, dto);
    if (!dto.apiKey)
      throw badRequest(
        'apiKey is required',
        { field: 'apiKey', fields: [{ field: 'apiKey', messages: ['apiKey is required'] }] },
        'validation_failed',
      );
    const baseUrl = this.checkedBaseUrl(dto.baseUrl) ?? null;
    const userId = userOf(actor);
    const ownership = dto.ownership === 'personal' && userId ? 'personal' : 'shared';
    const secretId = await this.storeKey(actor, companyId, provider.id, dto.name.trim(), dto.apiKey);
    const c = await this.repo.insert(companyId, {
      provider: provider.id,
      name: dto.name.trim(),
      ownership,
      ownerUserId: ownership === 'personal' ? userId : null,
      secretId,
      baseUrl,
      defaultModel: dto.defaultModel ?? null,
      createdByUserId: userId,
    });
    // a key you just connected is what you use; a shared one becomes the company's default when it has none
    if (ownership === 'personal' || !(await this.repo.defaultFor(companyId, provider.id, null))) await this.repo.makeDefault(companyId, c);
    return this.view((await this.repo.get(companyId, c.id))!);
  }

  private async reconnect(
    actor: Actor,
    companyId: string,
    id: string,
    provider: string,
    dto: CreateAiConnectionDto,
  ): Promise<AiConnectionDto> {
    const c = await this.load(actor, companyId, id);
    if (c.provider !== provider)
      throw aiConnectionError('ai_connection_unavailable', `AI connection ${id} is not a ${provider} connection`, {
        field: 'connectionId',
      });
    return this.update(actor, companyId, id, { apiKey: dto.apiKey, name: dto.name, baseUrl: dto.baseUrl, defaultModel: dto.defaultModel });
  }

  async update(actor: Actor, companyId: string, id: string, dto: UpdateAiConnectionDto): Promise<AiConnectionDto> {
    const c = await this.load(actor, companyId, id);
    let secretId: string | undefined;
    if (dto.apiKey !== undefined) {
      if (c.secretId) await this.secrets.rotate(actor, companyId, c.secretId, { value: dto.apiKey });
      else secretId = await this.storeKey(actor, companyId, c.provider, dto.name ?? c.name, dto.apiKey);
    }
    const updated = await this.repo.update(companyId, id, {
      name: dto.name?.trim(),
      secretId,
      baseUrl: this.checkedBaseUrl(dto.baseUrl),
      defaultModel: dto.defaultModel,
    });
    return this.view(updated);
  }

  /** Deletes the connection and its key (agents configured from it fail their next run until reconfigured). */
  async remove(actor: Actor, companyId: string, id: string): Promise<AiConnectionDto> {
    const c = await this.load(actor, companyId, id);
    await this.repo.delete(companyId, id);
    if (c.secretId) await this.secrets.remove(actor, companyId, c.secretId);
    return this.view({ ...c, secretId: null, isDefault: false });
  }

  /** Asks the provider which models the key may use, at the connection's endpoint: the key and the endpoint work, or why not. */
  async test(actor: Actor, companyId: string, id: string): Promise<AiConnectionTestDto> {
    const c = await this.load(actor, companyId, id);
    const p = this.bindings.provider(c);
    const base = this.bindings.baseUrl(c);
    let key: string | null = null;
    if (c.secretId) {
      try {
        key = (await this.secrets.resolveValue(companyId, c.secretId, 'latest')).value;
      } catch {
        key = null;
      }
    }
    const probe = key
      ? await probeProvider(p, base.url, key, this.bindings.outboundFor(c))
      : { status: 'fail' as const, endpoint: base.url, httpStatus: null, message: 'the connection has no key: reconnect it', models: [] };
    await this.repo.recordTest(companyId, id, probe.status, probe.message);
    return {
      status: probe.status,
      testedAt: new Date().toISOString(),
      endpoint: probe.endpoint,
      httpStatus: probe.httpStatus,
      message: probe.message,
      models: probe.models,
    };
  }

  /** Makes a connection the default of its provider: the caller's, or the company's for a shared one. */
  async setDefault(actor: Actor, companyId: string, id: string): Promise<AiConnectionDto> {
    const c = await this.load(actor, companyId, id);
    await this.repo.makeDefault(companyId, c);
    return this.view((await this.repo.get(companyId, id))!);
  }

  /** Queued and running runs of the agents whose env binds the connection's key. */
  async activeRuns(actor: Actor, companyId: string, id: string): Promise<AiConnectionRunDto[]> {
    const c = await this.load(actor, companyId, id);
    if (!c.secretId) return [];
    const bound = new Set(
      (await this.agents.list(actor, companyId))
        .filter(
          (a) => isObject(a.adapterConfig?.env) && Object.values(a.adapterConfig.env).some((v) => isObject(v) && v.secretId === c.secretId),
        )
        .map((a) => a.id),
    );
    if (bound.size === 0) return [];
    return (await this.runs.live(companyId, 200))
      .filter((r) => bound.has(r.agentId))
      .map((r) => ({
        id: r.id,
        agentId: r.agentId,
        agentName: r.agentName,
        status: r.status,
        startedAt: r.startedAt,
        createdAt: r.createdAt,
      }));
  }
}
