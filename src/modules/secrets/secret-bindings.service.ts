import { Injectable } from '@nestjs/common';
import type { Actor } from '../../common/auth/actor';
import { DomainError } from '../../common/errors/domain-error';
import { isUuid } from '../../common/http/uuid';
import { AppConfig } from '../../config/app-config';
import { AuthorizationService } from '../authorization/authorization.service';
import {
  changedBindingKeys,
  Delivery,
  EnvEntry,
  invalidField,
  isLowTrustAgent,
  looksSensitive,
  parseEnv,
  parseStoredEnv,
  ProjectionClass,
  SecretBinding,
  VersionSelector,
} from './secret-binding';
import { SecretEntity } from './secret.entity';
import { SECRET_ERROR_CODES } from './secret-providers';
import { secretError } from './secrets.errors';
import { SecretsRepository } from './secrets.repository';
import { SecretsService } from './secrets.service';

export interface ValidateEnvOptions {
  /** field path used in error messages, e.g. `adapterConfig.env` */
  field?: string;
  /** override the deployment's strict mode (SERVICE_SECRETS_STRICT) */
  strict?: boolean;
}

export interface LaunchSecretBinding {
  key: string;
  secretName: string;
  version: number;
  delivery: Delivery;
  projectionClass: ProjectionClass;
}

/** What the heartbeat engine injects into the agent process at launch. */
export interface LaunchEnvironment {
  /** env vars to add to the process: inline values plus secrets with delivery env|both, decrypted */
  env: Record<string, string>;
  /** plaintexts to redact from run logs (every bound secret's value and sensitive inline values) */
  redactValues: string[];
  /** what was injected, without values (for the run record or activity) */
  bindings: LaunchSecretBinding[];
}

/** A binding with its secret loaded; bindings whose secret is gone have `secret` undefined. */
export interface ResolvedBinding extends SecretBinding {
  source: 'agent' | 'project';
  secret?: SecretEntity;
}

/** JSON-schema-like description of adapter config fields; `format: "secret-ref"` marks secret fields. */
export interface ConfigSchema {
  type?: string;
  format?: string;
  properties?: Record<string, ConfigSchema>;
}

const STRICT_HINT =
  'inline values for sensitive keys are not allowed in strict mode (SERVICE_SECRETS_STRICT); create a secret with ' +
  'POST /api/companies/{companyId}/secrets and reference it as { "type": "secret_ref", "secretId": "<id>", "version": "latest" }';

/**
 * Secret references inside configuration: validation on save (agents, projects), schema-driven
 * `secret-ref` fields, and resolution at run launch and for the run-bound routes.
 */
@Injectable()
export class SecretBindingsService {
  constructor(
    private readonly repo: SecretsRepository,
    private readonly secrets: SecretsService,
    private readonly config: AppConfig,
    private readonly authz: AuthorizationService,
  ) {}

  /**
   * Adding or changing a secret binding (agent adapterConfig.env, project env) hands the secret to
   * whatever runs with that env, so it needs the board or `agents:create` (legacy `canCreateAgents`):
   * an agent's own key, enough to change its other fields, is not. Removing a binding needs nothing
   * more. A low-trust review agent (`target`) gets no new binding from anyone: 422.
   */
  async assertMayBind(
    actor: Actor,
    companyId: string,
    change: {
      before: unknown;
      after: unknown;
      field: string;
      target?: { id?: string; role: string; metadata: Record<string, unknown> | null };
    },
  ): Promise<void> {
    const changed = changedBindingKeys(change.before, change.after);
    if (!changed.length) return;
    const field = `${change.field}.${changed[0]}`;
    if (change.target && isLowTrustAgent(change.target)) {
      throw secretError('low_trust_secret_binding', 'Low-trust review agents get no secrets; remove the secret binding', { field });
    }
    if (actor.kind !== 'agent') return;
    const d = await this.authz.decide({ actor, action: 'agent.create', companyId, targetAgentId: change.target?.id });
    if (!d.allowed) {
      throw secretError(
        'secret_binding_not_granted',
        'Adding or changing a secret binding needs the board or the agents:create permission',
        {
          field,
          reason: d.reason,
        },
      );
    }
  }

  /**
   * Validates an env binding map for storage and returns it normalised (version, delivery and
   * projectionClass filled in). Throws 400 for bad shapes, 422 `invalid_secret_reference` for
   * unknown or other-company secrets and versions that do not exist, 422 `inline_secret_not_allowed`
   * in strict mode. Every error names the offending field.
   */
  async validateEnvBindings(companyId: string, env: unknown, opts: ValidateEnvOptions = {}): Promise<Record<string, EnvEntry>> {
    const field = opts.field ?? 'env';
    const parsed = parseEnv(env, field);
    if (opts.strict ?? this.config.secretsStrictMode) {
      const offending = Object.entries(parsed.inline).find(([k, v]) => looksSensitive(k) && v !== '');
      if (offending) throw invalidField(`${field}.${offending[0]}`, STRICT_HINT, 422, 'inline_secret_not_allowed');
    }
    const found = await this.secrets.findInCompany(
      companyId,
      parsed.bindings.map((b) => b.secretId),
    );
    for (const b of parsed.bindings) {
      const f = `${field}.${b.key}`;
      const secret = found.get(b.secretId);
      if (!secret)
        throw invalidField(`${f}.secretId`, `secret ${b.secretId} does not exist in this company`, 422, 'invalid_secret_reference');
      if (typeof b.versionSelector === 'number' && b.versionSelector > secret.latestVersion) {
        throw invalidField(
          `${f}.version`,
          `secret "${secret.name}" has no version ${b.versionSelector} (latest is ${secret.latestVersion})`,
          422,
          'invalid_secret_reference',
        );
      }
    }
    return parsed.normalized;
  }

