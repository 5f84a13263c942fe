import { Injectable } from '@nestjs/common';
import { ActivityRecorder } from '../../common/activity/activity-recorder.service';
import type { Actor } from '../../common/auth/actor';
import { DomainError, forbidden } from '../../common/errors/domain-error';
import { Db } from '../../database/db.service';
import { AuthorizationService } from '../authorization/authorization.service';
import { CheckoutIssueDto } from './dto/issue.dto';
import { ExecutionWorkspaceGate } from './execution-workspace.gate';
import { IssueStore } from './issue-store.service';
import { isClosed, IssueRecord } from './issue.types';
import { issueError } from './issues.errors';
import { IssuesRepository } from './issues.repository';
import { IssueTreeHolds } from './issue-tree-holds.service';
import { IssueWakeups } from './issue-wakeups.service';
import { IssueAgents } from './issue-agents';
import { IssueContextRepository } from './issue-context.repository';

const runRequired = () => issueError('run_id_required', 'Agent callers must send X-Service-Run-Id naming their current heartbeat run');

/**
 * Checkout and release, decided by the database: one conditional UPDATE per checkout, so of N
 * concurrent checkouts exactly one matches the row; the others see the new status or owner and get 409.
 */
@Injectable()
export class IssueCheckout {
  constructor(
    private readonly db: Db,
    private readonly issues: IssuesRepository,
    private readonly store: IssueStore,
    private readonly authz: AuthorizationService,
    private readonly workspaces: ExecutionWorkspaceGate,
    private readonly wakeups: IssueWakeups,
    private readonly recorder: ActivityRecorder,
    private readonly holds: IssueTreeHolds,
    private readonly agents: IssueAgents,
    private readonly context: IssueContextRepository,
  ) {}

  async checkout(actor: Actor, routeCompanyId: string | undefined, ref: string, dto: CheckoutIssueDto): Promise<IssueRecord> {
    const issue = await this.store.load(routeCompanyId, ref);
    let runId: string | null = null;
    if (actor.kind === 'agent') {
      if (dto.agentId !== actor.agentId) throw forbidden('Agents may only check out issues as themselves', { reason: 'deny_scope' });
      if (!actor.runId) throw runRequired();
      runId = actor.runId;
    } else {
      await this.assertCheckoutAgent(issue.companyId, dto.agentId);
      if (issue.assigneeAgentId !== dto.agentId) {
        await this.authz.assert({
          actor,
          action: 'issue.assign',
          companyId: issue.companyId,
          targetAgentId: dto.agentId,
          projectId: issue.projectId,
          issue: {
            id: issue.id,
            assigneeAgentId: issue.assigneeAgentId,
            projectId: issue.projectId,
            executionPolicy: issue.executionPolicy,
          },
        });
      }
    }
    await this.assertProjectActive(issue);
    await this.holds.assertNotHeld(issue);
    await this.workspaces.assertUsable(issue);
    const won = await this.issues.checkout(issue.companyId, issue.id, dto.agentId, runId, dto.expectedStatuses);
    if (!won) throw await this.conflictFor(issue.companyId, issue.id, dto);
    if (won.assigneeAgentId !== issue.assigneeAgentId) await this.wakeups.assigned(won, actor);
    return won;
  }

  /** Back to todo without agent assignee or checkout run (the assignee user stays). */
  async release(actor: Actor, routeCompanyId: string | undefined, ref: string): Promise<IssueRecord> {
    const issue = await this.store.load(routeCompanyId, ref, { lock: true });
    if (isClosed(issue.status))
      throw issueError('issue_not_checked_out', `Issue is ${issue.status}; nothing to release`, { status: issue.status });
    if (actor.kind === 'agent') {
      if (issue.assigneeAgentId !== actor.agentId) throw forbidden('Only the assignee may release this issue', { reason: 'deny_scope' });
      if (!actor.runId) throw runRequired();
      if (issue.checkoutRunId && issue.checkoutRunId !== actor.runId) {
        throw issueError('checkout_run_mismatch', 'The issue is checked out by another run of this agent', {
          checkoutRunId: issue.checkoutRunId,
        });
      }
    }
    return this.issues.releaseCheckout(issue.companyId, issue.id);
  }

  /**
   * A run that ended without succeeding (failed, timed out, cancelled, reaped after its instance
   * died) gives up the checkouts it holds: the issue goes back to `todo` with its assignee kept,
   * so the next wake of that agent can check it out again.
   */
  async releaseRunCheckouts(companyId: string, runId: string, reason: string): Promise<void> {
    await this.db.transaction(async () => {
      const released = await this.issues.releaseRunCheckouts(companyId, runId);
      for (const { id } of released) {
        await this.recorder.record({
          companyId,
          action: 'issue.checkout_released',
          entityType: 'issue',
          entityId: id,
          runId,
          details: { runId, reason },
        });
      }
    });
  }

  /**
   * Authentication point 4: an agent working on its own checked-out in_progress issue acts only from
   * its current checkout run (X-Service-Run-Id). A stale lock (run no longer live) is adopted by the
   * calling run. Other agents may neither update nor comment on it while it is checked out.
   */
  async assertRunOwnership(actor: Actor, issue: IssueRecord, _mode: 'update' | 'comment'): Promise<void> {
    if (actor.kind !== 'agent' || issue.status !== 'in_progress' || !issue.assigneeAgentId) return;
    if (issue.assigneeAgentId !== actor.agentId) {
      if (!issue.checkoutRunId) return;
      throw issueError('issue_checked_out', 'The issue is checked out by another agent', {
        assigneeAgentId: issue.assigneeAgentId,
        checkoutRunId: issue.checkoutRunId,
      });
    }
    if (!actor.runId) throw runRequired();
    if (issue.checkoutRunId === actor.runId) return;
    if (!(await this.issues.adoptStaleCheckout(issue.companyId, issue.id, actor.runId))) {
      throw issueError('checkout_run_mismatch', 'The issue is checked out by another run of this agent', {
        checkoutRunId: issue.checkoutRunId,
      });
    }
    issue.checkoutRunId = actor.runId;
  }

  private async conflictFor(companyId: string, issueId: string, dto: CheckoutIssueDto): Promise<DomainError> {
    const now = await this.issues.checkoutState(companyId, issueId);
    if (!dto.expectedStatuses.includes(now.status)) {
      return issueError('status_mismatch', `Issue status is ${now.status}, not one of ${dto.expectedStatuses.join(', ')}`, {
        status: now.status,
        expectedStatuses: dto.expectedStatuses,
      });
    }
    return issueError('checkout_conflict', 'The issue is checked out by another agent or run', {
      status: now.status,
      assigneeAgentId: now.assigneeAgentId,
      checkoutRunId: now.checkoutRunId,
    });
  }

  private async assertCheckoutAgent(companyId: string, agentId: string): Promise<void> {
    const agent = await this.agents.statusIn(companyId, agentId);
    if (!agent) throw issueError('invalid_reference', 'agentId must be an agent of this company', { field: 'agentId' });
    if (agent.status === 'terminated' || agent.status === 'pending_approval') {
      throw issueError('agent_not_available', `Agent is ${agent.status}`, { agentStatus: agent.status });
    }
  }

  private async assertProjectActive(issue: IssueRecord): Promise<void> {
    if (!issue.projectId) return;
    const p = await this.context.projectPause(issue.companyId, issue.projectId);
    if (p?.pausedAt) throw issueError('project_paused', 'The project of this issue is paused', { projectId: issue.projectId });
  }
}
