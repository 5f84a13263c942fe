import { ApiDomainErrors } from '../../common/errors/api-domain-errors.decorator';
import { ISSUE_ERRORS } from './issues.errors';
import { Body, Controller, Get, HttpCode, Param, Post } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { LogActivity } from '../../common/activity/log-activity.decorator';
import type { Actor } from '../../common/auth/actor';
import { Authorize } from '../../common/auth/authorize.decorator';
import { CurrentActor } from '../../common/auth/current-actor.decorator';
import { RouteCompany } from '../../common/auth/route-company.decorator';
import {
  AnswerInteractionDto,
  CreateInteractionDto,
  InteractionDto,
  PauseTreeDto,
  RunnerGoalDto,
  TreeControlStateDto,
  TreeResumeResultDto,
} from './dto/issue-controls.dto';
import { IssueInteractions } from './issue-interactions.service';
import { IssueTreeHolds } from './issue-tree-holds.service';
import { RunnerGoalService } from './runner-goal.service';

const issueOf = {
  entityId: (c: { result: Record<string, unknown> }) => c.result.issueId as string,
  companyId: (c: { result: Record<string, unknown> }) => c.result.companyId as string,
};

/** What the board controls on an issue besides its fields: subtree pause holds, questions agents ask humans, the runner goal. */
@ApiTags('issues')
@ApiDomainErrors(ISSUE_ERRORS)
@Controller()
export class IssueControlsController {
  constructor(
    private readonly holds: IssueTreeHolds,
    private readonly interactions: IssueInteractions,
    private readonly goals: RunnerGoalService,
  ) {}

  /** `{ activePauseHold }`: the hold pausing this issue's subtree (on it or an ancestor), or null. */
  @Get('issues/:issueId/tree-control/state')
  @Authorize({ callers: ['board', 'agent'] })
  treeState(@RouteCompany() routeCompanyId: string | undefined, @Param('issueId') issueId: string): Promise<TreeControlStateDto> {
    return this.holds.state(routeCompanyId, issueId);
  }

  /** Pauses the issue and its descendants: their wakes are deferred and checkouts refused (409) until resumed. 409 if already paused. */
  @Post('issues/:issueId/tree-control/pause')
  @HttpCode(200)
  @Authorize({ callers: ['board'] })
  @LogActivity('issue.tree_paused', {
    entityType: 'issue',
    ...issueOf,
    details: (c) => ({ holdId: (c.result.activePauseHold as { id: string }).id, reason: c.body.reason ?? null }),
  })
  pause(
    @CurrentActor() actor: Actor,
    @RouteCompany() routeCompanyId: string | undefined,
    @Param('issueId') issueId: string,
    @Body() dto: PauseTreeDto,
  ): Promise<TreeControlStateDto> {
    return this.holds.pause(actor, routeCompanyId, issueId, dto);
  }

  /** Releases the hold rooted at this issue; deferred wakes of the subtree run. 409 if this issue holds none (or an ancestor holds it). */
  @Post('issues/:issueId/tree-control/resume')
  @HttpCode(200)
  @Authorize({ callers: ['board'] })
  @LogActivity('issue.tree_resumed', {
    entityType: 'issue',
    ...issueOf,
    details: (c) => ({ holdId: c.result.releasedHoldId, promotedWakes: c.result.promotedWakes }),
  })
  resume(
    @CurrentActor() actor: Actor,
    @RouteCompany() routeCompanyId: string | undefined,
    @Param('issueId') issueId: string,
  ): Promise<TreeResumeResultDto> {
    return this.holds.resume(actor, routeCompanyId, issueId);
  }

  /** Questions agents asked on the issue, oldest first, with their answers. */
  @Get('issues/:issueId/interactions')
  @Authorize({ callers: ['board', 'agent'] })
  listInteractions(@RouteCompany() routeCompanyId: string | undefined, @Param('issueId') issueId: string): Promise<InteractionDto[]> {
    return this.interactions.list(routeCompanyId, issueId);
  }

  /** An agent asks a human: `prompt` with `options` to pick from and/or free text (`allowFreeText`, default true without options). */
  @Post('issues/:issueId/interactions')
  @HttpCode(201)
  @Authorize({ callers: ['agent'] })
  @LogActivity('issue.interaction_created', {
    entityType: 'issue',
    ...issueOf,
    details: (c) => ({ interactionId: c.result.id, options: c.body.options ?? null }),
  })
  ask(
    @CurrentActor() actor: Actor,
    @RouteCompany() routeCompanyId: string | undefined,
    @Param('issueId') issueId: string,
    @Body() dto: CreateInteractionDto,
  ): Promise<InteractionDto> {
    return this.interactions.ask(actor, routeCompanyId, issueId, dto);
  }

  /** A board user answers once (`optionId` and/or `text`); the asking agent is woken with `interactionId` in its wake payload. 409 when already answered. */
  @Post('issues/:issueId/interactions/:interactionId/answer')
  @HttpCode(200)
  @Authorize({ callers: ['board'] })
  @LogActivity('issue.interaction_answered', {
    entityType: 'issue',
    ...issueOf,
    details: (c) => ({ interactionId: c.result.id, optionId: c.body.optionId ?? null }),
  })
  answer(
    @CurrentActor() actor: Actor,
    @RouteCompany() routeCompanyId: string | undefined,
    @Param('issueId') issueId: string,
    @Param('interactionId') interactionId: string,
    @Body() dto: AnswerInteractionDto,
  ): Promise<InteractionDto> {
    return this.interactions.answer(actor, routeCompanyId, issueId, interactionId, dto);
  }

  /** The objective the assigned agent's runtime holds for the issue, and whether its adapter supports one (none of ours does). */
  @Get('issues/:issueId/runner-goal')
  @Authorize({ callers: ['board', 'agent'] })
  runnerGoal(@RouteCompany() routeCompanyId: string | undefined, @Param('issueId') issueId: string): Promise<RunnerGoalDto> {
    return this.goals.get(routeCompanyId, issueId);
  }
}
