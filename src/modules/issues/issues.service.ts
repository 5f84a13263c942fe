import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { ActivityRecorder } from '../../common/activity/activity-recorder.service';
import type { Actor } from '../../common/auth/actor';
import { forbidden } from '../../common/errors/domain-error';
import { Db } from '../../database/db.service';
import { IssueNumbers, IssueNumbersRepository } from '../companies/issue-numbers.repository';
import { AuthorizationService } from '../authorization/authorization.service';
import { CreateIssueDto, IssueFieldsDto, UpdateIssueDto } from './dto/issue.dto';
import { IssueCheckout } from './issue-checkout.service';
import { IssueComments } from './issue-comments.service';
import { IssueRelations } from './issue-relations.service';
import { IssueStore } from './issue-store.service';
import { isClosed, IssueFields, IssueRecord, IssueStatus } from './issue.types';
import { IssueCommentsRepository } from './issue-comments.repository';
import { issueError } from './issues.errors';
import { IssuesRepository } from './issues.repository';
import { LabelsRepository } from './labels.repository';
import { IssueWakeups } from './issue-wakeups.service';
import { IssueAgents } from './issue-agents';
import { IssueContextRepository } from './issue-context.repository';

/** Request fields stored as they are (the request field is the record field). */
const SCALAR_FIELDS = [
  'title',
  'description',
  'priority',
  'projectId',
  'goalId',
  'assigneeAgentId',
  'assigneeUserId',
  'executionPolicy',
  'executionWorkspaceId',
  'executionWorkspacePreference',
  'executionWorkspaceSettings',
  'hiddenAt',
  'originKind',
  'originId',
] as const;

const WORKSPACE_FIELDS = ['executionWorkspaceId', 'executionWorkspacePreference', 'executionWorkspaceSettings'] as const;

type Changes = IssueFields;

/** An issue of a package import, its references already resolved to records of the company. */
export interface ImportedIssue {
  id: string;
  title: string;
  description: string | null;
  status: IssueStatus;
  priority: string;
  projectId: string | null;
  goalId: string | null;
  parentId: string | null;
  assigneeAgentId: string | null;
  labelIds: string[];
  /** comment bodies, oldest first (authored by the importing caller) */
  comments: string[];
}

/** Create and update: placement, assignment, status moves, blockers, labels, comment in the same flow. */
@Injectable()
export class IssuesService {
  constructor(
    private readonly issues: IssuesRepository,
    private readonly commentRows: IssueCommentsRepository,
    private readonly labelRows: LabelsRepository,
    private readonly store: IssueStore,
    private readonly relations: IssueRelations,
    private readonly authz: AuthorizationService,
    private readonly checkout: IssueCheckout,
    private readonly comments: IssueComments,
    private readonly wakeups: IssueWakeups,
    private readonly recorder: ActivityRecorder,
    private readonly numbers: IssueNumbersRepository,
    private readonly context: IssueContextRepository,
    private readonly agents: IssueAgents,
    private readonly db: Db,
  ) {}

  async create(actor: Actor, companyId: string, dto: CreateIssueDto): Promise<IssueRecord> {
    return this.insert(actor, companyId, dto);
  }

  /**
   * POST /companies/{companyId}/issues: the create and its `issue.created` record (details: the
   * request's fields). A create that needs nothing of its stored row before it commits (no labels,
   * blockers or wakeup) sends its INSERT, the record and the COMMIT together and commits at once:
   * the company's issue counter row, which every create of the company queues on, is then locked
   * only while Postgres runs them, never while this process serves other requests.
   */
  async createRecorded(actor: Actor, companyId: string, dto: CreateIssueDto): Promise<IssueRecord> {
    return this.insert(actor, companyId, dto, { ...dto });
  }

  /**
   * An issue the service itself creates for work authorized earlier (a routine firing: its
   * assignment was checked when the routine was saved). Same placement rules and assignee wakeup.
   */
  async createAsSystem(companyId: string, dto: CreateIssueDto): Promise<IssueRecord> {
    return this.insert(null, companyId, dto);
  }

  /**
   * Issues brought in by a company package import (the portability planner has resolved every
   * reference to a record of the company): numbered in one counter update and inserted in batches,
   * with their labels and comments; no wakeups. Parents come before their children in `items`.
   * Returns the identifier of each issue by id.
   */
  async insertImported(companyId: string, items: ImportedIssue[], by: Actor): Promise<Map<string, string>> {
    const identifiers = new Map<string, string>();
    if (!items.length) return identifiers;
    const c = await this.takeNumbers(companyId, items.length);
    const first = c.first;
    const agentId = by.kind === 'agent' ? by.agentId : null;
    const userId = by.kind === 'board' ? by.userId : null;
    const now = new Date();
    for (let start = 0; start < items.length; start += 1000) {
      const batch = items.slice(start, start + 1000);
      await this.issues.insertImported(companyId, {
        prefix: c.issuePrefix,
        agentId,
        userId,
        now,
        issues: batch.map((i, k) => ({ ...i, num: first + start + k })),
      });
      const labels = batch.flatMap((i) => i.labelIds.map((l): [string, string] => [i.id, l]));
      if (labels.length) await this.labelRows.insertImported(companyId, labels);
      const comments = batch.flatMap((i) => i.comments.map((body): [string, string] => [i.id, body]));
      if (comments.length) await this.commentRows.insertImported(companyId, agentId, userId, comments);
      batch.forEach((i, k) => identifiers.set(i.id, `${c.issuePrefix}-${first + start + k}`));
    }
    return identifiers;
  }

