import { Injectable } from '@nestjs/common';
import type { Actor } from '../../common/auth/actor';
import { CompanyAccessService } from '../../common/auth/company-access.service';
import { notFound } from '../../common/errors/domain-error';
import { isUuid } from '../../common/http/uuid';
import { AuthorizationService } from '../authorization/authorization.service';
import { AgentEntity } from './agent.entity';
import { toAgentResponse } from './agent-view';
import { agentError } from './agents.errors';
import { AgentsRepository } from './agents.repository';
import { AgentResponseDto } from './dto/agent.dto';

/** Loads agents for routes keyed by agent id (or shortname) and checks the caller's company access. */
@Injectable()
export class AgentLookup {
  constructor(
    private readonly agents: AgentsRepository,
    private readonly access: CompanyAccessService,
    private readonly authz: AuthorizationService,
  ) {}

  /** The status of the company's agent (any status), or null when it is unknown or another company's. */
  statusIn(companyId: string, agentId: string): Promise<string | null> {
    return isUuid(agentId) ? this.agents.statusInCompany(companyId, agentId) : Promise.resolve(null);
  }

  /** The status of an agent by id without an access check (the caller has decided access), or null. */
  statusOf(agentId: string): Promise<string | null> {
    return isUuid(agentId) ? this.agents.statusById(agentId) : Promise.resolve(null);
  }

  /** The company's agent by id (any status), or null when it is unknown or another company's (no access check). */
  inCompany(companyId: string, agentId: string): Promise<AgentEntity | null> {
    return isUuid(agentId) ? this.agents.findInCompany(companyId, agentId) : Promise.resolve(null);
  }

  /** Stores an agent's adapter configuration as given (skills sync writes the desired set into it). */
  setAdapterConfig(companyId: string, agentId: string, adapterConfig: Record<string, unknown>): Promise<void> {
    return this.agents.updateAdapterConfig(companyId, agentId, adapterConfig);
  }

  /**
   * By UUID (any status) in the route's company (`routeCompanyId`: resolved and checked by the
   * guard, undefined when it knows no such agent): 404 unknown or another company's. `lock` takes
   * FOR NO KEY UPDATE: it serialises changes of the row without blocking foreign-key checks of
   * rows that reference it (subordinates' reportsTo, keys, runs).
   */
  async byId(routeCompanyId: string | undefined, agentId: string, lock = false): Promise<AgentEntity> {
    const agent = routeCompanyId && isUuid(agentId) ? await this.agents.findInCompany(routeCompanyId, agentId, lock) : null;
    if (!agent) throw notFound('Agent');
    return agent;
  }

  /**
   * UUID, or a company-unique shortname (URL key) resolved in `?companyId=` or the calling
   * agent's company. A live agent wins over terminated ones holding the same key.
   */
  async byIdOrShortname(actor: Actor, routeCompanyId: string | undefined, ref: string, companyId?: string): Promise<AgentEntity> {
    const key = ref.toLowerCase();
    if (isUuid(ref)) return this.byId(routeCompanyId, ref);
    const scope = companyId ?? (actor.kind === 'agent' ? actor.companyId : undefined);
    if (!scope) throw agentError('company_required', 'A shortname needs ?companyId= (or agent authentication)', { field: 'companyId' });
    if (!isUuid(scope)) throw notFound('Agent');
    await this.access.assertCompanyAccess(actor, scope);
    const agent = await this.agents.findByUrlKey(scope, key);
    if (!agent) throw notFound('Agent');
    return agent;
  }

  /** Whether the caller may read the agent's configuration (else it gets the redacted view). */
  async canReadConfig(actor: Actor, agent: AgentEntity): Promise<boolean> {
    return (await this.authz.decide({ actor, action: 'agent.config.read', companyId: agent.companyId, targetAgentId: agent.id })).allowed;
  }

  /** The stored record as the caller may see it (fresh from the database unless `loaded`). */
  async view(actor: Actor, agent: AgentEntity, loaded = false): Promise<AgentResponseDto> {
    const fresh = loaded ? agent : await this.agents.getInCompany(agent.companyId, agent.id);
    return toAgentResponse(fresh, !(await this.canReadConfig(actor, fresh)));
  }

  async companyAgents(companyId: string): Promise<AgentEntity[]> {
    if (!companyId) throw new Error('companyId required');
    return this.agents.listByCompany(companyId);
  }
}
