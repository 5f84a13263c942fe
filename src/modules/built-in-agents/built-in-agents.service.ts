import { Injectable } from '@nestjs/common';
import type { Actor } from '../../common/auth/actor';
import { AdapterRegistry } from '../adapters/adapter-registry.service';
import { AgentConfigService } from '../agents/agent-config.service';
import { toAgentResponse } from '../agents/agent-view';
import type { AgentEntity } from '../agents/agent.entity';
import { AgentsService } from '../agents/agents.service';
import { MarkedAgentsRepository } from '../agents/marked-agents.repository';
import { ApprovalsService } from '../approvals/approvals.service';
import { AuthorizationService } from '../authorization/authorization.service';
import { InstanceSettingsService } from '../instance/instance-settings.service';
import type { RoutineResponseDto } from '../routines/dto/routine.dto';
import { RoutinesService } from '../routines/routines.service';
import { builtInError, DISABLED_MESSAGE, PAUSED_WARNING } from './built-in-agents.errors';
import {
  BUILT_IN_AGENTS,
  BUILT_IN_KEYS,
  BuiltInAgentDefinition,
  BuiltInKey,
  BuiltInState,
  isBuiltInKey,
  routineDefinition,
} from './built-in-agents.registry';
import {
  BuiltInAgentStatusDto,
  BuiltInRoutineRunDto,
  BuiltInWarningDto,
  ProvisionBuiltInAgentDto,
  ProvisionResultDto,
  RESET_RESOURCES,
  ResetResource,
  ResetResultDto,
} from './dto/built-in-agents.dto';
import { SkillsBridgePort, type SkillsBridge } from './skills-bridge.port';
import { BuiltInBundle, markerFor, markerOf, pick, sameJson } from './built-in-bundle.service';

interface Resolved {
  def: BuiltInAgentDefinition;
  agent: AgentEntity | null;
  approvalId: string | null;
  missing: string[];
  state: BuiltInState;
}

/**
 * Built-in agents provisioned from the registry: normal agent rows marked with
 * `metadata.serviceBuiltInAgent` (`{ key, featureKeys, instructionsVersion }`), whose lifecycle
 * state is derived from the row (not stored): no marked agent -> not_provisioned; a pending hire
 * approval -> pending_approval; adapter configuration incomplete -> needs_setup; paused ->
 * paused; else ready. Internal features that need one call `require()`: 412
 * `built_in_agent_not_configured`, or a `built_in_agent_paused` warning.
 */
@Injectable()
export class BuiltInAgentsService {
  constructor(
    private readonly settings: InstanceSettingsService,
    private readonly marked: MarkedAgentsRepository,
    private readonly agents: AgentsService,
    private readonly agentConfig: AgentConfigService,
    private readonly adapters: AdapterRegistry,
    private readonly approvals: ApprovalsService,
    private readonly routines: RoutinesService,
    private readonly authz: AuthorizationService,
    private readonly bundle: BuiltInBundle,
    private readonly skillsBridge: SkillsBridgePort,
  ) {}

  /** The skills module's bridge (see SkillsBridge); absent, skills are reported pending. */
  get skills(): SkillsBridge | undefined {
    return this.skillsBridge.bridge;
  }

  /** The instance feature flag (experimental setting `builtInAgents`, default from SERVICE_ENABLE_BUILT_IN_AGENTS). */
  async assertEnabled(): Promise<void> {
    if (!(await this.settings.experimental()).builtInAgents) throw builtInError('built_in_agents_disabled', DISABLED_MESSAGE);
  }

  definition(key: string): BuiltInAgentDefinition {
    if (!isBuiltInKey(key))
      throw builtInError('unknown_built_in_agent', `Unknown built-in agent "${key}"; known: ${BUILT_IN_KEYS.join(', ')}`);
    return BUILT_IN_AGENTS[key];
  }

  // ---- reads

  async list(companyId: string): Promise<BuiltInAgentStatusDto[]> {
    await this.assertEnabled();
    const out: BuiltInAgentStatusDto[] = [];
    for (const key of BUILT_IN_KEYS) out.push(await this.view(companyId, await this.resolve(companyId, key)));
    return out;
  }

  async status(companyId: string, key: string): Promise<BuiltInAgentStatusDto> {
    await this.assertEnabled();
    return this.view(companyId, await this.resolve(companyId, this.definition(key).key));
  }