  private async insert(
    actor: Actor | null,
    companyId: string,
    dto: CreateIssueDto,
    recorded?: Record<string, unknown>,
  ): Promise<IssueRecord> {
    const changes = await this.prepare(actor, companyId, null, dto);
    const status: IssueStatus = dto.status ?? 'backlog';
    const id = randomUUID();
    Object.assign(changes, statusTimestamps(status), {
      id,
      status,
      createdByAgentId: actor?.kind === 'agent' ? actor.agentId : null,
      createdByUserId: actor?.kind === 'board' ? actor.userId : null,
    });
    // numbered inside the INSERT: the counter's row lock serialises concurrent creates of the company
    // until the transaction commits, so numbers are unique and gap-free
    const inserted = this.issues.insertNumbered(companyId, changes);
    const record = () =>
      this.recorder.record(
        { companyId, action: 'issue.created', entityType: 'issue', entityId: id, actor: actor ?? undefined, details: recorded },
        { lead: true },
      );
    const wakes = this.wakeups.wakesAssignee(
      { assigneeAgentId: (changes.assigneeAgentId as string | undefined) ?? null, status },
      actor ?? undefined,
    );
    if (recorded && !wakes && !dto.labelIds?.length && !dto.blockedByIssueIds?.length) {
      await record();
      // the INSERT's own error first: the statements behind it only fail because it aborted the transaction
      const [row, committed] = await Promise.allSettled([inserted, this.db.commitNow()]);
      if (row.status === 'rejected') throw row.reason;
      if (committed.status === 'rejected') throw committed.reason;
      return this.stored(row.value);
    }
    const row = this.stored(await inserted);
    if (dto.labelIds?.length) await this.relations.replaceLabels(row, dto.labelIds);
    if (dto.blockedByIssueIds?.length) await this.relations.replaceBlockers(row, dto.blockedByIssueIds);
    await this.wakeups.assigned(row, actor ?? undefined);
    if (recorded) await record();
    return row;
  }

  /** The record an INSERT numbered from the company's counter returned; none when the company is unknown. */
  private stored(row: IssueRecord | null): IssueRecord {
    if (!row) throw issueError('invalid_reference', 'companyId must reference a company', { field: 'companyId' });
    return row;
  }

  async update(actor: Actor, routeCompanyId: string | undefined, ref: string, dto: UpdateIssueDto): Promise<IssueRecord> {
    const issue = await this.store.load(routeCompanyId, ref, { lock: true });
    if (dto.interrupt) {
      if (!dto.comment) throw issueError('interrupt_requires_comment', 'interrupt requires a comment', { field: 'interrupt' });
      this.comments.assertMayInterrupt(actor);
    }
    await this.checkout.assertRunOwnership(actor, issue, 'update');
    const changes = await this.prepare(actor, issue.companyId, issue, dto);
    let status = dto.status;
    if (status === undefined && dto.comment && dto.reopen && isClosed(issue.status)) status = 'todo';
    if (status !== undefined && status !== issue.status) {
      Object.assign(changes, { status }, statusTimestamps(status, issue));
      // a checkout lives only while the issue is in progress
      if (status !== 'in_progress') changes.checkoutRunId = null;
    }
    if ('assigneeAgentId' in changes && changes.assigneeAgentId !== issue.assigneeAgentId) changes.checkoutRunId = null;
    let row = issue;
    if (Object.keys(changes).length || dto.labelIds || dto.blockedByIssueIds)
      row = await this.issues.updateFields(issue.companyId, issue.id, changes);
    if (dto.labelIds) await this.relations.replaceLabels(row, dto.labelIds);
    if (dto.blockedByIssueIds) await this.relations.replaceBlockers(row, dto.blockedByIssueIds);
    if (dto.comment) {
      const comment = await this.comments.add(actor, row, dto.comment, { touch: false });
      await this.recorder.record({
        companyId: row.companyId,
        action: 'issue.comment_added',
        entityType: 'issue',
        entityId: row.id,
        actor,
        details: { commentId: comment.id, via: 'update', reopened: status === 'todo' && isClosed(issue.status) },
      });
      if (dto.interrupt) await this.comments.interrupt(actor, row);
    }
    if (row.status !== issue.status && isClosed(row.status)) await this.wakeups.blockerClosed(row, actor);
    const assigneeChanged = row.assigneeAgentId !== issue.assigneeAgentId;
    const leftBacklog = issue.status === 'backlog' && row.status !== 'backlog';
    if (assigneeChanged || leftBacklog) await this.wakeups.assigned(row, actor);
    return row;
  }

