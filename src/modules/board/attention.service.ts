import { Injectable } from '@nestjs/common';
import type { Actor } from '../../common/auth/actor';
import { isoRequired } from '../../database/row-mapping';
import { boardUserId } from '../preferences/board-user';
import { PreferencesRepository } from '../preferences/preferences.repository';
import { AttentionIssueCols, AttentionRepository } from './attention.repository';
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

function issueSubject(companyId: string, r: AttentionIssueCols): AttentionSubjectDto {
  return {
    kind: 'issue',
    id: r.issue_id,
    companyId,
    title: r.issue_title,
    identifier: r.identifier,
    status: r.issue_status,
    href: issueHref(r.identifier),
    metadata: { priority: r.priority, assigneeAgentId: r.assignee_agent_id, assigneeUserId: r.assignee_user_id },
  };
}
const projectOf = (r: AttentionIssueCols) =>
  r.project_id && r.project_name && r.project_url_key
    ? { id: r.project_id, name: r.project_name, urlKey: r.project_url_key, color: r.project_color, icon: null }
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
          ? `Hire ${a.agent_name ?? 'an agent'}`
          : a.type === 'skill_change'
            ? 'Skill change'
            : 'Agent configuration change';
      return {
        id: `approval:${a.id}`,
        sourceKind: 'approval' as const,
        subject: {
          ...plain(companyId, 'approval', a.id, what, 'pending', `/approvals/${a.id}`),
          metadata: { type: a.type, agentId: a.agent_id },
        },
        whyNow: `${what} waits for a board decision.`,
        entryRule: 'an approval is pending',
        exitRule: 'the approval is approved, rejected or cancelled',
        severity: 'high',
        activityAt: isoRequired(a.updated_at),
        createdAt: isoRequired(a.created_at),
        updatedAt: isoRequired(a.updated_at),
        relatedIssue: null,
        project: null,
        detail: { kind: 'approval', type: a.type, requestedByActorType: a.requested_by_actor_type },
        dismissalKey: `approval:${a.id}`,
      };
    });
  }

  private async joins(companyId: string): Promise<Draft[]> {
    return (await this.repo.joinRequests(companyId)).map((j) => {
      const who = j.request_type === 'agent' ? (j.agent_name ?? 'An agent') : (j.user_name ?? 'A person');
      return {
        id: `join_request:${j.id}`,
        sourceKind: 'join_request' as const,
        subject: {
          ...plain(companyId, 'join_request', j.id, `${who} asks to join`, 'pending_approval', '/inbox/requests'),
          metadata: { requestType: j.request_type },
        },
        whyNow: `${who} asks to join the company.`,
        entryRule: 'a join request is pending approval',
        exitRule: 'the request is approved or rejected',
        severity: 'medium',
        activityAt: isoRequired(j.updated_at),
        createdAt: isoRequired(j.created_at),
        updatedAt: isoRequired(j.updated_at),
        relatedIssue: null,
        project: null,
        detail: { kind: 'join_request', requestType: j.request_type },
        dismissalKey: `join:${j.id}`,
      };
    });
  }

  private async interactions(companyId: string): Promise<Draft[]> {
    return (await this.repo.openInteractions(companyId)).map((x) => ({
      id: `issue_thread_interaction:${x.id}`,
      sourceKind: 'issue_thread_interaction' as const,
      subject: issueSubject(companyId, x),
      whyNow: `${x.agent_name} asked: ${x.prompt.length > 200 ? `${x.prompt.slice(0, 199)}…` : x.prompt}`,
      entryRule: 'an agent asked a question on the issue',
      exitRule: 'a board user answers it',
      severity: 'high',
      activityAt: isoRequired(x.updated_at),
      createdAt: isoRequired(x.created_at),
      updatedAt: isoRequired(x.updated_at),
      relatedIssue: issueSubject(companyId, x),
      project: projectOf(x),
      detail: { kind: 'interaction', interactionId: x.id, prompt: x.prompt, askedBy: x.agent_name },
      dismissalKey: `attention:interaction:${x.id}`,
    }));
  }

  private async blocked(companyId: string): Promise<Draft[]> {
    return (await this.repo.blockedIssues(companyId)).map((b) => ({
      id: `blocker_attention:${b.issue_id}`,
      sourceKind: 'blocker_attention' as const,
      subject: issueSubject(companyId, b),
      whyNow:
        b.open_blockers > 0
          ? `Waits on ${b.open_blockers} open blocker${b.open_blockers === 1 ? '' : 's'} (${b.first_blocker}); blocks ${b.blocks_open} open task${b.blocks_open === 1 ? '' : 's'}.`
          : `Blocked with no open blocker; blocks ${b.blocks_open} open task${b.blocks_open === 1 ? '' : 's'}.`,
      entryRule: 'the issue is blocked',
      exitRule: 'the issue leaves the blocked status',
      severity: b.open_blockers === 0 || b.blocks_open > 0 ? 'high' : 'medium',
      activityAt: isoRequired(b.updated_at),
      createdAt: isoRequired(b.created_at),
      updatedAt: isoRequired(b.updated_at),
      relatedIssue: issueSubject(companyId, b),
      project: projectOf(b),
      detail: {
        kind: 'blocker',
        openBlockerCount: b.open_blockers,
        blockedTaskCount: b.blocks_open,
        firstBlockerIdentifier: b.first_blocker,
        images: [],
      },
      dismissalKey: `attention:blocker:${b.issue_id}`,
    }));
  }

  private async failedRuns(companyId: string): Promise<Draft[]> {
    return (await this.repo.failedRuns(companyId)).map((r) => ({
      id: `failed_run:${r.id}`,
      sourceKind: 'failed_run' as const,
      subject: {
        ...plain(companyId, 'heartbeat_run', r.id, `${r.agent_name}: run ${r.status}`, r.status, null),
        metadata: { agentId: r.agent_id, errorCode: r.error_code },
      },
      whyNow: `A run of ${r.agent_name} ${r.status === 'timed_out' ? 'timed out' : 'failed'}${r.error_code ? ` (${r.error_code})` : ''}.`,
      entryRule: 'a run failed or timed out in the last 24 hours',
      exitRule: '24 hours after it ended',
      severity: 'high',
      activityAt: isoRequired(r.finished_at),
      createdAt: isoRequired(r.created_at),
      updatedAt: isoRequired(r.finished_at),
      relatedIssue:
        r.issue_id && r.identifier
          ? {
              ...plain(companyId, 'issue', r.issue_id, r.issue_title ?? '', r.issue_status, issueHref(r.identifier)),
              identifier: r.identifier,
            }
          : null,
      project: null,
      detail: { kind: 'failed_run', runId: r.id, agentId: r.agent_id, errorCode: r.error_code, error: r.error },
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
        `${b.kind === 'hard' ? 'Hard stop' : 'Budget warning'}: ${b.scope_name ?? b.scope_type}`,
        b.hold_active ? 'paused' : 'open',
        '/budgets',
      ),
      whyNow: `${b.scope_name ?? b.scope_type} spent ${b.observed_amount} of ${b.budget_amount} cents${b.hold_active ? ' and is paused' : ''}.`,
      entryRule: 'a budget incident is open or holds its scope paused',
      exitRule: 'the incident is resolved (keep paused, raise the budget) or its window resets',
      severity: b.kind === 'hard' ? 'critical' : 'medium',
      activityAt: isoRequired(b.created_at),
      createdAt: isoRequired(b.created_at),
      updatedAt: isoRequired(b.created_at),
      relatedIssue: null,
      project: null,
      detail: {
        kind: 'budget',
        incidentKind: b.kind,
        scopeType: b.scope_type,
        scopeId: b.scope_id,
        budgetCents: Number(b.budget_amount),
        observedCents: Number(b.observed_amount),
        paused: b.hold_active,
      },
      dismissalKey: `attention:budget:${b.id}`,
    }));
  }

  private async agentErrors(companyId: string): Promise<Draft[]> {
    return (await this.repo.agentsInError(companyId)).map((a) => ({
      id: `agent_error_alert:${a.id}`,
      sourceKind: 'agent_error_alert' as const,
      subject: plain(companyId, 'agent', a.id, a.name, 'error', `/agents/${a.url_key}`),
      whyNow: `${a.name} is in error after its last run.`,
      entryRule: 'the agent status is error',
      exitRule: 'the agent runs again successfully, or is paused or terminated',
      severity: 'high',
      activityAt: isoRequired(a.updated_at),
      createdAt: isoRequired(a.updated_at),
      updatedAt: isoRequired(a.updated_at),
      relatedIssue: null,
      project: null,
      detail: { kind: 'agent_error', agentId: a.id },
      dismissalKey: `attention:agent:${a.id}`,
    }));
  }
}
