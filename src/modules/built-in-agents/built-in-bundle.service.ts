import { Injectable } from '@nestjs/common';
import type { Actor } from '../../common/auth/actor';
import { MembershipsService } from '../access/memberships.service';
import type { PermissionKey } from '../access/permission-keys';
import { withDesiredSkills } from '../agents/agent-fields';
import type { AgentEntity } from '../agents/agent.entity';
import { MarkedAgentsRepository } from '../agents/marked-agents.repository';
import { RoutinesService } from '../routines/routines.service';
import { BuiltInAgentDefinition, managedByOf } from './built-in-agents.registry';
import type { SkillOutcomeDto } from './dto/built-in-agents.dto';
import type { SkillsBridge } from './skills-bridge.port';

/** The direct counterparts a review-only built-in agent never holds. */
const DIRECT_KEYS: PermissionKey[] = ['agents:configure', 'skills:create'];

/** The marker written on the agent row; only this feature writes it. */
export function markerFor(def: BuiltInAgentDefinition, instructionsVersion = def.instructionsVersion): Record<string, unknown> {
  return { key: def.key, featureKeys: def.featureKeys, instructionsVersion };
}

export function markerOf(agent: AgentEntity): { instructionsVersion: number } {
  const m = agent.metadata.serviceBuiltInAgent as { instructionsVersion?: unknown } | undefined;
  return { instructionsVersion: typeof m?.instructionsVersion === 'number' ? m.instructionsVersion : 0 };
}

/**
 * The parts of a built-in agent's bundle besides its row: its grants, its routines and its
 * catalog skills, provisioned, reconciled and reset by BuiltInAgentsService.
 */
@Injectable()
export class BuiltInBundle {
  constructor(
    private readonly marked: MarkedAgentsRepository,
    private readonly memberships: MembershipsService,
    private readonly routines: RoutinesService,
  ) {}

  /**
   * The agent's company membership and its grants: `exact` sets the registry's keys (provision,
   * reset); `ensure` adds missing ones (reconcile). Either way the direct counterparts of
   * review-only keys are removed: a reviewing agent proposes, never applies.
   */
  async setGrants(companyId: string, agent: AgentEntity, def: BuiltInAgentDefinition, by: Actor, mode: 'exact' | 'ensure'): Promise<void> {
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
  async ensureRoutines(companyId: string, def: BuiltInAgentDefinition, agent: AgentEntity, by: Actor, reset: boolean): Promise<void> {
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
  async ensureSkills(
    companyId: string,
    def: BuiltInAgentDefinition,
    agent: AgentEntity,
    reset: boolean,
    bridge: SkillsBridge | undefined,
  ): Promise<SkillOutcomeDto[]> {
    if (!def.skills.length) return [];
    if (!bridge) return def.skills.map((slug) => ({ slug, status: 'pending', skillId: null }));
    const out: SkillOutcomeDto[] = [];
    const keys: string[] = [];
    for (const slug of def.skills) {
      const installed = await bridge.installCatalogSkill(companyId, slug, { reset });
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
}

/** Equal as JSON values, whatever the key order (jsonb reorders keys). */
export function sameJson(a: unknown, b: unknown): boolean {
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

export const pick = (o: Record<string, unknown>, keys: string[]) => Object.fromEntries(keys.filter((k) => k in o).map((k) => [k, o[k]]));
