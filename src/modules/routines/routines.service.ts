import { Injectable } from '@nestjs/common';
import type { Actor } from '../../common/auth/actor';
import { notFound } from '../../common/errors/domain-error';
import { isUuid } from '../../common/http/uuid';
import { AgentLookup } from '../agents/agent-lookup.service';
import { AuthorizationService } from '../authorization/authorization.service';
import { Clock } from '../budgets/clock.service';
import { FoldersService } from '../folders/folders.service';
import { assertCron, assertTimeZone, nextFiring } from './cron';
import {
  CreateRoutineDto,
  CreateTriggerDto,
  RoutineDetailResponseDto,
  RoutineResponseDto,
  RoutineRunResponseDto,
  TriggerResponseDto,
  UpdateRoutineDto,
  UpdateTriggerDto,
} from './dto/routine.dto';
import { RoutineFiring } from './routine-firing.service';
import { toRoutineResponse, toRunResponse, toTriggerResponse } from './routine-view';
import { routineError } from './routines.errors';
import {
  RoutineFields,
  RoutineRecord,
  RoutinesRepository,
  RoutineRunRecord,
  RoutineTriggerRecord,
  TriggerFields,
} from './routines.repository';

/** Who acts: a caller, or the system (built-in agents provisioning, imports). */
type By = Actor | null;

/** Fields only the owning feature sets (built-in agents): a key and an owner label. */
export interface ManagedRoutineFields {
  routineKey?: string;
  managedBy?: string;
}

const byFields = (by: By, prefix: 'created' | 'updated') => ({
  [`${prefix}ByAgentId` as const]: by?.kind === 'agent' ? by.agentId : null,
  [`${prefix}ByUserId` as const]: by?.kind === 'board' ? by.userId : null,
});

/**
 * Routines: CRUD, pause/resume, triggers, run now, executions. Whoever may assign tasks to the
 * routine's agent may manage the routine (one authorization decision, `issue.assign`).
 * Exported for the built-in agents (their routines) and portability (export/import):
 * `listForCompany`, `createForCompany`, `findByKey`, `setStatus`, `runNow`.
 */
@Injectable()
export class RoutinesService {
  constructor(
    private readonly repo: RoutinesRepository,
    private readonly firing: RoutineFiring,
    private readonly authz: AuthorizationService,
    private readonly clock: Clock,
    private readonly folders: FoldersService,
    private readonly agents: AgentLookup,
  ) {}

  // ---- reads

  async listForCompany(companyId: string): Promise<RoutineResponseDto[]> {
    return this.views(companyId, await this.repo.list(companyId));
  }

  /** `companyId`: the route's company (resolved and checked by the guard; undefined when it knows no such routine). */
  async get(companyId: string | undefined, routineId: string): Promise<RoutineDetailResponseDto> {
    const routine = await this.load(companyId, routineId);
    return this.detail(routine);
  }

  async runs(companyId: string | undefined, routineId: string, limit = 50): Promise<RoutineRunResponseDto[]> {
    const routine = await this.load(companyId, routineId);
    const triggers = new Map((await this.repo.triggersOf(routine.companyId, [routine.id])).map((t) => [t.id, t]));
    return (await this.repo.runsOf(routine.companyId, routine.id, limit)).map((r) => toRunResponse(r, triggers));
  }

  async findByKey(companyId: string, routineKey: string): Promise<RoutineResponseDto | null> {
    const r = await this.repo.byKey(companyId, routineKey);
    return r ? (await this.views(companyId, [r]))[0] : null;
  }

  // ---- writes

  async create(actor: Actor, companyId: string, dto: CreateRoutineDto): Promise<RoutineDetailResponseDto> {
    await this.assertMayManage(actor, companyId, dto.assigneeAgentId, dto.projectId ?? null);
    return this.createForCompany(companyId, dto, actor);
  }

  /** Creates a routine without a caller's authorization (the caller of this method decided it). */
  async createForCompany(
    companyId: string,
    dto: CreateRoutineDto,
    by: By,
    managed: ManagedRoutineFields = {},
  ): Promise<RoutineDetailResponseDto> {
    await this.assertReferences(companyId, dto);
    if (dto.folderId) await this.folders.assertFileable(by, companyId, 'routine', dto.folderId);
    // a built-in agent's routine may be created while its agent waits for hire approval
    if (!managed.managedBy) await this.assertUsableAssignee(companyId, dto.assigneeAgentId);
    for (const [i, t] of (dto.triggers ?? []).entries()) this.validateTrigger(t, `triggers[${i}]`);
    const routine = await this.repo.insert(companyId, {
      title: dto.title.trim(),
      description: dto.description ?? null,
      assigneeAgentId: dto.assigneeAgentId,
      projectId: dto.projectId ?? null,
      goalId: dto.goalId ?? null,
      parentIssueId: dto.parentIssueId ?? null,
      folderId: dto.folderId ?? null,
      priority: dto.priority ?? 'medium',
      status: dto.status ?? 'active',
      concurrencyPolicy: dto.concurrencyPolicy ?? 'skip_if_active',
      catchUpPolicy: dto.catchUpPolicy ?? 'coalesce',
      routineKey: managed.routineKey ?? null,
      managedBy: managed.managedBy ?? null,
      ...byFields(by, 'created'),
      ...byFields(by, 'updated'),
    });
    for (const t of dto.triggers ?? []) await this.insertTrigger(routine, t, by);
    return this.detail(routine);
  }

