import { ApiDomainErrors } from '../../common/errors/api-domain-errors.decorator';
import { ISSUE_ERRORS } from './issues.errors';
import { Body, Controller, Get, HttpCode, Param, Patch, Post, Query, Res } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import type { FastifyReply as Response } from 'fastify';
import { LogActivity } from '../../common/activity/log-activity.decorator';
import type { Actor, AgentActor } from '../../common/auth/actor';
import { Authorize } from '../../common/auth/authorize.decorator';
import { CurrentActor } from '../../common/auth/current-actor.decorator';
import { RouteCompany } from '../../common/auth/route-company.decorator';
import { ActivityResponseDto } from '../activity/dto/activity.dto';
import { LiveRunDto, LiveRunsQueryDto } from '../heartbeat/dto/heartbeat.dto';
import { HeartbeatRunsService } from '../heartbeat/heartbeat-runs.service';
import {
  CheckoutIssueDto,
  CreateIssueDto,
  IssueDetailResponseDto,
  IssueResponseDto,
  IssueSummaryDto,
  ListIssuesQueryDto,
  UpdateIssueDto,
} from './dto/issue.dto';
import { IssueCheckout } from './issue-checkout.service';
import { IssueDetailService } from './issue-detail.service';
import { IssueListService } from './issue-list.service';
import { IssueRunsService } from './issue-runs.service';
import { IssueStore } from './issue-store.service';
import { IssuesService } from './issues.service';
import { CommentResponseDto } from './dto/comment.dto';
import { IssueComments } from './issue-comments.service';

@ApiTags('issues')
@ApiDomainErrors(ISSUE_ERRORS)
@Controller()
export class IssuesController {
  constructor(
    private readonly issues: IssuesService,
    private readonly store: IssueStore,
    private readonly lists: IssueListService,
    private readonly details: IssueDetailService,
    private readonly checkouts: IssueCheckout,
    private readonly runs: IssueRunsService,
    private readonly heartbeatRuns: HeartbeatRunsService,
    private readonly comments: IssueComments,
  ) {}

  /** Priority order, or best match with `q`; hidden issues and routine executions left out. Next page: `X-Next-Cursor` header. */
  @Get('companies/:companyId/issues')
  @Authorize({ callers: ['board', 'agent'] })
  async list(
    @CurrentActor() actor: Actor,
    @Param('companyId') companyId: string,
    @Query() q: ListIssuesQueryDto,
    @Res({ passthrough: true }) res: Response,
  ): Promise<IssueResponseDto[]> {
    const page = await this.lists.list(actor, companyId, q);
    if (page.nextCursor) res.header('X-Next-Cursor', page.nextCursor);
    return page.items;
  }

  /** Identifier `<PREFIX>-<n>` from the company counter; assignee fields pass the authorization decision. */
  @Post('companies/:companyId/issues')
  @HttpCode(201)
  @Authorize({ callers: ['board', 'agent'] })
  @LogActivity('issue.created', { entityType: 'issue', writtenByService: true })
  async create(
    @CurrentActor() actor: Actor,
    @Param('companyId') companyId: string,
    @Body() dto: CreateIssueDto,
  ): Promise<IssueResponseDto> {
    return this.store.toCreatedResponse(await this.issues.createRecorded(actor, companyId, dto), dto);
  }

  /** Full record with project, goal, ancestors, blockers and documents. `{issueId}`: UUID or identifier. */
  @Get('issues/:issueId')
  @Authorize({ callers: ['board', 'agent'] })
  get(@RouteCompany() routeCompanyId: string | undefined, @Param('issueId') issueId: string): Promise<IssueDetailResponseDto> {
    return this.details.get(routeCompanyId, issueId);
  }

  /** Partial update plus `comment`, `reopen`, `interrupt` (board), `hiddenAt`; `blockedByIssueIds` replaces the blockers. */
  @Patch('issues/:issueId')
  @Authorize({ callers: ['board', 'agent'] })
  @LogActivity('issue.updated', { entityType: 'issue' })
  async update(
    @CurrentActor() actor: Actor,
    @RouteCompany() routeCompanyId: string | undefined,
    @Param('issueId') issueId: string,
    @Body() dto: UpdateIssueDto,
  ): Promise<IssueResponseDto> {
    return this.store.toResponse(await this.issues.update(actor, routeCompanyId, issueId, dto));
  }

