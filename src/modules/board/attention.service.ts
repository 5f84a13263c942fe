import { Injectable } from '@nestjs/common';
import type { Actor } from '../../common/auth/actor';
import { isoRequired } from '../../database/row-mapping';
import { boardUserId } from '../preferences/board-user';
import { PreferencesRepository } from '../preferences/preferences.repository';
import { AttentionIssueFields, AttentionRepository } from './attention.repository';
import {
  ATTENTION_KINDS,
  AttentionItemDto,
  AttentionKind,
  AttentionListDto,
  AttentionQueryDto,
  AttentionSubjectDto,
} from './dto/attention.dto';

type Draft = Omit<AttentionItemDto, 'rank' | 'dismissal' | 'companyId' | 'decisionVerbs' | 'inlineResolvable' | 'queues'>;

const SEVERITY_ORDER: Record<string, number> = { critical: 0, high: 1, medium: 2, low: 3 };
const prefixOf = (identifier: string) => identifier.slice(0, identifier.lastIndexOf('-'));
const issueHref = (identifier: string) => `/${prefixOf(identifier)}/issues/${identifier}`;

function issueSubject(companyId: string, r: AttentionIssueFields): AttentionSubjectDto {
  return {
    kind: 'issue',
    id: r.issueId,
    companyId,
    title: r.issueTitle,
    identifier: r.identifier,
    status: r.issueStatus,
    href: issueHref(r.identifier),
    metadata: { priority: r.priority, assigneeAgentId: r.assigneeAgentId, assigneeUserId: r.assigneeUserId },
  };
}
const projectOf = (r: AttentionIssueFields) =>
  r.projectId && r.projectName && r.projectUrlKey
    ? { id: r.projectId, name: r.projectName, urlKey: r.projectUrlKey, color: r.projectColor, icon: null }
    : null;
const plain = (
  companyId: string,
  kind: string,
  id: string,
  title: string,
  status: string | null,
  href: string | null,
): AttentionSubjectDto => ({
  kind,
  id,
  companyId,
  title,
  identifier: null,
  status,
  href,
  metadata: {},
});

/**
 * What needs the board, gathered from the company's own records: pending approvals and join
 * requests, questions agents asked on issues, blocked issues, runs that failed in the last day,
 * open budget incidents and agents in error. Each item carries the inbox-dismissal key that hides
 * it for the calling user (the sidebar's keys for approvals, join requests and runs).
 */
@Injectable()
export class AttentionService {
  constructor(
    private readonly repo: AttentionRepository,
    private readonly prefs: PreferencesRepository,
  ) {}

  async list(actor: Actor, companyId: string, q: AttentionQueryDto): Promise<AttentionListDto> {
    let drafts = await this.gather(companyId, q.queue);
    if (q.archived) drafts = [];
    if (q.activitySince) drafts = drafts.filter((d) => d.activityAt >= new Date(q.activitySince!).toISOString());
    if (q.activityUntil) drafts = drafts.filter((d) => d.activityAt < new Date(q.activityUntil!).toISOString());
    drafts.sort((a, b) =>
      q.sort === 'recent'
        ? b.activityAt.localeCompare(a.activityAt)
        : SEVERITY_ORDER[a.severity] - SEVERITY_ORDER[b.severity] || b.activityAt.localeCompare(a.activityAt) || a.id.localeCompare(b.id),
    );
    const dismissals = new Map((await this.prefs.activeDismissals(companyId, boardUserId(actor))).map((d) => [d.itemKey, d]));
    const all = drafts.map((d, i) => {
      const x = dismissals.get(d.dismissalKey);
      return {
        ...d,
        companyId,
        dismissal: x ? { kind: x.kind, snoozedUntil: x.snoozedUntil, updatedAt: x.updatedAt } : null,
        decisionVerbs: [] as never[],
        inlineResolvable: false,
        queues: [] as string[],
        rank: i + 1,
      };
    });
    const visible = q.includeDismissed ? all : all.filter((i) => !i.dismissal);
    const offset = q.cursor && /^\d+$/.test(q.cursor) ? Number(q.cursor) : 0;
    const limit = q.limit ?? 100;
    const counts = Object.fromEntries(ATTENTION_KINDS.map((k) => [k, visible.filter((i) => i.sourceKind === k).length]));
    return {
      companyId,
      generatedAt: new Date().toISOString(),
      totalCount: visible.length,
      deskBadgeCount: all.filter((i) => !i.dismissal).length,
      nextCursor: offset + limit < visible.length ? String(offset + limit) : null,
      countsBySourceKind: counts,
      items: visible.slice(offset, offset + limit),
    };
  }