  /** Validated column changes for the given fields (placement, assignment, workspace inheritance). */
  private async prepare(
    actor: Actor | null,
    companyId: string,
    issue: IssueRecord | null,
    dto: IssueFieldsDto & { title?: string },
  ): Promise<Changes> {
    const changes: Changes = {};
    const body = dto as Record<string, unknown>;
    for (const field of SCALAR_FIELDS) {
      if (body[field] !== undefined) changes[field] = body[field];
    }
    if (typeof dto.hiddenAt === 'string') changes.hiddenAt = new Date(dto.hiddenAt);
    if (dto.projectId) await this.assertInCompany('projects', companyId, dto.projectId, 'projectId');
    if (dto.goalId) await this.assertInCompany('goals', companyId, dto.goalId, 'goalId');
    if (dto.parentId !== undefined) {
      changes.parentId = dto.parentId === null ? null : await this.relations.resolveParent(companyId, issue?.id ?? null, dto.parentId);
    }
    if (dto.inheritExecutionWorkspaceFromIssueId !== undefined) await this.inheritWorkspace(companyId, dto, changes);
    if (actor) await this.checkAssignment(actor, companyId, issue, dto);
    return changes;
  }

  /** Copies the workspace fields of the source issue that the request does not set itself. */
  private async inheritWorkspace(companyId: string, dto: IssueFieldsDto, changes: Changes): Promise<void> {
    const ref = dto.inheritExecutionWorkspaceFromIssueId;
    if (ref === null || ref === undefined) {
      changes.inheritExecutionWorkspaceFromIssueId = null;
      return;
    }
    const [sourceId] = await this.relations.resolveIds(companyId, [ref], 'inheritExecutionWorkspaceFromIssueId');
    // resolveIds found it in the company
    const src = (await this.issues.findBy(companyId, 'id', sourceId))!;
    changes.inheritExecutionWorkspaceFromIssueId = src.id;
    for (const field of WORKSPACE_FIELDS) {
      if (dto[field] === undefined) changes[field] = src[field];
    }
  }

  /** Assignee fields change only through the authorization decision; the agent must be usable in the company. */
  private async checkAssignment(actor: Actor, companyId: string, issue: IssueRecord | null, dto: IssueFieldsDto): Promise<void> {
    const agentChanges = dto.assigneeAgentId !== undefined && dto.assigneeAgentId !== (issue?.assigneeAgentId ?? null);
    const userChanges = dto.assigneeUserId !== undefined && dto.assigneeUserId !== (issue?.assigneeUserId ?? null);
    if (!agentChanges && !userChanges) return;
    if (agentChanges && dto.assigneeAgentId) {
      const agent = await this.agents.statusIn(companyId, dto.assigneeAgentId);
      // spec, Errors: a target agent of another company, or not active in this one, is a company-boundary
      // denial, whoever assigns (the local board and instance admins included)
      if (!agent || agent.status === 'terminated' || agent.status === 'pending_approval') {
        const why = agent ? `the agent is ${agent.status}` : 'the agent is not an agent of this company';
        throw forbidden(`Not allowed: issue.assign (deny_company_boundary): ${why}`, {
          reason: 'deny_company_boundary',
          field: 'assigneeAgentId',
        });
      }
    }
    const projectId = dto.projectId !== undefined ? dto.projectId : (issue?.projectId ?? null);
    await this.authz.assert({
      actor,
      action: 'issue.assign',
      companyId,
      targetAgentId: agentChanges ? dto.assigneeAgentId : undefined,
      targetUserId: userChanges ? dto.assigneeUserId : undefined,
      projectId,
      issue: issue
        ? { id: issue.id, assigneeAgentId: issue.assigneeAgentId, projectId: issue.projectId, executionPolicy: issue.executionPolicy }
        : null,
    });
  }

  /** Numbers from the company's issue counter (owned by companies); an unknown company is a bad reference. */
  private async takeNumbers(companyId: string, count: number): Promise<IssueNumbers> {
    const n = await this.numbers.take(companyId, count);
    if (!n) throw issueError('invalid_reference', 'companyId must reference a company', { field: 'companyId' });
    return n;
  }

  private async assertInCompany(table: 'projects' | 'goals', companyId: string, id: string, field: string): Promise<void> {
    if (!(await this.context.existsInCompany(table, companyId, id)))
      throw issueError('invalid_reference', `${field} must reference a ${table.slice(0, -1)} of this company`, { field });
  }
}

/** started/completed/cancelled timestamps follow the status. */
function statusTimestamps(status: IssueStatus, before?: IssueRecord): Changes {
  const now = new Date();
  const out: Changes = {
    completedAt: status === 'done' ? now : null,
    cancelledAt: status === 'cancelled' ? now : null,
  };
  if (status === 'in_progress' && !before?.startedAt) out.startedAt = now;
  return out;
}
