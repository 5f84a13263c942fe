import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { ActivityRecorder } from '../../common/activity/activity-recorder.service';
import type { Actor } from '../../common/auth/actor';
import { notFound } from '../../common/errors/domain-error';
import { Db } from '../../database/db.service';
import { IssuesService } from '../issues/issues.service';
import type { IssuePriority } from '../issues/issue.types';
import { RoutinesRepository, RunInsert, RoutineRunRecord } from './routines.repository';

export interface FiringInput {
  source: 'schedule' | 'manual';
  triggerId?: string | null;
  /** the scheduled time this execution stands for */
  scheduledFor?: Date | null;
  /** further firings missed during downtime, coalesced into this one */
  missedCount?: number;
  /** who asked (manual runs); scheduled firings are the system's */
  actor?: Actor;
  /** skipped without looking at the routine (catch-up policy skip_missed) */
  skipReason?: string;
}

const UNUSABLE_ASSIGNEE = ['terminated', 'pending_approval'];

/**
 * One execution of a routine, inside the caller's transaction: the routine row is locked first so
 * that firings of one routine (scheduled on any instance, or run now) are decided one at a time.
 * Outcomes: an issue assigned to the routine's agent (`issue_created`, which wakes the agent as
 * any assignment does), `skipped` (the previous execution's issue is still open under
 * skip_if_active), or `failed` (the assignee can no longer take work).
 */
@Injectable()
export class RoutineFiring {
  constructor(
    private readonly repo: RoutinesRepository,
    private readonly issues: IssuesService,
    private readonly recorder: ActivityRecorder,
    private readonly db: Db,
  ) {}

  /** The execution (read back with its issue for manual runs; for scheduled ones only id and status). */
  async fire(
    companyId: string,
    routineId: string,
    input: FiringInput,
  ): Promise<Pick<RoutineRunRecord, 'id' | 'status'> & Partial<RoutineRunRecord>> {
    const routine = await this.repo.get(companyId, routineId, true);
    if (!routine) throw notFound('Routine');
    const actor = input.actor;
    const base = {
      routineId,
      triggerId: input.triggerId ?? null,
      source: input.source,
      scheduledFor: input.scheduledFor ?? null,
      missedCount: input.missedCount ?? 0,
      triggerPayload: input.missedCount ? { missedCount: input.missedCount } : null,
      createdByAgentId: actor?.kind === 'agent' ? actor.agentId : null,
      createdByUserId: actor?.kind === 'board' ? actor.userId : null,
    };
    const { companyStatus, agentStatus: assigneeStatus } = await this.repo.firingContext(companyId, routine.assigneeAgentId);
    const [open] = routine.concurrencyPolicy === 'skip_if_active' ? await this.repo.openExecutions(companyId, [routineId]) : [];
    let outcome: Pick<RunInsert, 'status' | 'linkedIssueId' | 'coalescedIntoRunId' | 'failureReason'>;
    if (input.skipReason) {
      outcome = { status: 'skipped', linkedIssueId: null, coalescedIntoRunId: null, failureReason: input.skipReason };
    } else if (companyStatus === 'archived') {
      outcome = { status: 'skipped', linkedIssueId: null, coalescedIntoRunId: null, failureReason: 'the company is archived' };
    } else if (!assigneeStatus || UNUSABLE_ASSIGNEE.includes(assigneeStatus)) {
      outcome = {
        status: 'failed',
        linkedIssueId: null,
        coalescedIntoRunId: null,
        failureReason: `assignee agent is ${assigneeStatus ?? 'missing'}`,
      };
    } else if (open) {
      outcome = {
        status: 'skipped',
        linkedIssueId: null,
        coalescedIntoRunId: open.id,
        failureReason: `previous execution's issue ${open.issueIdentifier ?? open.linkedIssueId} is still open`,
      };
    } else {
      const issue = await this.issues.createAsSystem(companyId, {
        title: routine.title,
        description: routine.description,
        priority: routine.priority as IssuePriority,
        status: 'todo',
        projectId: routine.projectId,
        goalId: routine.goalId,
        parentId: routine.parentIssueId,
        assigneeAgentId: routine.assigneeAgentId,
        originKind: 'routine_execution',
        originId: routine.id,
      });
      outcome = { status: 'issue_created', linkedIssueId: issue.id, coalescedIntoRunId: null, failureReason: null };
    }
    const runId = randomUUID();
    const insert: RunInsert = { ...base, ...outcome, id: runId };
    // the bookkeeping travels with the COMMIT (one round trip): the issue's company row lock,
    // taken by its number, is held no longer than it must be while a burst of firings is due
    await this.db.sendWithCommit(() =>
      Promise.all([
        this.repo.insertRun(companyId, insert),
        this.repo.noteFired(companyId, routineId, outcome.status === 'issue_created'),
        insert.triggerId ? this.repo.setTriggerResult(companyId, insert.triggerId, outcome.status) : undefined,
        input.source === 'schedule'
          ? this.recorder.record({
              companyId,
              action: 'routine.fired',
              entityType: 'routine',
              entityId: routineId,
              actorType: 'system',
              actorId: 'routine-scheduler',
              details: {
                runId,
                status: outcome.status,
                triggerId: insert.triggerId,
                scheduledFor: base.scheduledFor?.toISOString() ?? null,
                missedCount: base.missedCount,
                issueId: outcome.linkedIssueId,
                reason: outcome.failureReason,
              },
            })
          : undefined,
      ]),
    );
    const run = { id: runId, status: outcome.status };
    // the caller of a manual run answers with the execution and its issue; the scheduler needs neither
    return input.source === 'manual' ? (await this.repo.run(companyId, run.id))! : run;
  }
}
