import { Injectable } from '@nestjs/common';
import type { Actor } from '../../common/auth/actor';
import { badRequest, notFound } from '../../common/errors/domain-error';
import { ApprovalsService, toApprovalResponse } from '../approvals/approvals.service';
import { ApprovalResponseDto } from '../approvals/dto/approval.dto';
import { AuthorizationService } from '../authorization/authorization.service';
import { ancestorsOf } from '../authorization/org-chart';
import { BudgetSyncService } from '../budgets/budget-sync.service';
import { SecretBindingsService } from '../secrets/secret-bindings.service';
import { AiConnectionEnv } from '../adapters/runtimes/ai-connection-env.port';
import { AgentAccessService } from './agent-access.service';
import { AgentConfigService } from './agent-config.service';
import {
  assertNoBuiltInMarker,
  BUILT_IN_MARKER_KEY,
  ceoDefaultPermissions,
  mergeAdapterConfig,
  mergeMetadata,
  normalizeRuntimeConfig,
  urlKeyFromName,
  withDesiredSkills,
} from './agent-fields';
import { AgentLifecycleService } from './agent-lifecycle.service';
import { AgentLookup } from './agent-lookup.service';
import { toAgentResponse, toChainLink } from './agent-view';
import { AgentEntity } from './agent.entity';
import { agentError } from './agents.errors';
import { AgentInsertValues, AgentsRepository } from './agents.repository';
import { AgentDetailResponseDto, AgentResponseDto, CreateAgentDto, HireAgentDto, UpdateAgentDto } from './dto/agent.dto';

export interface HireResult {
  agent: AgentResponseDto;
  /** the pending hire approval when the company requires board approval */
  approval: ApprovalResponseDto | null;
}

const UNIQUE_VIOLATION = '23505';

/** Agent records: create and hire, read (roster, one, me), PATCH. Lifecycle and keys live beside. */
@Injectable()
export class AgentsService {
  constructor(
    private readonly agents: AgentsRepository,
    private readonly lookup: AgentLookup,
    private readonly authz: AuthorizationService,
    private readonly config: AgentConfigService,
    private readonly access: AgentAccessService,
    private readonly lifecycle: AgentLifecycleService,
    private readonly budgets: BudgetSyncService,
    private readonly approvals: ApprovalsService,
    private readonly secretBindings: SecretBindingsService,
    private readonly aiConnections: AiConnectionEnv,
  ) {}

  /** POST agents: a direct create, status idle. */
  async create(actor: Actor, companyId: string, dto: CreateAgentDto): Promise<AgentResponseDto> {
    return toAgentResponse(await this.insertAgent(actor, companyId, dto, 'idle', []));
  }

  /** POST agent-hires: pending_approval plus an approval when the company requires it, else a direct create. */
  async hire(actor: Actor, companyId: string, dto: HireAgentDto): Promise<HireResult> {
    const requireApproval = await this.agents.companyRequiresHireApproval(companyId);
    const sourceIssueIds = [...new Set([...(dto.sourceIssueId ? [dto.sourceIssueId] : []), ...(dto.sourceIssueIds ?? [])])];
    // the issues feature validates that source issues belong to the company once it exists
    const agent = await this.insertAgent(actor, companyId, dto, requireApproval ? 'pending_approval' : 'idle', sourceIssueIds);
    if (!requireApproval) return { agent: toAgentResponse(agent), approval: null };
    const approval = await this.approvals.createHireApproval({
      companyId,
      agentId: agent.id,
      payload: { agent: this.requestSnapshot(agent) },
      sourceIssueIds,
      requestedBy: actor,
    });
    return { agent: toAgentResponse(agent), approval: toApprovalResponse(approval) };
  }

