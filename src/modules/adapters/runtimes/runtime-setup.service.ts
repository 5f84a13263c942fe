import * as os from 'node:os';
import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { Actor } from '../../../common/auth/actor';
import { notFound } from '../../../common/errors/domain-error';
import { AgentIdentities, type ProcessIdentity } from '../../../common/process/agent-identities';
import { AppConfig } from '../../../config/app-config';
import { SecretsService } from '../../secrets/secrets.service';
import { AdapterExecutors } from '../adapter-executors';
import { AdapterRegistry } from '../adapter-registry.service';
import { runtimeSetupError } from '../adapters.errors';
import type {
  AuthSignalDto,
  DetectModelResponseDto,
  EnvironmentReportDto,
  LoginSessionDto,
  ModelOptionDto,
  StartLoginDto,
  TestEnvironmentDto,
} from '../dto/runtime-setup.dto';
import { AiConnectionEnv } from './ai-connection-env.port';
import { CodingCliRuntime } from './coding-cli.runtime';
import type { HelloRequest } from './hello-probe';
import { ProbeCosts } from './probe-costs.port';
import { environmentReport, type HelloResult } from './runtime-environment';

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const LOGIN_SECRET_PREFIX = 'adapter-login';

/**
 * What the board UI's new-agent form asks of a runtime before an agent exists: the models it offers,
 * the model it would use by default, an environment test, an API-key login and whether credentials
 * are configured at all. Browser/subscription logins are not supported (API-key login only).
 */
@Injectable()
export class RuntimeSetupService {
  constructor(
    private readonly registry: AdapterRegistry,
    private readonly executors: AdapterExecutors,
    private readonly secrets: SecretsService,
    private readonly config: AppConfig,
    private readonly identities: AgentIdentities,
    private readonly aiConnections: AiConnectionEnv,
    private readonly probeCosts: ProbeCosts,
  ) {}

  private known(type: string): void {
    if (!this.registry.has(type)) throw notFound('Adapter type');
  }

  private runtime(type: string): CodingCliRuntime | null {
    this.known(type);
    const e = this.executors.get(type);
    return e instanceof CodingCliRuntime ? e : null;
  }

  /**
   * Who runs the form's checks (the CLI's --version, its settings): an unprivileged identity of
   * their own (never root, never an agent's), null when the service cannot switch users.
   */
  private agentIdentity(agent?: { agentId: string; companyId: string }): ProcessIdentity | null {
    try {
      return agent ? this.identities.forAgent(agent.agentId, agent.companyId) : this.identities.forRuntimeChecks();
    } catch {
      return null;
    }
  }

  /** The CLI's home (where it keeps settings and stored logins) for the form's checks. */
  private cliHome(): string {
    return this.agentIdentity()?.home ?? process.env.HOME ?? os.homedir();
  }

  /** How many models a type offers, for the adapter list (0 for a type that is not, or no longer, loaded: never a 404). */
  modelCount(type: string): number {
    const e = this.executors.get(type);
    return e instanceof CodingCliRuntime ? e.spec.models.length : 0;
  }

  models(type: string): ModelOptionDto[] {
    return this.runtime(type)?.spec.models ?? [];
  }

  /**
   * The model an agent of the type would use without `adapterConfig.model`: the type's instance
   * config, the default model of the caller's default AI connection for the runtime, the CLI's own
   * settings, the model the CLI chose itself in the company's latest run that named none, else the
   * runtime's default. Candidates: the runtime's list and what the connection's key may use.
   */
  async detectModel(actor: Actor, companyId: string, type: string): Promise<DetectModelResponseDto> {
    const r = this.runtime(type);
    if (!r) return { model: null, candidates: [], source: null };
    const instance = await this.executors.effectiveConfig(type, {});
    const hints = await this.aiConnections.modelHints(actor, companyId, type);
    const candidates = [...new Set([...r.spec.models.map((m) => m.id), ...hints.listed])];
    const configured = typeof instance.model === 'string' ? instance.model : null;
    if (configured) return { model: configured, candidates, source: 'instance_config' };
    const own = r.detectModel(this.cliHome(), instance);
    if (own?.source === 'instance_config') return { ...own, candidates };
    if (hints.connectionDefault) return { model: hints.connectionDefault, candidates, source: 'ai_connection' };
    if (own) return { ...own, candidates };
    if (hints.lastRunDefault) return { model: hints.lastRunDefault, candidates, source: 'last_run' };
    return { model: r.spec.defaultModel, candidates, source: r.spec.defaultModel ? 'default' : null };
  }

  /**
   * The env as the CLI would get it, for the test prompt: inline values, `{ type: "plain", value }`,
   * and the company's secret references resolved. null when a reference cannot be resolved (the
   * test then stops at the other checks).
   */
  private async resolvedEnv(
    companyId: string,
    config: Record<string, unknown>,
    extra: Record<string, string>,
  ): Promise<Record<string, string> | null> {
    const env = isPlainObject(config.env) ? config.env : {};
    const out: Record<string, string> = {};
    for (const [k, v] of Object.entries(env)) {
      if (typeof v === 'string') out[k] = v;
      else if (isPlainObject(v) && v.type === 'plain' && typeof v.value === 'string') out[k] = v.value;
      else if (isPlainObject(v) && v.type === 'secret_ref' && typeof v.secretId === 'string') {
        const selector = typeof v.version === 'number' ? v.version : 'latest';
        try {
          out[k] = (await this.secrets.resolveValue(companyId, v.secretId, selector)).value;
        } catch {
          return null;
        }
      }
    }
    return { ...out, ...extra };
  }