  /**
   * For internal features that need a built-in agent: the agent and any warning, or 412
   * `built_in_agent_not_configured` when it is missing, waiting for approval or needs setup.
   */
  async require(companyId: string, key: BuiltInKey): Promise<{ agent: AgentEntity; warnings: BuiltInWarningDto[] }> {
    const r = await this.resolve(companyId, key);
    if (!r.agent || r.state === 'not_provisioned' || r.state === 'needs_setup' || r.state === 'pending_approval') {
      throw builtInError(
        'built_in_agent_not_configured',
        `The built-in agent ${r.def.displayName} is ${r.state === 'not_provisioned' ? 'not provisioned' : r.state.replace('_', ' ')}`,
        {
          key,
          state: r.state,
          ...(r.missing.length ? { missing: r.missing } : {}),
        },
      );
    }
    return { agent: r.agent, warnings: this.warnings(r) };
  }

  // ---- provisioning

  /** 200 with the status, or 202 when the company requires board approval (the approval is in the body). */
  async provision(
    actor: Actor,
    companyId: string,
    key: string,
    dto: ProvisionBuiltInAgentDto,
  ): Promise<{ accepted: boolean; body: ProvisionResultDto }> {
    await this.assertEnabled();
    const def = this.definition(key);
    await this.authz.assert({ actor, action: 'agent.create', companyId });
    const adapterType = dto.adapterType ?? def.allowedAdapterTypes[0];
    if (!def.allowedAdapterTypes.includes(adapterType)) {
      throw builtInError(
        'adapter_type_not_allowed',
        `adapterType "${adapterType}" is not allowed for ${def.key}; allowed: ${def.allowedAdapterTypes.join(', ')}`,
        {
          field: 'adapterType',
          allowedAdapterTypes: def.allowedAdapterTypes,
        },
      );
    }
    await this.marked.lockKey(companyId, def.key);
    const existing = await this.marked.find(companyId, def.key, true);
    if (existing) {
      // provisioning again completes or changes the adapter setup; everything else stays
      if (dto.adapterType !== undefined || dto.adapterConfig !== undefined) {
        await this.updateAdapterSetup(existing, dto.adapterType ?? existing.adapterType, dto.adapterConfig ?? {});
      }
      const r = await this.resolve(companyId, def.key);
      return {
        accepted: false,
        body: {
          ...(await this.view(companyId, r)),
          approval: null,
          skills: await this.bundle.ensureSkills(companyId, def, r.agent!, false, this.skills),
        },
      };
    }
    const { agent, approval } = await this.agents.createBuiltIn(
      actor,
      companyId,
      {
        name: def.displayName,
        role: def.defaultRole,
        title: def.title,
        capabilities: def.capabilities,
        adapterType,
        adapterConfig: { ...(dto.adapterConfig ?? {}), instructions: def.instructions },
        budgetMonthlyCents: dto.budgetMonthlyCents ?? def.budgetMonthlyCents,
      },
      markerFor(def),
      { startsPaused: def.startsPaused },
    );
    await this.bundle.setGrants(companyId, agent, def, actor, 'exact');
    await this.bundle.ensureRoutines(companyId, def, agent, actor, false);
    const skills = await this.bundle.ensureSkills(companyId, def, agent, false, this.skills);
    const r = await this.resolve(companyId, def.key);
    return {
      accepted: approval !== null,
      body: { ...(await this.view(companyId, r)), approval: approval as unknown as Record<string, unknown> | null, skills },
    };
  }

  /** Idempotent: restores what is missing of the bundle (marker, instructions, grants, routines, skill); keeps adapter setup and edits. */
  async reconcile(actor: Actor, companyId: string, key: string): Promise<ProvisionResultDto> {
    await this.assertEnabled();
    const def = this.definition(key);
    await this.authz.assert({ actor, action: 'agent.create', companyId });
    const agent = await this.provisioned(companyId, def, true);
    const instructions = typeof agent.adapterConfig.instructions === 'string' && agent.adapterConfig.instructions.trim() !== '';
    const marker = markerFor(def, instructions ? markerOf(agent).instructionsVersion : def.instructionsVersion);
    // nothing written when nothing is missing: reconciling twice changes nothing
    if (!instructions || !sameJson(marker, agent.metadata.serviceBuiltInAgent)) {
      await this.marked.update(companyId, agent.id, {
        marker,
        ...(instructions ? {} : { adapterConfig: { ...agent.adapterConfig, instructions: def.instructions } }),
      });
    }
    await this.bundle.setGrants(companyId, agent, def, actor, 'ensure');
    await this.bundle.ensureRoutines(companyId, def, agent, actor, false);
    const skills = await this.bundle.ensureSkills(companyId, def, agent, false, this.skills);
    return { ...(await this.view(companyId, await this.resolve(companyId, def.key))), approval: null, skills };
  }