  /** Reduced issue, ancestors, project and goal, comment cursor and the optional waking comment. */
  @Get('issues/:issueId/heartbeat-context')
  @Authorize({ callers: ['board', 'agent'] })
  heartbeatContext(
    @RouteCompany() routeCompanyId: string | undefined,
    @Param('issueId') issueId: string,
    @Query('wakeCommentId') wakeCommentId?: string,
  ) {
    return this.details.heartbeatContext(routeCompanyId, issueId, wakeCommentId);
  }

  /** Atomic: of concurrent checkouts exactly one wins, the others get 409. Agents check out as themselves with their run. */
  @Post('issues/:issueId/checkout')
  @HttpCode(200)
  @Authorize({ callers: ['board', 'agent'] })
  @LogActivity('issue.checked_out', {
    entityType: 'issue',
    details: (c) => ({
      agentId: c.result.assigneeAgentId,
      checkoutRunId: c.result.checkoutRunId,
      expectedStatuses: c.body.expectedStatuses,
    }),
  })
  async checkout(
    @CurrentActor() actor: Actor,
    @RouteCompany() routeCompanyId: string | undefined,
    @Param('issueId') issueId: string,
    @Body() dto: CheckoutIssueDto,
  ): Promise<IssueResponseDto> {
    return this.store.toResponse(await this.checkouts.checkout(actor, routeCompanyId, issueId, dto));
  }

  /** Back to todo; clears assigneeAgentId and checkoutRunId. Agents only from the current checkout run. */
  @Post('issues/:issueId/release')
  @HttpCode(200)
  @Authorize({ callers: ['board', 'agent'] })
  @LogActivity('issue.released', { entityType: 'issue', details: () => ({}) })
  async release(
    @CurrentActor() actor: Actor,
    @RouteCompany() routeCompanyId: string | undefined,
    @Param('issueId') issueId: string,
  ): Promise<IssueResponseDto> {
    return this.store.toResponse(await this.checkouts.release(actor, routeCompanyId, issueId));
  }

  /** Activity of the issue, newest first. */
  @Get('issues/:issueId/activity')
  @Authorize({ callers: ['board', 'agent'] })
  activity(@RouteCompany() routeCompanyId: string | undefined, @Param('issueId') issueId: string): Promise<ActivityResponseDto[]> {
    return this.runs.activityOf(routeCompanyId, issueId);
  }

  /** Heartbeat runs touching the issue (run issue, context snapshot, checkout, activity), newest first. */
  @Get('issues/:issueId/runs')
  @Authorize({ callers: ['board', 'agent'] })
  runsOf(@RouteCompany() routeCompanyId: string | undefined, @Param('issueId') issueId: string) {
    return this.runs.runsOf(routeCompanyId, issueId);
  }

  /** Comments not yet handed to an agent run: their wake is queued, deferred behind the live run, or in a run that has not started. Oldest first. */
  @Get('issues/:issueId/queued-comments')
  @Authorize({ callers: ['board', 'agent'] })
  queuedComments(@RouteCompany() routeCompanyId: string | undefined, @Param('issueId') issueId: string): Promise<CommentResponseDto[]> {
    return this.comments.queued(routeCompanyId, issueId);
  }

  /** Queued and running runs for the issue (woken for it, or holding its checkout), with agent name and last output time. */
  @Get('issues/:issueId/live-runs')
  @Authorize({ callers: ['board', 'agent'] })
  async liveRuns(
    @RouteCompany() routeCompanyId: string | undefined,
    @Param('issueId') issueId: string,
    @Query() q: LiveRunsQueryDto,
  ): Promise<LiveRunDto[]> {
    const issue = await this.store.load(routeCompanyId, issueId);
    return this.heartbeatRuns.live(issue.companyId, q.limit ?? 200, { id: issue.id, checkoutRunId: issue.checkoutRunId }, q.minCount ?? 0);
  }

  /** Compact summaries of the issues a run touched; an unknown run, and another company's, have none (empty array). */
  @Get('heartbeat-runs/:runId/issues')
  @Authorize({ callers: ['board', 'agent'], answersUnknownRecords: true })
  issuesOfRun(
    @CurrentActor() actor: Actor,
    @Param('runId') runId: string,
    @RouteCompany() companyId: string | undefined,
  ): Promise<IssueSummaryDto[]> {
    return this.runs.issuesOfRun(actor, runId, companyId);
  }

  /** Agent-only: the caller's open assignments with blocker readiness and active run. */
  @Get('agents/me/inbox-lite')
  @Authorize({ callers: ['agent'] })
  inboxLite(@CurrentActor() actor: AgentActor) {
    return this.runs.inboxLite(actor);
  }
}
