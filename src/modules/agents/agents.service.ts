import { Injectable } from '@nestjs/common';
import type { Actor } from '../../common/auth/actor';
import { badRequest, conflict, notFound } from '../../common/errors/domain-error';
import { Db } from '../../database/db.service';
import { ApprovalsService, toApprovalResponse } from '../approvals/approvals.service';
import { ApprovalResponseDto } from '../approvals/dto/approval.dto';
import { AuthorizationService } from '../authorization/authorization.service';
import { ancestorsOf } from '../authorization/org-chart';
import { BudgetSyncService } from '../budgets/budget-sync.service';
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
    private readonly db: Db,
    private readonly lookup: AgentLookup,
    private readonly authz: AuthorizationService,
    private readonly config: AgentConfigService,
    private readonly access: AgentAccessService,
    private readonly lifecycle: AgentLifecycleService,
    private readonly budgets: BudgetSyncService,
    private readonly approvals: ApprovalsService,
  ) {}

  /** POST agents: a direct create, status idle. */
  async create(actor: Actor, companyId: string, dto: CreateAgentDto): Promise<AgentResponseDto> {
    return toAgentResponse(await this.insertAgent(actor, companyId, dto, 'idle', []));
  }

  /** POST agent-hires: pending_approval plus an approval when the company requires it, else a direct create. */
  async hire(actor: Actor, companyId: string, dto: HireAgentDto): Promise<HireResult> {
    const [company] = await this.db.query<{ require: boolean }>(
      `SELECT require_board_approval_for_new_agents AS require FROM companies WHERE id = $1 FOR SHARE`,
      [companyId],
    );
    const sourceIssueIds = [...new Set([...(dto.sourceIssueId ? [dto.sourceIssueId] : []), ...(dto.sourceIssueIds ?? [])])];
    // the issues feature validates that source issues belong to the company once it exists
    const agent = await this.insertAgent(actor, companyId, dto, company.require ? 'pending_approval' : 'idle', sourceIssueIds);
    if (!company.require) return { agent: toAgentResponse(agent), approval: null };
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
    const [company] = await this.db.query<{ require: boolean }>(
      `SELECT require_board_approval_for_new_agents AS require FROM companies WHERE id = $1 FOR SHARE`,
      [companyId],
    );
    // a paused hire stays paused once approved (the approval moves only pending_approval agents)
    const status = opts.startsPaused ? 'paused' : company.require ? 'pending_approval' : 'idle';
    const agent = await this.insertAgent(actor, companyId, dto, status, [], { [BUILT_IN_MARKER_KEY]: marker });
    if (!company.require) return { agent, approval: null };
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
    const adapterConfig = await this.config.forCreate(
      companyId,
      dto.adapterType,
      withDesiredSkills(dto.adapterConfig ?? {}, desiredSkills),
      {
        allowIncomplete: builtInMarker !== undefined,
      },
    );
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
    return this.lookup.repo.findOneByOrFail({ id });
  }

  /**
   * The URL key is the slug of the name, then -2, -3, … while a live agent holds it. The partial
   * unique index decides between concurrent creates (the loser moves on to the next suffix).
   */
  private async insertWithUniqueKey(companyId: string, name: string, values: unknown[]): Promise<string> {
    const base = urlKeyFromName(name);
    const taken = new Set(
      (
        await this.db.query<{ url_key: string }>(
          `SELECT url_key FROM agents WHERE company_id = $1 AND status <> 'terminated' AND (url_key = $2 OR url_key LIKE $2 || '-%')`,
          [companyId, base],
        )
      ).map((r) => r.url_key),
    );
    for (let n = 1; n < 10_000; n++) {
      const key = n === 1 ? base : `${base}-${n}`;
      if (taken.has(key)) continue;
      const rows = await this.db.query<{ id: string }>(
        `INSERT INTO agents (company_id, name, url_key, role, title, capabilities, reports_to, adapter_type, adapter_config,
                             runtime_config, budget_monthly_cents, status, permissions, metadata, source_issue_ids)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)
         ON CONFLICT (company_id, url_key) WHERE status <> 'terminated' DO NOTHING RETURNING id`,
        [companyId, name, key, ...values],
      );
      if (rows.length) return rows[0].id;
    }
    throw conflict('Could not derive a unique URL key from the name', 'agent_shortname_conflict');
  }

  /** Non-terminated agents; configuration redacted for callers that cannot read it. */
  async list(actor: Actor, companyId: string): Promise<AgentResponseDto[]> {
    const agents = await this.lookup.repo
      .createQueryBuilder('a')
      .where(`a.company_id = :companyId AND a.status <> 'terminated'`, { companyId })
      .orderBy('a.created_at', 'ASC')
      .addOrderBy('a.id', 'ASC')
      .getMany();
    const canReadAll = (await this.authz.decide({ actor, action: 'agent.config.read', companyId })).allowed;
    return agents.map((a) => toAgentResponse(a, !canReadAll && !(actor.kind === 'agent' && actor.agentId === a.id)));
  }

  async get(actor: Actor, ref: string, companyId?: string): Promise<AgentDetailResponseDto> {
    const agent = await this.lookup.byIdOrShortname(actor, ref, companyId);
    // a UUID with a ?companyId= of another company does not name this agent
    if (companyId !== undefined && agent.companyId !== companyId) throw notFound('Agent');
    return this.detail(actor, agent);
  }

  async me(actor: Actor): Promise<AgentDetailResponseDto> {
    if (actor.kind !== 'agent') throw badRequest('Agent authentication required');
    return this.detail(actor, await this.lookup.byId(actor, actor.agentId));
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
  async update(actor: Actor, agentId: string, dto: UpdateAgentDto): Promise<AgentResponseDto> {
    const agent = await this.lookup.byId(actor, agentId, true);
    if (dto.permissions !== undefined) {
      throw badRequest(
        'permissions cannot be changed here; use PATCH /api/agents/{agentId}/permissions',
        { field: 'permissions' },
        'permissions_not_patchable',
      );
    }
    if (dto.desiredSkills !== undefined) {
      throw badRequest(
        'desiredSkills cannot be changed here; use POST /api/agents/{agentId}/skills/sync',
        { field: 'desiredSkills' },
        'desired_skills_not_patchable',
      );
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
    if (dto.adapterType !== undefined || dto.adapterConfig !== undefined) {
      const type = dto.adapterType ?? agent.adapterType;
      const merged = dto.adapterConfig
        ? mergeAdapterConfig(agent.adapterConfig, dto.adapterConfig, dto.replaceAdapterConfig === true)
        : agent.adapterConfig;
      agent.adapterConfig = await this.config.forUpdate(agent.companyId, type, merged);
      agent.adapterType = type;
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
      const clash = await this.db.query(
        `SELECT 1 FROM agents WHERE company_id = $1 AND url_key = $2 AND status <> 'terminated' AND id <> $3`,
        [agent.companyId, key, agent.id],
      );
      if (clash.length)
        throw conflict(`Another agent already uses the shortname "${key}"`, 'agent_shortname_conflict', { field: 'name', urlKey: key });
    }
    agent.name = name;
    agent.urlKey = key;
  }

  private async saveGuardingKey(agent: AgentEntity): Promise<void> {
    try {
      await this.lookup.repo.save(agent);
    } catch (err) {
      if ((err as { driverError?: { code?: string } }).driverError?.code === UNIQUE_VIOLATION) {
        throw conflict(`Another agent already uses the shortname "${agent.urlKey}"`, 'agent_shortname_conflict', {
          field: 'name',
          urlKey: agent.urlKey,
        });
      }
      throw err;
    }
  }
}
