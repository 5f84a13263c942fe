import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiOkResponse, ApiTags } from '@nestjs/swagger';
import type { Actor } from '../../common/auth/actor';
import { Authorize } from '../../common/auth/authorize.decorator';
import { CurrentActor } from '../../common/auth/current-actor.decorator';
import { AttentionService } from './attention.service';
import { AttentionListDto, AttentionQueryDto } from './dto/attention.dto';
import { TimelineDto, TimelineQueryDto } from './dto/timeline.dto';
import { TimelineService } from './timeline.service';

@ApiTags('board')
@Controller()
export class BoardController {
  constructor(
    private readonly attention: AttentionService,
    private readonly timelines: TimelineService,
  ) {}

  /**
   * What needs the board: pending approvals and join requests, questions agents asked on issues,
   * blocked issues, runs that failed in the last 24 hours, open budget incidents, agents in error.
   * Ordered by severity then newest activity (`sort=recent`: newest first); items the caller
   * dismissed or snoozed (inbox-dismissals, the item's `dismissalKey`) only with `includeDismissed`.
   */
  @Get('companies/:companyId/attention')
  @Authorize({ callers: ['board'] })
  list(@CurrentActor() actor: Actor, @Param('companyId') companyId: string, @Query() q: AttentionQueryDto): Promise<AttentionListDto> {
    return this.attention.list(actor, companyId, q);
  }

  /**
   * Decision queues: there are none to configure here; the attention list's source kinds are its
   * queues (`GET …/attention?queue=<sourceKind>`). Always [].
   */
  @Get('companies/:companyId/decision-queues')
  @Authorize({ callers: ['board'] })
  @ApiOkResponse({ schema: { type: 'array', items: { type: 'object' }, maxItems: 0 } })
  decisionQueues(): never[] {
    return [];
  }

  /**
   * The company's work over a window (default the last 7 days, at most 90): per issue, the runs
   * agents worked on it (`spans`), what happened to it (`events`) and who handed it to whom
   * (`edges`), with the actors' names. Paged by issue (`limit`, `offset`).
   */
  @Get('companies/:companyId/timeline')
  @Authorize({ callers: ['board', 'agent'] })
  timeline(@CurrentActor() actor: Actor, @Param('companyId') companyId: string, @Query() q: TimelineQueryDto): Promise<TimelineDto> {
    return this.timelines.timeline(actor, companyId, q);
  }
}