  /**
   * The built-in agents feature only: a normal agent row carrying the immutable marker
   * `metadata.serviceBuiltInAgent` (create, hire and PATCH refuse that key). Its adapter
   * configuration may still be incomplete (the built-in agent then needs setup). Under board
   * approval a pending hire approval is created as for a hire.
   */
  async createBuiltIn(
    actor: Actor,
    companyId: string,
    dto: CreateAgentDto,
    marker: Record<string, unknown>,
    opts: { startsPaused: boolean },
  ): Promise<{ agent: AgentEntity; approval: ApprovalResponseDto | null }> {
    const requireApproval = await this.agents.companyRequiresHireApproval(companyId);
    // a paused hire stays paused once approved (the approval moves only pending_approval agents)
    const status = opts.startsPaused ? 'paused' : requireApproval ? 'pending_approval' : 'idle';
    const agent = await this.insertAgent(actor, companyId, dto, status, [], { [BUILT_IN_MARKER_KEY]: marker });
    if (!requireApproval) return { agent, approval: null };
    const approval = await this.approvals.createHireApproval({
      companyId,
      agentId: agent.id,
      payload: { agent: this.requestSnapshot(agent) },
      sourceIssueIds: [],
      requestedBy: actor,
    });
    return { agent, approval: toApprovalResponse(approval) };
  }

  private requestSnapshot(a: AgentEntity): Record<string, unknown> {
    const { id: _id, createdAt: _c, updatedAt: _u, terminatedAt: _t, ...rest } = a;
    return rest;
  }

  private async insertAgent(
    actor: Actor,
    companyId: string,
    dto: CreateAgentDto,
    status: 'idle' | 'pending_approval' | 'paused',
    sourceIssueIds: string[],
    builtInMarker?: Record<string, unknown>,
  ): Promise<AgentEntity> {
    await this.authz.assert({ actor, action: 'agent.create', companyId });
    assertNoBuiltInMarker(dto.metadata);
    const role = dto.role?.trim() || 'general';
    const desiredSkills = await this.config.resolveDesiredSkills(companyId, dto.desiredSkills);
    // the board UI names a connection (runtimeConfig.aiConnection) instead of env entries: its key and base URL become env
    const given = await this.aiConnections.configFor(
      actor,
      companyId,
      dto.adapterType,
      dto.adapterConfig ?? {},
      dto.runtimeConfig?.aiConnection,
    );
    const adapterConfig = await this.config.forCreate(companyId, dto.adapterType, withDesiredSkills(given, desiredSkills), {
      allowIncomplete: builtInMarker !== undefined,
    });
    await this.secretBindings.assertMayBind(actor, companyId, {
      before: {},
      after: adapterConfig.env,
      field: 'adapterConfig.env',
      target: { role, metadata: dto.metadata ?? {} },
    });
    const runtimeConfig = normalizeRuntimeConfig(dto.runtimeConfig);
    if (dto.reportsTo) {
      await this.config.lockOrgChart(companyId);
      await this.config.assertValidManager(companyId, null, dto.reportsTo);
    }
    const id = await this.insertWithUniqueKey(companyId, dto.name.trim(), [
      role,
      dto.title ?? null,
      dto.capabilities ?? '',
      dto.reportsTo ?? null,
      dto.adapterType,
      JSON.stringify(adapterConfig),
      JSON.stringify(runtimeConfig),
      dto.budgetMonthlyCents ?? 0,
      status,
      JSON.stringify(ceoDefaultPermissions(role)),
      JSON.stringify({ ...(dto.metadata ?? {}), ...(builtInMarker ?? {}) }),
      JSON.stringify(sourceIssueIds),
    ]);
    // every created or hired agent is a member of its company (its grants live on the membership)
    await this.access.ensureMembership(companyId, id);
    if ((dto.budgetMonthlyCents ?? 0) > 0) await this.budgets.syncMonthlyPolicy(companyId, 'agent', id, dto.budgetMonthlyCents!);
    return this.agents.getInCompany(companyId, id);
  }