  /**
   * The form's environment test, with the checks the run applies: the config (the type's instance
   * config under the form's), the env an `aiConnection` gives, the binary as the agent's identity
   * would run it (the agent's own with `agentId`, else the checks' identity), its endpoint, a prompt.
   */
  async testEnvironment(actor: Actor, type: string, dto: TestEnvironmentDto, companyId?: string): Promise<EnvironmentReportDto> {
    this.known(type);
    const executor = this.executors.get(type);
    if (!executor) throw runtimeSetupError('adapter_not_found', `No executor for adapter type ${type} on this instance`);
    let given = isPlainObject(dto.adapterConfig) ? dto.adapterConfig : {};
    if (companyId && dto.aiConnection) given = await this.aiConnections.configFor(actor, companyId, type, given, dto.aiConnection);
    const config = await this.executors.effectiveConfig(type, given);
    const extra: Record<string, string> = {};
    for (const [k, v] of Object.entries(dto.testCredentials ?? {}))
      if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(k) && typeof v === 'string') extra[k] = v;
    if (executor instanceof CodingCliRuntime) {
      const agentId = companyId ? (dto.agentId ?? null) : null;
      const identity = this.agentIdentity(companyId && agentId ? { agentId, companyId } : undefined);
      const sandbox = { root: this.config.agentIdentity.root, namespaces: this.config.agentIdentity.namespaces };
      const env = companyId ? await this.resolvedEnv(companyId, config, extra) : null;
      // the test prompt runs with the env resolved (a reference that cannot be resolved: the other checks only)
      const hello =
        companyId && env
          ? (binary: string) => this.hello(actor, executor, { binary, config, env, identity, sandbox, companyId, agentId })
          : undefined;
      return environmentReport(executor.spec, config, extra, identity?.home ?? this.cliHome(), {
        resolvedEnv: env ?? undefined,
        sandbox: { identity, ...sandbox },
        hello,
        ...executor.host,
      });
    }
    const r = await executor.testEnvironment(config);
    const checks = r.checks.map((c) => ({ code: c.name, level: c.ok ? 'info' : 'error', message: c.message }));
    return { adapterType: type, testedAt: new Date().toISOString(), status: r.ok ? 'pass' : 'fail', checks };
  }

  /**
   * The test prompt through the CLI; what it used is booked (costs: a cost event of the agent it
   * ran for, or the company's finance event when the new-agent form runs it before any agent exists).
   */
  private async hello(actor: Actor, runtime: CodingCliRuntime, r: HelloRequest): Promise<HelloResult> {
    const result = await runtime.hello(r);
    if (result.usage)
      await this.probeCosts.book({
        actor,
        companyId: r.companyId,
        agentId: r.agentId ?? null,
        adapterType: runtime.type,
        usage: result.usage,
      });
    return result;
  }

  /** API-key login: the key becomes a company secret; the answer is the env binding to use. */
  async startLogin(actor: Actor, companyId: string, type: string, dto: StartLoginDto): Promise<LoginSessionDto> {
    const r = this.runtime(type);
    if (!r) throw runtimeSetupError('login_method_unsupported', `Adapter type ${type} has no login`);
    if (!dto.apiKey || dto.method === 'subscription') {
      throw runtimeSetupError(
        'login_method_unsupported',
        'Only the API-key login is supported here: send { apiKey }. Browser and subscription logins are not supported.',
      );
    }
    const envName = dto.envName ?? r.spec.credentialEnv[0];
    const secret = await this.secrets.create(actor, companyId, {
      name: `${LOGIN_SECRET_PREFIX}-${type}-${envName}-${randomUUID().slice(0, 8)}`,
      value: dto.apiKey,
      description: `${envName} for ${type} agents (adapter login)`,
    });
    return this.session(type, secret.id, envName, new Date(secret.createdAt), dto.environmentId ?? null);
  }

  async loginSession(companyId: string, type: string, sessionId: string): Promise<LoginSessionDto> {
    this.known(type);
    const found = (await this.secrets.findInCompany(companyId, [sessionId])).get(sessionId);
    const prefix = `${LOGIN_SECRET_PREFIX}-${type}-`;
    if (!found || !found.name.startsWith(prefix)) throw runtimeSetupError('login_session_not_found', 'Login session not found');
    const envName = found.name.slice(prefix.length).replace(/-[0-9a-f]{8}$/, '');
    return this.session(type, found.id, envName, found.createdAt, null);
  }

  /** API-key logins complete at once: there is never a login in progress. */
  activeLogin(type: string): never {
    this.known(type);
    throw runtimeSetupError('login_session_not_found', 'No login in progress (API-key logins complete at once)');
  }

  private session(type: string, id: string, envName: string, createdAt: Date, environmentId: string | null): LoginSessionDto {
    return {
      sessionId: id,
      adapterType: type,
      status: 'authenticated',
      method: 'api_key',
      envBinding: { [envName]: { type: 'secret_ref', secretId: id, version: 'latest' } },
      prompt: null,
      environmentId,
      createdAt: createdAt.toISOString(),
    };
  }

  /** Whether agents of this type would find credentials: the type's instance config, or a stored CLI login. */
  async authSignal(type: string): Promise<AuthSignalDto> {
    const r = this.runtime(type);
    if (!r) return { status: 'unknown', source: null };
    const instance = await this.executors.effectiveConfig(type, {});
    const report = await environmentReport({ ...r.spec, defaultCommand: process.execPath }, instance, {}, this.cliHome(), {
      skipEndpoint: true,
    });
    const auth = report.checks.find((c) => c.code.startsWith('adapter_auth'));
    return auth?.code === 'adapter_auth_present' ? { status: 'present', source: auth.message } : { status: 'absent', source: null };
  }
}