  private async gather(companyId: string, only?: AttentionKind): Promise<Draft[]> {
    const want = (k: AttentionKind) => !only || only === k;
    const parts = await Promise.all([
      want('approval') ? this.approvals(companyId) : [],
      want('join_request') ? this.joins(companyId) : [],
      want('issue_thread_interaction') ? this.interactions(companyId) : [],
      want('blocker_attention') ? this.blocked(companyId) : [],
      want('failed_run') ? this.failedRuns(companyId) : [],
      want('budget_alert') ? this.budgets(companyId) : [],
      want('agent_error_alert') ? this.agentErrors(companyId) : [],
    ]);
    return parts.flat();
  }

  private async approvals(companyId: string): Promise<Draft[]> {
    return (await this.repo.approvals(companyId)).map((a) => {
      const what =
        a.type === 'hire_agent'
          ? `Hire ${a.agentName ?? 'an agent'}`
          : a.type === 'skill_change'
            ? 'Skill change'
            : 'Agent configuration change';
      return {
        id: `approval:${a.id}`,
        sourceKind: 'approval' as const,
        subject: {
          ...plain(companyId, 'approval', a.id, what, 'pending', `/approvals/${a.id}`),
          metadata: { type: a.type, agentId: a.agentId },
        },
        whyNow: `${what} waits for a board decision.`,
        entryRule: 'an approval is pending',
        exitRule: 'the approval is approved, rejected or cancelled',
        severity: 'high',
        activityAt: isoRequired(a.updatedAt),
        createdAt: isoRequired(a.createdAt),
        updatedAt: isoRequired(a.updatedAt),
        relatedIssue: null,
        project: null,
        detail: { kind: 'approval', type: a.type, requestedByActorType: a.requestedByActorType },
        dismissalKey: `approval:${a.id}`,
      };
    });
  }

  private async joins(companyId: string): Promise<Draft[]> {
    return (await this.repo.joinRequests(companyId)).map((j) => {
      const who = j.requestType === 'agent' ? (j.agentName ?? 'An agent') : (j.userName ?? 'A person');
      return {
        id: `join_request:${j.id}`,
        sourceKind: 'join_request' as const,
        subject: {
          ...plain(companyId, 'join_request', j.id, `${who} asks to join`, 'pending_approval', '/inbox/requests'),
          metadata: { requestType: j.requestType },
        },
        whyNow: `${who} asks to join the company.`,
        entryRule: 'a join request is pending approval',
        exitRule: 'the request is approved or rejected',
        severity: 'medium',
        activityAt: isoRequired(j.updatedAt),
        createdAt: isoRequired(j.createdAt),
        updatedAt: isoRequired(j.updatedAt),
        relatedIssue: null,
        project: null,
        detail: { kind: 'join_request', requestType: j.requestType },
        dismissalKey: `join:${j.id}`,
      };
    });
  }

  private async interactions(companyId: string): Promise<Draft[]> {
    return (await this.repo.openInteractions(companyId)).map((x) => ({
      id: `issue_thread_interaction:${x.id}`,
      sourceKind: 'issue_thread_interaction' as const,
      subject: issueSubject(companyId, x),
      whyNow: `${x.agentName} asked: ${x.prompt.length > 200 ? `${x.prompt.slice(0, 199)}…` : x.prompt}`,
      entryRule: 'an agent asked a question on the issue',
      exitRule: 'a board user answers it',
      severity: 'high',
      activityAt: isoRequired(x.updatedAt),
      createdAt: isoRequired(x.createdAt),
      updatedAt: isoRequired(x.updatedAt),
      relatedIssue: issueSubject(companyId, x),
      project: projectOf(x),
      detail: { kind: 'interaction', interactionId: x.id, prompt: x.prompt, askedBy: x.agentName },
      dismissalKey: `attention:interaction:${x.id}`,
    }));
  }