  async update(actor: Actor, companyId: string | undefined, routineId: string, dto: UpdateRoutineDto): Promise<RoutineDetailResponseDto> {
    const routine = await this.loadForChange(actor, companyId, routineId);
    if (dto.assigneeAgentId !== undefined || dto.projectId !== undefined) {
      await this.assertMayManage(
        actor,
        routine.companyId,
        dto.assigneeAgentId ?? routine.assigneeAgentId,
        dto.projectId !== undefined ? dto.projectId : routine.projectId,
      );
    }
    return this.updateForCompany(routine.companyId, routine.id, dto, actor);
  }

  async updateForCompany(companyId: string, routineId: string, dto: UpdateRoutineDto, by: By): Promise<RoutineDetailResponseDto> {
    const routine = await this.repo.get(companyId, routineId, true);
    if (!routine) throw notFound('Routine');
    await this.assertReferences(companyId, dto);
    if (dto.folderId) await this.folders.assertFileable(by, companyId, 'routine', dto.folderId);
    if (dto.assigneeAgentId !== undefined && dto.assigneeAgentId !== routine.assigneeAgentId && !routine.managedBy) {
      await this.assertUsableAssignee(companyId, dto.assigneeAgentId);
    }
    const values: RoutineFields = { ...byFields(by, 'updated') };
    const fields: Array<keyof UpdateRoutineDto & keyof RoutineRecord> = [
      'title',
      'description',
      'assigneeAgentId',
      'projectId',
      'goalId',
      'parentIssueId',
      'folderId',
      'priority',
      'concurrencyPolicy',
      'catchUpPolicy',
    ];
    for (const field of fields) if (dto[field] !== undefined) values[field] = field === 'title' ? String(dto.title).trim() : dto[field];
    let updated = await this.repo.update(companyId, routineId, values);
    if (dto.status !== undefined && dto.status !== routine.status) updated = await this.applyStatus(updated, dto.status, by);
    return this.detail(updated);
  }

  async remove(actor: Actor, companyId: string | undefined, routineId: string): Promise<RoutineResponseDto> {
    const routine = await this.loadForChange(actor, companyId, routineId);
    if (routine.managedBy) {
      throw routineError('routine_managed', `This routine belongs to ${routine.managedBy}; disable it there instead of deleting it`, {
        managedBy: routine.managedBy,
      });
    }
    const [view] = await this.views(routine.companyId, [routine]);
    await this.repo.remove(routine.companyId, routine.id);
    return view;
  }

  async pause(actor: Actor, companyId: string | undefined, routineId: string): Promise<RoutineDetailResponseDto> {
    const routine = await this.loadForChange(actor, companyId, routineId);
    return this.detail(await this.applyStatus(routine, 'paused', actor));
  }

  async resume(actor: Actor, companyId: string | undefined, routineId: string): Promise<RoutineDetailResponseDto> {
    const routine = await this.loadForChange(actor, companyId, routineId);
    return this.detail(await this.applyStatus(routine, 'active', actor));
  }

  /**
   * Status of a routine by id within a company (built-in agents enable/disable). Paused: no
   * trigger is due. Active again: schedules restart from now (firings while paused are not owed).
   */
  async setStatus(companyId: string, routineId: string, status: 'active' | 'paused', by: By): Promise<RoutineDetailResponseDto> {
    const routine = await this.repo.get(companyId, routineId, true);
    if (!routine) throw notFound('Routine');
    return this.detail(await this.applyStatus(routine, status, by));
  }

  private async applyStatus(routine: RoutineRecord, status: 'active' | 'paused', by: By): Promise<RoutineRecord> {
    const updated =
      routine.status === status ? routine : await this.repo.update(routine.companyId, routine.id, { status, ...byFields(by, 'updated') });
    if (status === 'paused') {
      await this.repo.clearNextRuns(routine.companyId, routine.id);
    } else {
      const now = this.clock.now();
      for (const t of await this.repo.triggersOf(routine.companyId, [routine.id])) {
        await this.repo.updateTrigger(routine.companyId, t.id, { nextRunAt: this.nextFor(t, 'active', now) });
      }
    }
    return updated;
  }

