import { Injectable } from '@nestjs/common';
import type { Actor } from '../../common/auth/actor';
import { MembershipsService } from '../access/memberships.service';
import type { PermissionKey } from '../access/permission-keys';
import { AdapterRegistry } from '../adapters/adapter-registry.service';
import { AgentConfigService } from '../agents/agent-config.service';
import { withDesiredSkills } from '../agents/agent-fields';
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
  managedByOf,
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
  SkillOutcomeDto,
} from './dto/built-in-agents.dto';
import type { SkillsBridge } from './skills-bridge';

/** The direct counterparts a review-only built-in agent never holds. */
const DIRECT_KEYS: PermissionKey[] = ['agents:configure', 'skills:create'];

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
  /** set by a skills module (see SkillsBridge); absent, skills are reported pending */
  skills?: SkillsBridge;

  constructor(
    private readonly settings: InstanceSettingsService,
    private readonly marked: MarkedAgentsRepository,
    private readonly agents: AgentsService,
    private readonly agentConfig: AgentConfigService,
    private readonly adapters: AdapterRegistry,
    private readonly approvals: ApprovalsService,
    private readonly memberships: MembershipsService,
    private readonly routines: RoutinesService,
    private readonly authz: AuthorizationService,
  ) {}

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
        body: { ...(await this.view(companyId, r)), approval: null, skills: await this.ensureSkills(companyId, def, r.agent!, false) },
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
      this.marker(def),
      { startsPaused: def.startsPaused },
    );
    await this.setGrants(companyId, agent, def, actor, 'exact');
    await this.ensureRoutines(companyId, def, agent, actor, false);
    const skills = await this.ensureSkills(companyId, def, agent, false);
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
    const marker = this.marker(def, instructions ? this.markerOf(agent).instructionsVersion : def.instructionsVersion);
    // nothing written when nothing is missing: reconciling twice changes nothing
    if (!instructions || !sameJson(marker, agent.metadata.serviceBuiltInAgent)) {
      await this.marked.update(companyId, agent.id, {
        marker,
        ...(instructions ? {} : { adapterConfig: { ...agent.adapterConfig, instructions: def.instructions } }),
      });
    }
    await this.setGrants(companyId, agent, def, actor, 'ensure');
    await this.ensureRoutines(companyId, def, agent, actor, false);
    const skills = await this.ensureSkills(companyId, def, agent, false);
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
        marker: this.marker(def, this.markerOf(agent).instructionsVersion),
      });
      await this.setGrants(companyId, agent, def, actor, 'exact');
    }
    if (wanted.has('instructions')) {
      const fresh = (await this.marked.find(companyId, def.key))!;
      await this.marked.update(companyId, agent.id, {
        adapterConfig: { ...fresh.adapterConfig, instructions: def.instructions },
        marker: this.marker(def),
      });
    }
    if (wanted.has('routine')) await this.ensureRoutines(companyId, def, agent, actor, true);
    const skills = wanted.has('skill') ? await this.ensureSkills(companyId, def, agent, true) : [];
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
    await this.ensureRoutines(companyId, def, agent, by, false);
    return (await this.routines.findByKey(companyId, routineKey))!;
  }

  // ---- bundle parts

  /** The marker written on the agent row; only this feature writes it. */
  private marker(def: BuiltInAgentDefinition, instructionsVersion = def.instructionsVersion): Record<string, unknown> {
    return { key: def.key, featureKeys: def.featureKeys, instructionsVersion };
  }

  private markerOf(agent: AgentEntity): { instructionsVersion: number } {
    const m = agent.metadata.serviceBuiltInAgent as { instructionsVersion?: unknown } | undefined;
    return { instructionsVersion: typeof m?.instructionsVersion === 'number' ? m.instructionsVersion : 0 };
  }

  /**
   * The agent's company membership and its grants: `exact` sets the registry's keys (provision,
   * reset); `ensure` adds missing ones (reconcile). Either way the direct counterparts of
   * review-only keys are removed: a reviewing agent proposes, never applies.
   */
  private async setGrants(
    companyId: string,
    agent: AgentEntity,
    def: BuiltInAgentDefinition,
    by: Actor,
    mode: 'exact' | 'ensure',
  ): Promise<void> {
    const membership = await this.memberships.join(companyId, 'agent', agent.id, 'member', by);
    const current = mode === 'ensure' ? (await this.memberships.get(companyId, membership.id)).grants : [];
    const reviewOnly = def.grants.some((g) => g.endsWith(':suggest-changes'));
    const kept = current.filter((g) => !(reviewOnly && DIRECT_KEYS.includes(g.permissionKey)) && !def.grants.includes(g.permissionKey));
    const grants = [...kept, ...def.grants.map((permissionKey) => ({ permissionKey, scope: null }))];
    if (
      mode === 'ensure' &&
      grants.length === current.length &&
      def.grants.every((k) => current.some((g) => g.permissionKey === k && !g.scope))
    )
      return;
    await this.memberships.update(companyId, membership.id, { grants }, by);
  }

  /** The registry's routines, assigned to the agent; created disabled. `reset` restores their registry fields (disabled again). */
  private async ensureRoutines(
    companyId: string,
    def: BuiltInAgentDefinition,
    agent: AgentEntity,
    by: Actor,
    reset: boolean,
  ): Promise<void> {
    for (const rd of def.routines) {
      const existing = await this.routines.findByKey(companyId, rd.key);
      if (!existing) {
        await this.routines.createForCompany(
          companyId,
          {
            title: rd.title,
            description: rd.description,
            assigneeAgentId: agent.id,
            status: 'paused',
            concurrencyPolicy: 'skip_if_active',
            catchUpPolicy: 'coalesce',
            triggers: [{ kind: 'schedule', label: rd.label, cronExpression: rd.cronExpression, timezone: rd.timezone }],
          },
          by,
          { routineKey: rd.key, managedBy: managedByOf(def.key) },
        );
        continue;
      }
      if (existing.assigneeAgentId !== agent.id)
        await this.routines.updateForCompany(companyId, existing.id, { assigneeAgentId: agent.id }, by);
      if (reset) {
        await this.routines.updateForCompany(
          companyId,
          existing.id,
          {
            title: rd.title,
            description: rd.description,
            concurrencyPolicy: 'skip_if_active',
            catchUpPolicy: 'coalesce',
            status: 'paused',
          },
          by,
        );
        await this.routines.ensureScheduleTrigger(companyId, existing.id, rd.cronExpression, rd.timezone, rd.label);
      }
    }
  }

  /** The registry's catalog skills, installed through the skills module and made the agent's desired skills. */
  private async ensureSkills(
    companyId: string,
    def: BuiltInAgentDefinition,
    agent: AgentEntity,
    reset: boolean,
  ): Promise<SkillOutcomeDto[]> {
    if (!def.skills.length) return [];
    if (!this.skills) return def.skills.map((slug) => ({ slug, status: 'pending', skillId: null }));
    const out: SkillOutcomeDto[] = [];
    const keys: string[] = [];
    for (const slug of def.skills) {
      const installed = await this.skills.installCatalogSkill(companyId, slug, { reset });
      out.push({ slug, status: installed.action, skillId: installed.skillId });
      keys.push(installed.key);
    }
    const fresh = (await this.marked.find(companyId, def.key))!;
    const desired = (fresh.adapterConfig.serviceSkillSync as { desiredSkills?: string[] } | undefined)?.desiredSkills ?? [];
    if (keys.some((k) => !desired.includes(k))) {
      await this.marked.update(companyId, agent.id, { adapterConfig: withDesiredSkills(fresh.adapterConfig, [...desired, ...keys]) });
    }
    return out;
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

/** Equal as JSON values, whatever the key order (jsonb reorders keys). */
function sameJson(a: unknown, b: unknown): boolean {
  const norm = (v: unknown): unknown =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(
          Object.keys(v as object)
            .sort()
            .map((k) => [k, norm((v as Record<string, unknown>)[k])]),
        )
      : Array.isArray(v)
        ? v.map(norm)
        : v;
  return JSON.stringify(norm(a)) === JSON.stringify(norm(b));
}

const pick = (o: Record<string, unknown>, keys: string[]) => Object.fromEntries(keys.filter((k) => k in o).map((k) => [k, o[k]]));