  /**
   * The URL key is the slug of the name, then -2, -3, … while a live agent holds it. The partial
   * unique index decides between concurrent creates (the loser moves on to the next suffix).
   */
  private async insertWithUniqueKey(companyId: string, name: string, values: AgentInsertValues): Promise<string> {
    const base = urlKeyFromName(name);
    const taken = new Set(await this.agents.liveUrlKeysLike(companyId, base));
    for (let n = 1; n < 10_000; n++) {
      const key = n === 1 ? base : `${base}-${n}`;
      if (taken.has(key)) continue;
      const id = await this.agents.insertIfUrlKeyFree(companyId, name, key, values);
      if (id) return id;
    }
    throw agentError('agent_shortname_conflict', 'Could not derive a unique URL key from the name');
  }

  /** Non-terminated agents; configuration redacted for callers that cannot read it. */
  async list(actor: Actor, companyId: string): Promise<AgentResponseDto[]> {
    const agents = await this.agents.listLive(companyId);
    const canReadAll = (await this.authz.decide({ actor, action: 'agent.config.read', companyId })).allowed;
    return agents.map((a) => toAgentResponse(a, !canReadAll && !(actor.kind === 'agent' && actor.agentId === a.id)));
  }

  async get(actor: Actor, routeCompanyId: string | undefined, ref: string, companyId?: string): Promise<AgentDetailResponseDto> {
    const agent = await this.lookup.byIdOrShortname(actor, routeCompanyId, ref, companyId);
    // a UUID with a ?companyId= of another company does not name this agent
    if (companyId !== undefined && agent.companyId !== companyId) throw notFound('Agent');
    return this.detail(actor, agent);
  }

  async me(actor: Actor): Promise<AgentDetailResponseDto> {
    if (actor.kind !== 'agent') throw badRequest('Agent authentication required');
    return this.detail(actor, await this.lookup.byId(actor.companyId, actor.agentId));
  }

  private async detail(actor: Actor, agent: AgentEntity): Promise<AgentDetailResponseDto> {
    return {
      ...(await this.lookup.view(actor, agent, true)),
      chainOfCommand: await this.chainOfCommand(agent),
      access: await this.access.describe(agent),
    };
  }

  /** Managers from the direct one up to the root; a cycle in stored data ends the walk. */
  private async chainOfCommand(agent: AgentEntity) {
    if (!agent.reportsTo) return [];
    const all = await this.lookup.companyAgents(agent.companyId);
    const byId = new Map(all.map((a) => [a.id, a]));
    return ancestorsOf(agent.id, new Map(all.map((a) => [a.id, a.reportsTo])))
      .map((id) => byId.get(id)!)
      .map(toChainLink);
  }

