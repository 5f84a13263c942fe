import { Injectable } from '@nestjs/common';
import type { Actor } from '../../common/auth/actor';
import { badRequest } from '../../common/errors/domain-error';
import { endpointOutbound, type OutboundTarget } from '../../common/net/outbound-guard';
import { AppConfig } from '../../config/app-config';
import type { AiConnectionEnvSource, ModelHints } from '../adapters/runtimes/ai-connection-env.port';
import { HeartbeatRunsService } from '../heartbeat/heartbeat-runs.service';
import { codingCliSpec } from '../adapters/runtimes/coding-cli-runtimes';
import { modelProvider, providerForRuntime, type ModelProvider } from '../adapters/runtimes/model-providers';
import { SecretsService } from '../secrets/secrets.service';
import { aiConnectionError } from './ai-connections.errors';
import { AiConnectionsRepository, type AiConnectionRecord } from './ai-connections.repository';
import { probeProvider } from './provider-api';

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The board user a personal connection belongs to; agents have none (they use shared connections). */
export const userOf = (actor: Actor): string | null => (actor.kind === 'board' ? actor.userId : null);

export interface EffectiveBaseUrl {
  url: string;
  source: 'connection' | 'operator' | 'vendor';
}

/**
 * Connections as agents use them: the board UI's `aiConnection` selection (`{ provider, method,
 * mode: "responsible_user" | "shared", connectionId? }`) resolved to a connection, and the env it
 * gives a runtime (the key as a secret reference, the base URL, the default model).
 */
@Injectable()
export class AiConnectionBindings implements AiConnectionEnvSource {
  private readonly outbound: OutboundTarget;

  constructor(
    private readonly repo: AiConnectionsRepository,
    private readonly secrets: SecretsService,
    private readonly config: AppConfig,
    private readonly runs: HeartbeatRunsService,
  ) {
    this.outbound = endpointOutbound(config);
  }

  provider(c: AiConnectionRecord): ModelProvider {
    return modelProvider(c.provider) ?? modelProvider('anthropic')!;
  }

  /** The connection's own base URL, else the operator's SERVICE_AI_BASE_URLS entry, else the vendor's endpoint. */
  baseUrl(c: AiConnectionRecord): EffectiveBaseUrl {
    if (c.baseUrl) return { url: c.baseUrl, source: 'connection' };
    const operator = this.config.runtimes?.aiBaseUrls[c.provider as 'anthropic'];
    if (operator) return { url: operator, source: 'operator' };
    return { url: this.provider(c).defaultBaseUrl, source: 'vendor' };
  }

  /**
   * The destination policy for a connection's endpoint: the operator's own endpoint is trusted as
   * SERVICE_OUTBOUND_ALLOW entries are. No redirect is followed (a model list does not redirect),
   * so the trust reaches that URL only.
   */
  outboundFor(c: AiConnectionRecord): OutboundTarget {
    const b = this.baseUrl(c);
    const options = { ...this.outbound.options, maxRedirects: 0 };
    return {
      guard: this.outbound.guard,
      options: b.source === 'operator' ? { ...options, trustedHosts: [new URL(b.url).hostname] } : options,
    };
  }

  /** The connection an `aiConnection` selection names, for this caller; 4xx naming `field` otherwise. */
  async resolve(actor: Actor, companyId: string, selection: unknown, field = 'aiConnection'): Promise<AiConnectionRecord> {
    if (!isObject(selection) || typeof selection.provider !== 'string')
      throw badRequest(
        `${field} must be an object with a provider`,
        { field, fields: [{ field, messages: ['needs a provider'] }] },
        'validation_failed',
      );
    if (selection.method === 'subscription')
      throw aiConnectionError(
        'login_method_unsupported',
        'Subscription sign-ins are not supported here: connect the provider with an API key',
        {
          field: `${field}.method`,
        },
      );
    const provider = modelProvider(selection.provider);
    if (!provider)
      throw aiConnectionError('ai_connection_unavailable', `Unknown AI provider ${selection.provider}`, { field: `${field}.provider` });
    const id =
      typeof selection.connectionId === 'string'
        ? selection.connectionId
        : typeof selection.grantId === 'string'
          ? selection.grantId
          : null;
    const userId = userOf(actor);
    const found = id ? await this.visible(companyId, id, userId) : await this.repo.defaultFor(companyId, provider.id, userId);
    if (!found || found.provider !== provider.id)
      throw aiConnectionError(
        'ai_connection_unavailable',
        id
          ? `AI connection ${id} does not exist in this company or is not a ${provider.label} connection you may use`
          : `No ${provider.label} connection to use: connect one with an API key first (POST /api/companies/${companyId}/ai-connections)`,
        { field },
      );
    return found;
  }

