import { Injectable } from '@nestjs/common';
import type { Actor } from '../../common/auth/actor';
import { WakeupQueue } from '../heartbeat/wakeup-queue.service';
import { CommentRecord, isClosed, IssueRecord } from './issue.types';
import { IssuesRepository } from './issues.repository';
import { IssueAgents } from './issue-agents';

const actorAgentId = (actor: Actor | undefined) => (actor?.kind === 'agent' ? actor.agentId : null);

/**
 * Who is woken when issues change (spec, Events point 2). Every wakeup is a durable row through the
 * heartbeat engine's enqueue API, written in the same transaction as the change that caused it.
 */
@Injectable()
export class IssueWakeups {
  constructor(
    private readonly issues: IssuesRepository,
    private readonly queue: WakeupQueue,
    private readonly agents: IssueAgents,
  ) {}

  /** The new assignee of an actionable issue learns of it, unless it assigned itself. */
  async assigned(issue: IssueRecord, actor?: Actor): Promise<void> {
    if (!this.wakesAssignee(issue, actor)) return;
    await this.enqueue(issue, issue.assigneeAgentId!, actor, { source: 'assignment', reason: 'issue_assigned' });
  }

  /** Whether `assigned` wakes the issue's assignee: an agent other than the actor, on an open issue out of the backlog. */
  wakesAssignee(issue: Pick<IssueRecord, 'assigneeAgentId' | 'status'>, actor?: Actor): boolean {
    const agentId = issue.assigneeAgentId;
    if (!agentId || agentId === actorAgentId(actor)) return false;
    return issue.status !== 'backlog' && !isClosed(issue.status);
  }

  /**
   * A comment wakes the assignee (unless the issue stays closed) and every `@AgentName` mentioned in
   * it; the author is never woken by its own comment and each agent is woken once.
   */
  async commented(issue: IssueRecord, comment: CommentRecord, actor: Actor): Promise<void> {
    const author = actorAgentId(actor);
    const woken = new Set<string>(author ? [author] : []);
    for (const agentId of await this.mentionedAgentIds(issue.companyId, comment.body)) {
      if (woken.has(agentId)) continue;
      woken.add(agentId);
      await this.enqueue(issue, agentId, actor, { reason: 'mentioned', commentId: comment.id });
    }
    const assignee = issue.assigneeAgentId;
    if (assignee && !woken.has(assignee) && !isClosed(issue.status) && (await this.isWakeable(assignee))) {
      await this.enqueue(issue, assignee, actor, { reason: 'issue_commented', commentId: comment.id });
    }
  }

  /** `closed` just became done or cancelled: wake the assignee of each issue it blocked that has no open blocker left. */
  async blockerClosed(closed: IssueRecord, actor: Actor): Promise<void> {
    // The open issues it blocks are locked first (in id order). Two of an issue's last blockers
    // closing at once then take turns here, and the second one's check below (a statement after the
    // lock, so it reads what committed meanwhile) sees the first one closed: without the lock each
    // saw the other still open and nobody woke the assignee.
    const blocked = (await this.issues.related(closed.companyId, closed.id, 'blocks'))
      .filter((i) => i.assigneeAgentId && !isClosed(i.status))
      .map((i) => i.id)
      .sort();
    for (const id of blocked) await this.issues.findBy(closed.companyId, 'id', id, true);
    const ready = await this.issues.unblockedBy(closed.companyId, closed.id);
    for (const issue of ready) {
      await this.enqueue(issue, issue.assigneeAgentId!, actor, { reason: 'blocker_resolved', extra: { blockerIssueId: closed.id } });
    }
  }

  /** Agents named as `@Name` (case-insensitive, exact name, not inside a word or an e-mail address). */
  async mentionedAgentIds(companyId: string, body: string): Promise<string[]> {
    if (!body.includes('@')) return [];
    const agents = await this.agents.wakeable(companyId);
    const text = body.toLowerCase();
    return agents.filter((a) => mentions(text, a.name.toLowerCase())).map((a) => a.id);
  }

  /** The issue's assignee agent learns of something on the issue, unless the actor is that agent. */
  async wakeAssignee(
    issue: Pick<IssueRecord, 'id' | 'companyId' | 'assigneeAgentId'>,
    actor: Actor,
    reason: string,
    extra: Record<string, unknown> = {},
  ): Promise<void> {
    const agentId = issue.assigneeAgentId;
    if (!agentId || (actor.kind === 'agent' && actor.agentId === agentId) || !(await this.isWakeable(agentId))) return;
    await this.enqueue(issue, agentId, actor, { reason, extra });
  }

  /** A board user answered the agent's question on the issue: the agent learns of it (payload `interactionId`). */
  async interactionAnswered(
    issue: Pick<IssueRecord, 'id' | 'companyId'>,
    agentId: string,
    interactionId: string,
    actor: Actor,
  ): Promise<void> {
    if (!(await this.isWakeable(agentId))) return;
    await this.enqueue(issue, agentId, actor, { reason: 'interaction_answered', extra: { interactionId } });
  }

  private async isWakeable(agentId: string): Promise<boolean> {
    return this.agents.isWakeable(agentId);
  }

  private async enqueue(
    issue: Pick<IssueRecord, 'id' | 'companyId'>,
    agentId: string,
    actor: Actor | undefined,
    w: { source?: 'assignment' | 'automation'; reason: string; commentId?: string; extra?: Record<string, unknown> },
  ): Promise<void> {
    const source = w.source ?? 'automation';
    await this.queue.enqueue({
      companyId: issue.companyId,
      agentId,
      source,
      triggerDetail: source === 'automation' ? 'system' : null,
      reason: w.reason,
      issueId: issue.id,
      payload: { issueId: issue.id, ...(w.commentId ? { commentId: w.commentId } : {}), ...w.extra },
      requestedBy: actor,
    });
  }
}

const WORD = /[\p{L}\p{N}_-]/u;

export function mentions(text: string, name: string): boolean {
  const needle = `@${name}`;
  for (let i = text.indexOf(needle); i >= 0; i = text.indexOf(needle, i + 1)) {
    const before = i > 0 ? text[i - 1] : '';
    const after = text[i + needle.length] ?? '';
    if ((before === '' || !WORD.test(before)) && (after === '' || !WORD.test(after))) return true;
  }
  return false;
}