  /**
   * Schema-driven config: a field with `format: "secret-ref"` holding a UUID must reference a secret
   * of the company; any other non-empty string is stored as a new secret and replaced by its id.
   * Returns a new config object; nested object properties are walked.
   */
  async normalizeSchemaConfig(
    companyId: string,
    schema: ConfigSchema,
    config: Record<string, unknown>,
    actor?: Actor,
    field = 'adapterConfig',
  ): Promise<Record<string, unknown>> {
    const out: Record<string, unknown> = { ...config };
    for (const [name, prop] of Object.entries(schema.properties ?? {})) {
      const value = out[name];
      const f = `${field}.${name}`;
      if (prop.format === 'secret-ref') {
        if (value === undefined || value === null || value === '') continue;
        if (typeof value !== 'string') throw invalidField(f, 'must be a secret id or a value to store as a secret');
        if (isUuid(value)) {
          const found = await this.secrets.findInCompany(companyId, [value]);
          if (!found.has(value)) throw invalidField(f, `secret ${value} does not exist in this company`, 422, 'invalid_secret_reference');
          continue;
        }
        out[name] = (await this.secrets.createFromRawValue(actor, companyId, f, value)).id;
      } else if (prop.properties && value && typeof value === 'object' && !Array.isArray(value)) {
        out[name] = await this.normalizeSchemaConfig(companyId, prop, value as Record<string, unknown>, actor, f);
      }
    }
    return out;
  }

  /**
   * The agent's bindings for a run: project env (when the run names a project) overlaid by the
   * agent's adapterConfig.env, so the agent's own config wins on the same alias.
   */
  async bindingsFor(
    companyId: string,
    agentId: string,
    projectId?: string | null,
  ): Promise<{ bindings: ResolvedBinding[]; inline: Record<string, string> }> {
    const agent = await this.repo.findAgentAdapterConfig(companyId, agentId);
    if (!agent) throw new DomainError(404, 'not_found', 'Agent not found');
    const byKey = new Map<string, ResolvedBinding>();
    const inline: Record<string, string> = {};
    if (projectId && isUuid(projectId)) {
      const parsed = parseStoredEnv(await this.repo.findProjectEnv(companyId, projectId));
      Object.assign(inline, parsed.inline);
      for (const b of parsed.bindings) byKey.set(b.key, { ...b, source: 'project' });
    }
    const own = parseStoredEnv(agent.adapterConfig?.env);
    for (const k of Object.keys(own.inline)) byKey.delete(k);
    Object.assign(inline, own.inline);
    for (const b of own.bindings) {
      delete inline[b.key];
      byKey.set(b.key, { ...b, source: 'agent' });
    }
    const bindings = [...byKey.values()];
    const secrets = await this.secrets.findInCompany(
      companyId,
      bindings.map((b) => b.secretId),
    );
    for (const b of bindings) b.secret = secrets.get(b.secretId);
    return { bindings, inline };
  }

  /**
   * Contract for the heartbeat engine, called before the agent process starts: returns the env to
   * inject and the values to redact from run logs. A missing/deleted secret, a missing version, a
   * wrong master key or an unconfigured provider throws a DomainError whose `code` is one of
   * SECRET_ERROR_CODES and whose `key` names the binding; the engine fails the run with that code.
   */
  async resolveForLaunch(companyId: string, agentId: string, opts: { projectId?: string | null } = {}): Promise<LaunchEnvironment> {
    const found = await this.bindingsFor(companyId, agentId, opts.projectId);
    const { inline } = found;
    // a low-trust review agent's process gets no secret, whatever its or its project's env says
    const trust = await this.repo.findAgentTrust(companyId, agentId);
    const bindings = trust && isLowTrustAgent(trust) ? [] : found.bindings;
    const env: Record<string, string> = { ...inline };
    const redact = Object.entries(inline)
      .filter(([k]) => looksSensitive(k))
      .map(([, v]) => v);
    const launched: LaunchSecretBinding[] = [];
    for (const b of bindings) {
      const injected = b.delivery !== 'api';
      try {
        const r = await this.resolveBinding(companyId, b);
        redact.push(r.value);
        if (!injected) continue;
        env[b.key] = r.value;
        launched.push({
          key: b.key,
          secretName: r.secret.name,
          version: r.version,
          delivery: b.delivery,
          projectionClass: b.projectionClass,
        });
      } catch (err) {
        // api-only bindings are resolved here only to redact them; their read fails clearly later
        if (injected) throw withBindingKey(err, b.key);
      }
    }
    return { env, redactValues: [...new Set(redact)], bindings: launched };
  }

  /** Decrypts the value a binding selects; a deleted secret fails with `secret_not_found`. */
  resolveBinding(companyId: string, b: { secretId: string; versionSelector: VersionSelector; secret?: SecretEntity }) {
    if (!b.secret) {
      throw secretError(SECRET_ERROR_CODES.notFound, `Secret ${b.secretId} referenced by the configuration no longer exists`, {
        secretId: b.secretId,
      });
    }
    return this.secrets.resolveValue(companyId, b.secretId, b.versionSelector, b.secret);
  }
}

function withBindingKey(err: unknown, key: string): unknown {
  if (!(err instanceof DomainError)) return err;
  return new DomainError(err.status, err.code, `Secret binding ${key}: ${err.message}`, { ...err.extra, key });
}