  /** A connection of the company the user may use: a shared one or their own personal one. */
  async visible(companyId: string, id: string, userId: string | null): Promise<AiConnectionRecord | null> {
    if (!/^[0-9a-f-]{36}$/i.test(id)) return null;
    const c = await this.repo.get(companyId, id);
    return c && (c.ownership === 'shared' || c.ownerUserId === userId) ? c : null;
  }

  /** The env a connection gives an agent of `type`: its key as a secret reference and, unless the vendor's, its base URL. */
  envFor(c: AiConnectionRecord, type: string, field = 'aiConnection'): Record<string, unknown> {
    const p = this.provider(c);
    const cli = codingCliSpec(type);
    if (cli && !cli.aiProviders.includes(p.id))
      throw aiConnectionError('ai_connection_unavailable', `A ${p.label} connection cannot run ${type} agents`, { field });
    if (!c.secretId)
      throw aiConnectionError('ai_connection_unavailable', `The key of AI connection "${c.name}" was deleted: reconnect it`, { field });
    const env: Record<string, unknown> = { [p.keyEnv]: { type: 'secret_ref', secretId: c.secretId, version: 'latest' } };
    const base = this.baseUrl(c);
    if (base.source !== 'vendor') env[p.baseUrlEnv] = base.url;
    return env;
  }

  /** The model a connection's default gives a runtime (OpenCode names it `<provider>/<model>`). */
  private modelFor(c: AiConnectionRecord, type: string): string | null {
    if (!c.defaultModel) return null;
    const p = this.provider(c);
    return codingCliSpec(type)?.modelNamesProvider && !c.defaultModel.includes('/')
      ? `${p.opencodePrefix}/${c.defaultModel}`
      : c.defaultModel;
  }

  async configFor(
    actor: Actor,
    companyId: string,
    type: string,
    config: Record<string, unknown>,
    selection: unknown,
  ): Promise<Record<string, unknown>> {
    const c = await this.resolve(actor, companyId, selection, 'runtimeConfig.aiConnection');
    const env = { ...(isObject(config.env) ? config.env : {}), ...this.envFor(c, type, 'runtimeConfig.aiConnection') };
    const model = typeof config.model === 'string' && config.model ? config.model : this.modelFor(c, type);
    return { ...config, env, ...(model ? { model } : {}) };
  }

  /** The connection's default model and what its key may use (the provider's list; best effort). */
  async modelHints(actor: Actor, companyId: string, type: string): Promise<ModelHints> {
    const lastRunDefault = await this.lastRunDefault(companyId, type);
    const p = providerForRuntime(codingCliSpec(type), null);
    const c = p ? await this.repo.defaultFor(companyId, p.id, userOf(actor)) : null;
    if (!p || !c) return { connectionDefault: null, lastRunDefault, listed: [] };
    let listed: string[] = [];
    try {
      if (c.secretId) {
        const key = (await this.secrets.resolveValue(companyId, c.secretId, 'latest')).value;
        listed = (await probeProvider(p, this.baseUrl(c).url, key, this.outboundFor(c))).models;
      }
    } catch {
      listed = [];
    }
    return { connectionDefault: this.modelFor(c, type), lastRunDefault, listed };
  }

  /** The model the CLI chose itself (the run named none: no `resultJson.model`) in the company's latest successful run of the runtime. */
  private async lastRunDefault(companyId: string, type: string): Promise<string | null> {
    const { items } = await this.runs.list(companyId, { status: 'succeeded', limit: 100 });
    const run = items.find((r) => r.usageJson?.runtime === type && !r.resultJson?.model && typeof r.usageJson?.model === 'string');
    return (run?.usageJson?.model as string | undefined) ?? null;
  }
}
