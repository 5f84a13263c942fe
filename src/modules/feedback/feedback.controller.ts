import { Body, Controller, Get, Param, Post, Query, Res } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import type { FastifyReply as Response } from 'fastify';
import { LogActivity } from '../../common/activity/log-activity.decorator';
import type { Actor } from '../../common/auth/actor';
import { Authorize } from '../../common/auth/authorize.decorator';
import { CurrentActor } from '../../common/auth/current-actor.decorator';
import { CreateFeedbackVoteDto, FeedbackTraceDto, FeedbackTraceQueryDto } from './dto/feedback.dto';
import { FeedbackService } from './feedback.service';

/** Feedback traces: board users rate agent output; the list feeds review and (with consent) sharing. */
@ApiTags('feedback')
@Controller('companies/:companyId/feedback-traces')
export class FeedbackController {
  constructor(private readonly feedback: FeedbackService) {}

  /**
   * Records the caller's vote (`up`/`down`, optional `note`) on a comment, a document revision or a
   * run of the company: 201 for a new vote, 200 when it replaces the caller's earlier vote on the
   * same target. Board only. A target of another company or unknown: 422 `invalid_reference`.
   */
  @Post()
  @Authorize({ callers: ['board'] })
  @LogActivity('feedback.voted', {
    entityType: 'feedback_trace',
    details: (c) => ({ targetType: c.result.targetType, targetId: c.result.targetId, vote: c.result.vote }),
  })
  async vote(
    @CurrentActor() actor: Actor,
    @Param('companyId') companyId: string,
    @Body() dto: CreateFeedbackVoteDto,
    @Res({ passthrough: true }) res: Response,
  ): Promise<FeedbackTraceDto> {
    const { trace, created } = await this.feedback.vote(actor, companyId, dto);
    res.status(created ? 201 : 200);
    return trace;
  }

  /**
   * Feedback traces, newest first (at most 500). Filters: `targetType`, `vote`, `status`
   * (`local`|`shared`), `issueId`, `projectId`, `from`/`to` (created at, ISO 8601, `to` exclusive),
   * `sharedOnly` (only traces the company's feedback-sharing consent covers), `includePayload`
   * (adds the rated content). Board only.
   */
  @Get()
  @Authorize({ callers: ['board'] })
  list(@Param('companyId') companyId: string, @Query() q: FeedbackTraceQueryDto): Promise<FeedbackTraceDto[]> {
    return this.feedback.list(companyId, q);
  }
}