  /** PATCH: partial fields; permissions refused; adapterConfig merged unless replaceAdapterConfig. */
  async update(actor: Actor, routeCompanyId: string | undefined, agentId: string, dto: UpdateAgentDto): Promise<AgentResponseDto> {
    const agent = await this.lookup.byId(routeCompanyId, agentId, true);
    if (dto.permissions !== undefined) {
      throw agentError('permissions_not_patchable', 'permissions cannot be changed here; use PATCH /api/agents/{agentId}/permissions', {
        field: 'permissions',
      });
    }
    if (dto.desiredSkills !== undefined) {
      throw agentError('desired_skills_not_patchable', 'desiredSkills cannot be changed here; use POST /api/agents/{agentId}/skills/sync', {
        field: 'desiredSkills',
      });
    }
    await this.authz.assert({ actor, action: 'agent.config.update', companyId: agent.companyId, targetAgentId: agent.id });
    if (dto.status !== undefined || dto.budgetMonthlyCents !== undefined) {
      await this.authz.assert({ actor, action: 'agent.lifecycle', companyId: agent.companyId, targetAgentId: agent.id });
    }
    if (dto.metadata !== undefined) {
      const stored = agent.metadata[BUILT_IN_MARKER_KEY];
      if (BUILT_IN_MARKER_KEY in dto.metadata && JSON.stringify(dto.metadata[BUILT_IN_MARKER_KEY]) !== JSON.stringify(stored)) {
        assertNoBuiltInMarker(dto.metadata);
      }
      agent.metadata = mergeMetadata(agent.metadata, dto.metadata);
    }
    if (dto.name !== undefined) await this.rename(agent, dto.name.trim());
    if (dto.role !== undefined) agent.role = dto.role.trim();
    if (dto.title !== undefined) agent.title = dto.title;
    if (dto.capabilities !== undefined) agent.capabilities = dto.capabilities;
    if (dto.reportsTo !== undefined && dto.reportsTo !== agent.reportsTo) {
      if (dto.reportsTo !== null) {
        await this.config.lockOrgChart(agent.companyId);
        await this.config.assertValidManager(agent.companyId, agent.id, dto.reportsTo);
      }
      agent.reportsTo = dto.reportsTo;
    }
    // a newly chosen connection (runtimeConfig.aiConnection) re-binds the key and base URL in the env
    const selection = dto.runtimeConfig?.aiConnection;
    const connection = JSON.stringify(selection) !== JSON.stringify(agent.runtimeConfig.aiConnection) ? selection : undefined;
    if (dto.adapterType !== undefined || dto.adapterConfig !== undefined || connection) {
      const type = dto.adapterType ?? agent.adapterType;
      const merged = await this.aiConnections.configFor(
        actor,
        agent.companyId,
        type,
        dto.adapterConfig
          ? mergeAdapterConfig(agent.adapterConfig, dto.adapterConfig, dto.replaceAdapterConfig === true)
          : agent.adapterConfig,
        connection,
      );
      const before = agent.adapterConfig.env;
      agent.adapterConfig = await this.config.forUpdate(agent.companyId, type, merged);
      agent.adapterType = type;
      // new or changed secret bindings need the board or agents:create, not just the agent's own key
      await this.secretBindings.assertMayBind(actor, agent.companyId, {
        before,
        after: agent.adapterConfig.env,
        field: 'adapterConfig.env',
        target: { id: agent.id, role: agent.role, metadata: agent.metadata },
      });
    }
    if (dto.runtimeConfig !== undefined) agent.runtimeConfig = normalizeRuntimeConfig(dto.runtimeConfig, agent.runtimeConfig);
    if (dto.budgetMonthlyCents !== undefined && dto.budgetMonthlyCents !== agent.budgetMonthlyCents) {
      agent.budgetMonthlyCents = dto.budgetMonthlyCents;
      await this.budgets.syncMonthlyPolicy(agent.companyId, 'agent', agent.id, dto.budgetMonthlyCents);
    }
    await this.saveGuardingKey(agent);
    if (dto.status !== undefined && dto.status !== agent.status) await this.lifecycle.applyStatus(agent, dto.status);
    return this.lookup.view(actor, agent);
  }

  /** A new name moves the URL key; a live agent already holding it: 409. */
  private async rename(agent: AgentEntity, name: string): Promise<void> {
    const key = urlKeyFromName(name);
    if (key !== agent.urlKey && agent.status !== 'terminated') {
      if (await this.agents.urlKeyTakenByOther(agent.companyId, key, agent.id))
        throw agentError('agent_shortname_conflict', `Another agent already uses the shortname "${key}"`, { field: 'name', urlKey: key });
    }
    agent.name = name;
    agent.urlKey = key;
  }

  private async saveGuardingKey(agent: AgentEntity): Promise<void> {
    try {
      await this.agents.save(agent);
    } catch (err) {
      if ((err as { driverError?: { code?: string } }).driverError?.code === UNIQUE_VIOLATION) {
        throw agentError('agent_shortname_conflict', `Another agent already uses the shortname "${agent.urlKey}"`, {
          field: 'name',
          urlKey: agent.urlKey,
        });
      }
      throw err;
    }
  }
}