  private async blocked(companyId: string): Promise<Draft[]> {
    return (await this.repo.blockedIssues(companyId)).map((b) => ({
      id: `blocker_attention:${b.issueId}`,
      sourceKind: 'blocker_attention' as const,
      subject: issueSubject(companyId, b),
      whyNow:
        b.openBlockers > 0
          ? `Waits on ${b.openBlockers} open blocker${b.openBlockers === 1 ? '' : 's'} (${b.firstBlocker}); blocks ${b.blocksOpen} open task${b.blocksOpen === 1 ? '' : 's'}.`
          : `Blocked with no open blocker; blocks ${b.blocksOpen} open task${b.blocksOpen === 1 ? '' : 's'}.`,
      entryRule: 'the issue is blocked',
      exitRule: 'the issue leaves the blocked status',
      severity: b.openBlockers === 0 || b.blocksOpen > 0 ? 'high' : 'medium',
      activityAt: isoRequired(b.updatedAt),
      createdAt: isoRequired(b.createdAt),
      updatedAt: isoRequired(b.updatedAt),
      relatedIssue: issueSubject(companyId, b),
      project: projectOf(b),
      detail: {
        kind: 'blocker',
        openBlockerCount: b.openBlockers,
        blockedTaskCount: b.blocksOpen,
        firstBlockerIdentifier: b.firstBlocker,
        images: [],
      },
      dismissalKey: `attention:blocker:${b.issueId}`,
    }));
  }

  private async failedRuns(companyId: string): Promise<Draft[]> {
    return (await this.repo.failedRuns(companyId)).map((r) => ({
      id: `failed_run:${r.id}`,
      sourceKind: 'failed_run' as const,
      subject: {
        ...plain(companyId, 'heartbeat_run', r.id, `${r.agentName}: run ${r.status}`, r.status, null),
        metadata: { agentId: r.agentId, errorCode: r.errorCode },
      },
      whyNow: `A run of ${r.agentName} ${r.status === 'timed_out' ? 'timed out' : 'failed'}${r.errorCode ? ` (${r.errorCode})` : ''}.`,
      entryRule: 'a run failed or timed out in the last 24 hours',
      exitRule: '24 hours after it ended',
      severity: 'high',
      activityAt: isoRequired(r.finishedAt),
      createdAt: isoRequired(r.createdAt),
      updatedAt: isoRequired(r.finishedAt),
      relatedIssue:
        r.issueId && r.identifier
          ? {
              ...plain(companyId, 'issue', r.issueId, r.issueTitle ?? '', r.issueStatus, issueHref(r.identifier)),
              identifier: r.identifier,
            }
          : null,
      project: null,
      detail: { kind: 'failed_run', runId: r.id, agentId: r.agentId, errorCode: r.errorCode, error: r.error },
      dismissalKey: `run:${r.id}`,
    }));
  }

  private async budgets(companyId: string): Promise<Draft[]> {
    return (await this.repo.openBudgetIncidents(companyId)).map((b) => ({
      id: `budget_alert:${b.id}`,
      sourceKind: 'budget_alert' as const,
      subject: plain(
        companyId,
        'budget_incident',
        b.id,
        `${b.kind === 'hard' ? 'Hard stop' : 'Budget warning'}: ${b.scopeName ?? b.scopeType}`,
        b.holdActive ? 'paused' : 'open',
        '/budgets',
      ),
      whyNow: `${b.scopeName ?? b.scopeType} spent ${b.observedAmount} of ${b.budgetAmount} cents${b.holdActive ? ' and is paused' : ''}.`,
      entryRule: 'a budget incident is open or holds its scope paused',
      exitRule: 'the incident is resolved (keep paused, raise the budget) or its window resets',
      severity: b.kind === 'hard' ? 'critical' : 'medium',
      activityAt: isoRequired(b.createdAt),
      createdAt: isoRequired(b.createdAt),
      updatedAt: isoRequired(b.createdAt),
      relatedIssue: null,
      project: null,
      detail: {
        kind: 'budget',
        incidentKind: b.kind,
        scopeType: b.scopeType,
        scopeId: b.scopeId,
        budgetCents: Number(b.budgetAmount),
        observedCents: Number(b.observedAmount),
        paused: b.holdActive,
      },
      dismissalKey: `attention:budget:${b.id}`,
    }));
  }

  private async agentErrors(companyId: string): Promise<Draft[]> {
    return (await this.repo.agentsInError(companyId)).map((a) => ({
      id: `agent_error_alert:${a.id}`,
      sourceKind: 'agent_error_alert' as const,
      subject: plain(companyId, 'agent', a.id, a.name, 'error', `/agents/${a.urlKey}`),
      whyNow: `${a.name} is in error after its last run.`,
      entryRule: 'the agent status is error',
      exitRule: 'the agent runs again successfully, or is paused or terminated',
      severity: 'high',
      activityAt: isoRequired(a.updatedAt),
      createdAt: isoRequired(a.updatedAt),
      updatedAt: isoRequired(a.updatedAt),
      relatedIssue: null,
      project: null,
      detail: { kind: 'agent_error', agentId: a.id },
      dismissalKey: `attention:agent:${a.id}`,
    }));
  }
}