  /** Restores registry defaults of the named resources (all when omitted); adapter setup is kept. */
  async reset(actor: Actor, companyId: string, key: string, resources: ResetResource[] | undefined): Promise<ResetResultDto> {
    await this.assertEnabled();
    const def = this.definition(key);
    await this.authz.assert({ actor, action: 'agent.create', companyId });
    const agent = await this.provisioned(companyId, def, true);
    const wanted = new Set<ResetResource>(resources ?? RESET_RESOURCES);
    if (wanted.has('agent')) {
      await this.marked.update(companyId, agent.id, {
        role: def.defaultRole,
        title: def.title,
        capabilities: def.capabilities,
        marker: markerFor(def, markerOf(agent).instructionsVersion),
      });
      await this.bundle.setGrants(companyId, agent, def, actor, 'exact');
    }
    if (wanted.has('instructions')) {
      const fresh = (await this.marked.find(companyId, def.key))!;
      await this.marked.update(companyId, agent.id, {
        adapterConfig: { ...fresh.adapterConfig, instructions: def.instructions },
        marker: markerFor(def),
      });
    }
    if (wanted.has('routine')) await this.bundle.ensureRoutines(companyId, def, agent, actor, true);
    const skills = wanted.has('skill') ? await this.bundle.ensureSkills(companyId, def, agent, true, this.skills) : [];
    return {
      ...(await this.view(companyId, await this.resolve(companyId, def.key))),
      reset: RESET_RESOURCES.filter((x) => wanted.has(x)),
      skills,
    };
  }

  // ---- routines of a built-in agent

  /** Activates the routine and its schedule, and resumes a paused agent. Needs tasks:assign (board). */
  async enableRoutine(actor: Actor, companyId: string, key: string, routineKey: string): Promise<BuiltInAgentStatusDto> {
    const { def, agent } = await this.forRoutine(actor, companyId, key, routineKey);
    const routine = await this.routineOf(companyId, def, agent, actor, routineKey);
    await this.routines.setStatus(companyId, routine.id, 'active', actor);
    await this.marked.resumeIfPaused(companyId, agent.id);
    return this.view(companyId, await this.resolve(companyId, def.key));
  }

  /** Pauses the routine and its schedule (the agent stays as it is). */
  async disableRoutine(actor: Actor, companyId: string, key: string, routineKey: string): Promise<BuiltInAgentStatusDto> {
    const { def, agent } = await this.forRoutine(actor, companyId, key, routineKey, false);
    const routine = await this.routineOf(companyId, def, agent, actor, routineKey);
    await this.routines.setStatus(companyId, routine.id, 'paused', actor);
    return this.view(companyId, await this.resolve(companyId, def.key));
  }

  /** One execution now, whatever the routine's status; a paused agent gets the issue but is not woken (warning). */
  async runRoutine(actor: Actor, companyId: string, key: string, routineKey: string): Promise<BuiltInRoutineRunDto> {
    const { def, agent, warnings } = await this.forRoutine(actor, companyId, key, routineKey);
    const routine = await this.routineOf(companyId, def, agent, actor, routineKey);
    const run = await this.routines.runNowForCompany(companyId, routine.id, actor);
    return { run: run as unknown as Record<string, unknown>, warnings };
  }

  private async forRoutine(actor: Actor, companyId: string, key: string, routineKey: string, requireConfigured = true) {
    await this.assertEnabled();
    const def = this.definition(key);
    if (!routineDefinition(def, routineKey)) {
      throw builtInError(
        'unknown_built_in_routine',
        `Unknown routine "${routineKey}" of ${def.key}; known: ${def.routines.map((r) => r.key).join(', ')}`,
      );
    }
    await this.authz.assert({ actor, action: 'tasks.assign.grant', companyId });
    if (!requireConfigured) return { def, agent: await this.provisioned(companyId, def, false), warnings: [] };
    const { agent, warnings } = await this.require(companyId, def.key);
    return { def, agent, warnings };
  }