  /** Run now (202): one execution, under the routine's concurrency policy, whatever its status. */
  async runNow(actor: Actor, companyId: string | undefined, routineId: string): Promise<RoutineRunResponseDto> {
    const routine = await this.loadForChange(actor, companyId, routineId);
    return this.runNowForCompany(routine.companyId, routine.id, actor);
  }

  async runNowForCompany(companyId: string, routineId: string, by: By): Promise<RoutineRunResponseDto> {
    const run = await this.firing.fire(companyId, routineId, { source: 'manual', actor: by ?? undefined });
    return toRunResponse(run as RoutineRunRecord);
  }

  // ---- triggers

  async addTrigger(actor: Actor, companyId: string | undefined, routineId: string, dto: CreateTriggerDto): Promise<TriggerResponseDto> {
    const routine = await this.loadForChange(actor, companyId, routineId);
    this.validateTrigger(dto, 'trigger');
    return toTriggerResponse(await this.insertTrigger(routine, dto, actor));
  }

  async updateTrigger(actor: Actor, companyId: string | undefined, triggerId: string, dto: UpdateTriggerDto): Promise<TriggerResponseDto> {
    const { routine, trigger } = await this.loadTrigger(actor, companyId, triggerId);
    const cron = dto.cronExpression ?? trigger.cronExpression;
    const tz = dto.timezone ?? trigger.timezone ?? 'UTC';
    if (trigger.kind === 'schedule') {
      assertTimeZone(tz);
      assertCron(cron!, tz);
    } else if (dto.cronExpression !== undefined || dto.timezone !== undefined) {
      throw routineError('invalid_cron_expression', 'A manual trigger has no schedule', { field: 'cronExpression' });
    }
    const values: TriggerFields = { ...byFields(actor, 'updated') };
    if (dto.label !== undefined) values.label = dto.label;
    if (dto.enabled !== undefined) values.enabled = dto.enabled;
    if (trigger.kind === 'schedule') {
      values.cronExpression = cron!.trim();
      values.timezone = tz;
      const next = { ...trigger, enabled: dto.enabled ?? trigger.enabled, cronExpression: cron!.trim(), timezone: tz };
      values.nextRunAt = this.nextFor(next, routine.status, this.clock.now());
    }
    return toTriggerResponse(await this.repo.updateTrigger(routine.companyId, trigger.id, values));
  }

  async removeTrigger(actor: Actor, companyId: string | undefined, triggerId: string): Promise<TriggerResponseDto> {
    const { routine, trigger } = await this.loadTrigger(actor, companyId, triggerId);
    await this.repo.removeTrigger(routine.companyId, trigger.id);
    return toTriggerResponse(trigger);
  }

  /** Built-in agents: a schedule trigger of a routine (re)set to the given cron, keeping its id. */
  async ensureScheduleTrigger(
    companyId: string,
    routineId: string,
    cronExpression: string,
    timezone: string,
    label: string,
  ): Promise<void> {
    const routine = await this.repo.get(companyId, routineId, true);
    if (!routine) throw notFound('Routine');
    const triggers = (await this.repo.triggersOf(companyId, [routineId])).filter((t) => t.kind === 'schedule');
    const next = this.nextFor({ kind: 'schedule', enabled: true, cronExpression, timezone }, routine.status, this.clock.now());
    if (!triggers.length) {
      await this.repo.insertTrigger(companyId, {
        routineId: routineId,
        kind: 'schedule',
        label,
        enabled: true,
        cronExpression: cronExpression,
        timezone,
        nextRunAt: next,
      });
      return;
    }
    for (const [i, t] of triggers.entries()) {
      if (i === 0)
        await this.repo.updateTrigger(companyId, t.id, {
          label,
          enabled: true,
          cronExpression: cronExpression,
          timezone,
          nextRunAt: next,
        });
      else await this.repo.removeTrigger(companyId, t.id);
    }
  }

  private validateTrigger(t: CreateTriggerDto, at: string): void {
    if (t.kind !== 'schedule') {
      if (t.cronExpression !== undefined || t.timezone !== undefined) {
        throw routineError('invalid_cron_expression', `${at}: a manual trigger has no schedule`, { field: `${at}.cronExpression` });
      }
      return;
    }
    const tz = t.timezone ?? 'UTC';
    assertTimeZone(tz, `${at}.timezone`);
    assertCron(t.cronExpression!, tz, `${at}.cronExpression`);
  }

  private async insertTrigger(routine: RoutineRecord, t: CreateTriggerDto, by: By): Promise<RoutineTriggerRecord> {
    const schedule = t.kind === 'schedule';
    const row = {
      kind: t.kind,
      enabled: t.enabled ?? true,
      cronExpression: schedule ? t.cronExpression!.trim() : null,
      timezone: schedule ? (t.timezone ?? 'UTC') : null,
    };
    return this.repo.insertTrigger(routine.companyId, {
      routineId: routine.id,
      label: t.label ?? null,
      ...row,
      nextRunAt: this.nextFor(row, routine.status, this.clock.now()),
      ...byFields(by, 'created'),
      ...byFields(by, 'updated'),
    });
  }

