import { ApiDomainErrors } from '../../common/errors/api-domain-errors.decorator';
import { ISSUE_ERRORS } from './issues.errors';
import { NoActivity } from '../../common/activity/log-activity.decorator';
import { Controller, Delete, HttpCode, Param, Post } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import type { BoardActor } from '../../common/auth/actor';
import { Authorize } from '../../common/auth/authorize.decorator';
import { CurrentActor } from '../../common/auth/current-actor.decorator';
import { RouteCompany } from '../../common/auth/route-company.decorator';
import { IssueInboxService, IssueUserStateDto } from './issue-inbox.service';

@ApiTags('issues')
@ApiDomainErrors(ISSUE_ERRORS)
@Controller('issues/:issueId')
export class IssueInboxController {
  constructor(private readonly inbox: IssueInboxService) {}

  /** Board user: marks the issue read (comments up to now are no longer unread for `unreadForUserId`). */
  @Post('read')
  @NoActivity('a personal read marker of the board user, not a change to the issue')
  @HttpCode(200)
  @Authorize({ callers: ['board'] })
  read(
    @CurrentActor() actor: BoardActor,
    @RouteCompany() routeCompanyId: string | undefined,
    @Param('issueId') issueId: string,
  ): Promise<IssueUserStateDto> {
    return this.inbox.markRead(actor, routeCompanyId, issueId);
  }

  /** Board user: archives the issue from their inbox until it changes again (`inboxArchivedByUserId`). */
  @Post('inbox-archive')
  @NoActivity('a personal inbox state of the board user, not a change to the issue')
  @HttpCode(200)
  @Authorize({ callers: ['board'] })
  archive(
    @CurrentActor() actor: BoardActor,
    @RouteCompany() routeCompanyId: string | undefined,
    @Param('issueId') issueId: string,
  ): Promise<IssueUserStateDto> {
    return this.inbox.archive(actor, routeCompanyId, issueId);
  }

  /** Board user: brings the issue back into their inbox. */
  @Delete('inbox-archive')
  @NoActivity('a personal inbox state of the board user, not a change to the issue')
  @Authorize({ callers: ['board'] })
  unarchive(
    @CurrentActor() actor: BoardActor,
    @RouteCompany() routeCompanyId: string | undefined,
    @Param('issueId') issueId: string,
  ): Promise<IssueUserStateDto> {
    return this.inbox.unarchive(actor, routeCompanyId, issueId);
  }
}
