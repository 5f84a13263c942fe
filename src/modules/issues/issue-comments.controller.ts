import { ApiDomainErrors } from '../../common/errors/api-domain-errors.decorator';
import { ISSUE_ERRORS } from './issues.errors';
import { Body, Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { LogActivity } from '../../common/activity/log-activity.decorator';
import type { Actor } from '../../common/auth/actor';
import { Authorize } from '../../common/auth/authorize.decorator';
import { CurrentActor } from '../../common/auth/current-actor.decorator';
import { RouteCompany } from '../../common/auth/route-company.decorator';
import { CommentResponseDto, CreateCommentDto, ListCommentsQueryDto } from './dto/comment.dto';
import { IssueComments } from './issue-comments.service';

@ApiTags('issues')
@ApiDomainErrors(ISSUE_ERRORS)
@Controller('issues/:issueId/comments')
export class IssueCommentsController {
  constructor(private readonly comments: IssueComments) {}

  /** Oldest first unless `order=desc`; `after`/`afterCommentId` continue after a comment; `limit` capped at 500. */
  @Get()
  @Authorize({ callers: ['board', 'agent'] })
  list(
    @RouteCompany() routeCompanyId: string | undefined,
    @Param('issueId') issueId: string,
    @Query() q: ListCommentsQueryDto,
  ): Promise<CommentResponseDto[]> {
    return this.comments.list(routeCompanyId, issueId, q);
  }

  @Get(':commentId')
  @Authorize({ callers: ['board', 'agent'] })
  get(
    @RouteCompany() routeCompanyId: string | undefined,
    @Param('issueId') issueId: string,
    @Param('commentId') commentId: string,
  ): Promise<CommentResponseDto> {
    return this.comments.get(routeCompanyId, issueId, commentId);
  }

  /**
   * Markdown comment; wakes the assignee and `@AgentName` mentions; `reopen` (closed -> todo); `interrupt` board only.
   * The assignee of a checked-out `in_progress` issue comments with `X-Service-Run-Id` naming the checkout's run.
   */
  @Post()
  @HttpCode(201)
  @Authorize({ callers: ['board', 'agent'] })
  @LogActivity('issue.comment_added', {
    entityType: 'issue',
    entityId: (c) => c.result.issueId as string,
    details: (c) => ({ commentId: c.result.id, reopen: c.body.reopen ?? false, interrupt: c.body.interrupt ?? false }),
  })
  create(
    @CurrentActor() actor: Actor,
    @RouteCompany() routeCompanyId: string | undefined,
    @Param('issueId') issueId: string,
    @Body() dto: CreateCommentDto,
  ): Promise<CommentResponseDto> {
    return this.comments.create(actor, routeCompanyId, issueId, dto);
  }
}