  /** The next firing of a trigger, or null when it cannot fire (manual, disabled, routine paused). */
  private nextFor(
    t: Pick<RoutineTriggerRecord, 'kind' | 'enabled' | 'cronExpression' | 'timezone'>,
    routineStatus: string,
    now: Date,
  ): Date | null {
    if (t.kind !== 'schedule' || !t.enabled || routineStatus !== 'active' || !t.cronExpression) return null;
    return nextFiring(t.cronExpression, t.timezone ?? 'UTC', now);
  }

  // ---- helpers

  private async views(companyId: string, routines: RoutineRecord[]): Promise<RoutineResponseDto[]> {
    const ids = routines.map((r) => r.id);
    const [triggers, last, open] = await Promise.all([
      this.repo.triggersOf(companyId, ids),
      this.repo.lastRuns(companyId, ids),
      this.repo.openExecutions(companyId, ids),
    ]);
    const lastBy = new Map(last.map((r) => [r.routineId, r]));
    const openBy = new Map(open.map((r) => [r.routineId, r]));
    return routines.map((r) =>
      toRoutineResponse(
        r,
        triggers.filter((t) => t.routineId === r.id),
        lastBy.get(r.id),
        openBy.get(r.id),
      ),
    );
  }

  private async detail(routine: RoutineRecord): Promise<RoutineDetailResponseDto> {
    const [view] = await this.views(routine.companyId, [routine]);
    const triggers = new Map(view.triggers.map((t) => [t.id, t]));
    const runs = await this.repo.runsOf(routine.companyId, routine.id, 10);
    const agent = await this.agents.inCompany(routine.companyId, routine.assigneeAgentId);
    const assignee = agent && { id: agent.id, name: agent.name, role: agent.role, title: agent.title, urlKey: agent.urlKey };
    return {
      ...view,
      assignee,
      recentRuns: runs.map((r) => {
        const out = toRunResponse(r);
        const t = r.triggerId ? triggers.get(r.triggerId) : undefined;
        return { ...out, trigger: t ?? null };
      }),
    };
  }

  /** The routine of the route's company: 404 unknown or another company's. */
  private async load(companyId: string | undefined, routineId: string): Promise<RoutineRecord> {
    const routine = companyId && isUuid(routineId) ? await this.repo.get(companyId, routineId) : null;
    if (!routine) throw notFound('Routine');
    return routine;
  }

  /** Loaded and locked for a change the caller must be allowed to make. */
  private async loadForChange(actor: Actor, companyId: string | undefined, routineId: string): Promise<RoutineRecord> {
    const found = await this.load(companyId, routineId);
    await this.assertMayManage(actor, found.companyId, found.assigneeAgentId, found.projectId);
    return (await this.repo.get(found.companyId, found.id, true))!;
  }

  /** The trigger of the route's company and its routine, locked for a change: 404 unknown or another company's. */
  private async loadTrigger(
    actor: Actor,
    companyId: string | undefined,
    triggerId: string,
  ): Promise<{ routine: RoutineRecord; trigger: RoutineTriggerRecord }> {
    const found = companyId && isUuid(triggerId) ? await this.repo.trigger(companyId, triggerId) : null;
    if (!found) throw notFound('Routine trigger');
    const routine = await this.loadForChange(actor, found.companyId, found.routineId);
    const trigger = await this.repo.trigger(routine.companyId, triggerId, true);
    if (!trigger) throw notFound('Routine trigger');
    return { routine, trigger };
  }

  /** Managing a routine is assigning its agent work: the same decision as an issue assignment. */
  private async assertMayManage(actor: Actor, companyId: string, assigneeAgentId: string, projectId: string | null): Promise<void> {
    await this.authz.assert({ actor, action: 'issue.assign', companyId, targetAgentId: assigneeAgentId, projectId, issue: null });
  }

  private async assertReferences(companyId: string, dto: UpdateRoutineDto): Promise<void> {
    const foreign = await this.repo.foreignReferences(companyId, dto);
    if (foreign.length) {
      throw routineError('invalid_reference', `${foreign[0]} must reference a record of this company`, { field: foreign[0] });
    }
  }

  private async assertUsableAssignee(companyId: string, agentId: string): Promise<void> {
    const status = (await this.agents.inCompany(companyId, agentId))?.status ?? null;
    if (status === 'terminated' || status === 'pending_approval') {
      throw routineError('invalid_assignee', `assigneeAgentId: agent is ${status}`, { field: 'assigneeAgentId' });
    }
  }
}