  private async routineOf(
    companyId: string,
    def: BuiltInAgentDefinition,
    agent: AgentEntity,
    by: Actor,
    routineKey: string,
  ): Promise<RoutineResponseDto> {
    const found = await this.routines.findByKey(companyId, routineKey);
    if (found && found.assigneeAgentId === agent.id) return found;
    await this.bundle.ensureRoutines(companyId, def, agent, by, false);
    return (await this.routines.findByKey(companyId, routineKey))!;
  }

  private async updateAdapterSetup(agent: AgentEntity, adapterType: string, incoming: Record<string, unknown>): Promise<void> {
    const base = adapterType === agent.adapterType ? agent.adapterConfig : pick(agent.adapterConfig, ['instructions', 'serviceSkillSync']);
    const config = await this.agentConfig.forUpdate(agent.companyId, adapterType, { ...base, ...incoming }, { allowIncomplete: true });
    await this.marked.update(agent.companyId, agent.id, { adapterType, adapterConfig: config });
  }

  // ---- state

  private async provisioned(companyId: string, def: BuiltInAgentDefinition, lock: boolean): Promise<AgentEntity> {
    const agent = await this.marked.find(companyId, def.key, lock);
    if (!agent) {
      throw builtInError('built_in_agent_not_configured', `The built-in agent ${def.displayName} is not provisioned`, {
        key: def.key,
        state: 'not_provisioned',
      });
    }
    return agent;
  }

  private async resolve(companyId: string, key: BuiltInKey): Promise<Resolved> {
    const def = BUILT_IN_AGENTS[key];
    const agent = await this.marked.find(companyId, key);
    if (!agent) return { def, agent: null, approvalId: null, missing: [], state: 'not_provisioned' };
    const [pending] = (await this.approvals.list(companyId, { status: 'pending', type: 'hire_agent' })).filter(
      (a) => a.agentId === agent.id,
    );
    const missing = this.missingSetup(agent);
    let state: BuiltInState = 'ready';
    if (pending || agent.status === 'pending_approval') state = 'pending_approval';
    else if (missing.length) state = 'needs_setup';
    else if (agent.status === 'paused') state = 'paused';
    return { def, agent, approvalId: pending?.id ?? null, missing, state };
  }

  /** Adapter configuration fields still needed: the type's required keys, and a model for local runtimes without a default one. */
  private missingSetup(agent: AgentEntity): string[] {
    const type = this.adapters.get(agent.adapterType);
    if (!type) return ['adapterType'];
    const cfg = agent.adapterConfig ?? {};
    const empty = (k: string) => cfg[k] === undefined || cfg[k] === null || cfg[k] === '';
    const missing = (type.configSchema.required ?? []).filter(empty);
    if (agent.adapterType.endsWith('_local') && type.configSchema.properties.model && empty('model')) missing.push('model');
    return missing.map((k) => `adapterConfig.${k}`);
  }

  private warnings(r: Resolved): BuiltInWarningDto[] {
    return r.state === 'paused'
      ? [{ code: PAUSED_WARNING, message: `The built-in agent ${r.def.displayName} is paused; its work waits until it is resumed.` }]
      : [];
  }

  private async view(companyId: string, r: Resolved): Promise<BuiltInAgentStatusDto> {
    const { def, agent } = r;
    const routines = [];
    for (const rd of def.routines) {
      const found = agent ? await this.routines.findByKey(companyId, rd.key) : null;
      const schedule = found?.triggers.find((t) => t.kind === 'schedule');
      routines.push({ key: rd.key, routineId: found?.id ?? null, status: found?.status ?? null, nextRunAt: schedule?.nextRunAt ?? null });
    }
    return {
      key: def.key,
      displayName: def.displayName,
      defaultRole: def.defaultRole,
      allowedAdapterTypes: def.allowedAdapterTypes,
      defaultAdapterType: def.allowedAdapterTypes[0],
      budgetMonthlyCents: def.budgetMonthlyCents,
      featureKeys: def.featureKeys,
      state: r.state,
      agentId: agent?.id ?? null,
      // adapter and runtime configuration redacted in every built-in agents answer
      agent: agent ? toAgentResponse(agent, true) : null,
      approvalId: r.approvalId,
      setup: agent ? { complete: r.missing.length === 0, missing: r.missing } : null,
      bundle: {
        instructionsVersion: def.instructionsVersion,
        skills: def.skills,
        routines: def.routines.map((x) => ({ key: x.key, title: x.title, cronExpression: x.cronExpression, timezone: x.timezone })),
        grants: def.grants,
        startsPaused: def.startsPaused,
      },
      routines,
      warnings: this.warnings(r),
    };
  }
}
