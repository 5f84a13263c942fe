import { Injectable } from '@nestjs/common';
import { ConfigFieldError } from '../adapters/adapter-config-schema';
import { AdapterExecutors } from '../adapters/adapter-executors';
import { AdapterRegistry } from '../adapters/adapter-registry.service';
import { ancestorsOf } from '../authorization/org-chart';
import { invalidField } from './agent-fields';
import { DesiredSkills } from './desired-skills.port';
import { AgentsRepository } from './agents.repository';

/**
 * Seam for the secrets feature: validates the env map of an agent's config against the company's
 * secrets (every secret_ref names a secret of the same company, the version exists) and returns
 * it normalised; throws a 4xx naming the field (e.g. `adapterConfig.env.API_TOKEN.secretId`).
 * Wire it once secrets exist, e.g. `agentConfig.envValidator = { validateEnv: (c, env, field) =>
 * bindings.validateEnvBindings(c, env, { field }) }`. Until then only the shape is validated.
 */
export interface EnvBindingValidator {
  validateEnv(companyId: string, env: unknown, field: string): Promise<Record<string, unknown>>;
}

/** Adapter type and configuration validation, and the reportsTo rules, for create and PATCH. */
@Injectable()
export class AgentConfigService {
  envValidator?: EnvBindingValidator;

  /** desiredSkills of a create/hire as persisted: canonical keys once the skills module registered its resolver. */
  resolveDesiredSkills(companyId: string, refs: string[] | undefined): Promise<string[] | undefined> {
    return this.desiredSkills.resolve(companyId, refs);
  }

  constructor(
    private readonly agents: AgentsRepository,
    private readonly adapters: AdapterRegistry,
    private readonly executors: AdapterExecutors,
    private readonly desiredSkills: DesiredSkills,
  ) {}

  assertKnownType(type: string): void {
    if (!this.adapters.has(type)) {
      throw invalidField(
        'adapterType',
        `Unknown adapterType "${type}"; known: ${this.adapters
          .list()
          .map((d) => d.type)
          .join(', ')}`,
        'unknown_adapter_type',
      );
    }
  }

  /** Validated config with the type's create-time defaults. */
  async forCreate(
    companyId: string,
    type: string,
    config: Record<string, unknown>,
    opts: { allowIncomplete?: boolean } = {},
  ): Promise<Record<string, unknown>> {
    this.assertKnownType(type);
    const out = this.mapErrors(() => this.adapters.prepareForCreate(type, config, opts));
    this.assertOutboundUrls(type, out);
    await this.validateEnvBindings(companyId, out);
    return out;
  }

  async forUpdate(
    companyId: string,
    type: string,
    config: Record<string, unknown>,
    opts: { allowIncomplete?: boolean } = {},
  ): Promise<Record<string, unknown>> {
    this.assertKnownType(type);
    const out = this.mapErrors(() => this.adapters.validateConfig(type, config, opts));
    this.assertOutboundUrls(type, out);
    await this.validateEnvBindings(companyId, out);
    return out;
  }

  /** Webhook targets the service would call: a refused destination is a 422 `url_not_allowed` naming the field. */
  private assertOutboundUrls(type: string, config: Record<string, unknown>): void {
    const refused = this.executors.urlRefusal(type, config);
    if (refused) throw invalidField(`adapterConfig.${refused.field}`, refused.message, 'url_not_allowed');
  }

  private mapErrors<T>(fn: () => T): T {
    try {
      return fn();
    } catch (err) {
      if (err instanceof ConfigFieldError) throw invalidField(err.field, err.message, 'invalid_adapter_config');
      throw err;
    }
  }

  private async validateEnvBindings(companyId: string, config: Record<string, unknown>): Promise<void> {
    if (!this.envValidator || config.env === undefined) return;
    config.env = await this.envValidator.validateEnv(companyId, config.env, 'adapterConfig.env');
  }

  /**
   * reportsTo: an agent of the same company, not the agent itself, no cycle. Callers hold the
   * company's org-chart lock so two concurrent moves cannot close a cycle together.
   */
  async assertValidManager(companyId: string, agentId: string | null, reportsTo: string): Promise<void> {
    const manager = await this.agents.findManagerCandidate(reportsTo);
    if (!manager || manager.companyId !== companyId)
      throw invalidField('reportsTo', 'reportsTo must be an agent of the same company', 'invalid_reports_to');
    if (manager.status === 'terminated') throw invalidField('reportsTo', 'reportsTo must not be a terminated agent', 'invalid_reports_to');
    if (agentId === null) return;
    if (reportsTo === agentId) throw invalidField('reportsTo', 'An agent cannot report to itself', 'reports_to_cycle');
    const chart = await this.agents.reportingLines(companyId);
    if (ancestorsOf(reportsTo, chart).includes(agentId))
      throw invalidField('reportsTo', 'reportsTo would create a reporting cycle', 'reports_to_cycle');
  }

  /** Serialises org-chart changes of one company (transaction-scoped advisory lock). */
  async lockOrgChart(companyId: string): Promise<void> {
    await this.agents.lockOrgChart(companyId);
  }
}
