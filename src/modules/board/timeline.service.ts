import { Injectable } from '@nestjs/common';
import { type Actor, LOCAL_BOARD_USER_ID } from '../../common/auth/actor';
import { badRequest } from '../../common/errors/domain-error';
import { iso, isoRequired } from '../../database/row-mapping';
import type { TimelineActorDto, TimelineDto, TimelineEdgeDto, TimelineEventDto, TimelineQueryDto } from './dto/timeline.dto';
import { TimelineActivityRecord, TimelineRepository } from './timeline.repository';

const DAY_MS = 86_400_000;
const DEFAULT_DAYS = 7;
/** a longer window is shortened to its last 90 days (`window.capped`) */
const MAX_DAYS = 90;

const actorKey = (type: string, id: string) => `${type}:${id}`;

/**
 * The company timeline: per issue with something in the window, the runs agents worked on it
 * (spans), what happened to it (events: created, status changes, comments) and who handed it to
 * whom (edges: assignments), with the actors' names. Paged by issue.
 */
@Injectable()
export class TimelineService {
  constructor(private readonly repo: TimelineRepository) {}

  async timeline(actor: Actor, companyId: string, q: TimelineQueryDto): Promise<TimelineDto> {
    const now = Date.now();
    const to = Math.min(q.to ? Date.parse(q.to) : now, now);
    let from = q.from ? Date.parse(q.from) : to - DEFAULT_DAYS * DAY_MS;
    if (from > to) throw badRequest('from must not be after to', { field: 'from' });
    const capped = to - from > MAX_DAYS * DAY_MS;
    if (capped) from = to - MAX_DAYS * DAY_MS;
    const userId = q.userId === 'me' ? (actor.kind === 'board' ? actor.userId : undefined) : q.userId;
    const f = { from: new Date(from), to: new Date(to), userId, goalId: q.goalId, projectId: q.projectId, issueId: q.issueId };
    const limit = q.limit ?? 100;
    const offset = q.offset ?? 0;

    const issues = await this.repo.issues(companyId, f, limit, offset);
    const total = issues[0]?.total ?? 0;
    const ids = issues.map((i) => i.id);
    const [runs, activity] = ids.length
      ? await Promise.all([this.repo.runs(companyId, ids, f), this.repo.activity(companyId, ids, f)])
      : [[], []];
    const byId = new Map(issues.map((i) => [i.id, i]));

    const spans = runs.map((r) => ({
      actorId: actorKey('agent', r.agentId),
      runId: r.id,
      issueId: r.issueId,
      issueIdentifier: byId.get(r.issueId)?.identifier ?? '',
      issueTitle: byId.get(r.issueId)?.title ?? '',
      start: isoRequired(r.startAt),
      end: iso(r.finishedAt),
      status: r.status,
      invocationSource: r.invocationSource,
      laneHint: r.invocationSource,
      adapterType: r.adapterType,
      retryOfRunId: r.retryOf,
      usage: r.usageJson,
    }));
    const events: TimelineEventDto[] = [];
    const edges: TimelineEdgeDto[] = [];
    for (const a of activity) this.fromActivity(a, events, edges);
    const actors = await this.actors(companyId, [
      ...spans.map((s) => s.actorId),
      ...events.map((e) => e.actorId),
      ...edges.flatMap((e) => [e.fromActorId, e.toActorId]),
    ]);
    return {
      actors,
      spans,
      events,
      edges,
      pagination: { limit, offset, totalIssues: total, hasMore: offset + issues.length < total },
      window: { from: new Date(from).toISOString(), to: new Date(to).toISOString(), capped },
    };
  }

  /** An issue action as events (created, status change, comment) and hand-offs (a new assignee). */
  private fromActivity(a: TimelineActivityRecord, events: TimelineEventDto[], edges: TimelineEdgeDto[]): void {
    if (a.actorType === 'system') return;
    const actorId = actorKey(a.actorType, a.actorId);
    const at = isoRequired(a.createdAt);
    const d = a.details ?? {};
    if (a.action === 'issue.created')
      events.push({ actorId, kind: 'created', issueId: a.issueId, at, status: typeof d.status === 'string' ? d.status : null });
    else if (a.action === 'issue.comment_added') events.push({ actorId, kind: 'commented', issueId: a.issueId, at, status: null });
    else if (typeof d.status === 'string') events.push({ actorId, kind: 'status_changed', issueId: a.issueId, at, status: d.status });
    if (typeof d.assigneeAgentId === 'string')
      edges.push({ fromActorId: actorId, toActorId: actorKey('agent', d.assigneeAgentId), issueId: a.issueId, at, kind: 'assignment' });
    else if (typeof d.assigneeUserId === 'string')
      edges.push({ fromActorId: actorId, toActorId: actorKey('user', d.assigneeUserId), issueId: a.issueId, at, kind: 'assignment' });
  }

  /** The named actors, agents first; the local board (no user row) is "Local board". */
  private async actors(companyId: string, keys: string[]): Promise<TimelineActorDto[]> {
    const unique = [...new Set(keys)];
    const agentIds = unique.filter((k) => k.startsWith('agent:')).map((k) => k.slice(6));
    const userIds = unique.filter((k) => k.startsWith('user:')).map((k) => k.slice(5));
    const [agents, users] = await Promise.all([
      agentIds.length ? this.repo.agentNames(companyId, agentIds) : [],
      userIds.length ? this.repo.userNames(userIds) : [],
    ]);
    const userName = new Map(users.map((u) => [u.id, u.name]));
    return [
      ...agents.map((a) => ({ id: actorKey('agent', a.id), type: 'agent' as const, name: a.name, avatar: null })),
      ...userIds.map((id) => ({
        id: actorKey('user', id),
        type: 'user' as const,
        name: userName.get(id) ?? (id === LOCAL_BOARD_USER_ID ? 'Local board' : 'User'),
        avatar: null,
      })),
    ];
  }
}
