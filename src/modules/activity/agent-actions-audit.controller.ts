import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Authorize } from '../../common/auth/authorize.decorator';
import { ActivityService } from './activity.service';
import { AgentActionsPageDto, AgentActionsQueryDto } from './dto/activity.dto';

@ApiTags('activity')
@Controller()
export class AgentActionsAuditController {
  constructor(private readonly activity: ActivityService) {}

  /** Activity whose actor is an agent, newest first; `{ items, nextCursor }`; activity of hidden issues left out as in the feed. */
  @Get('companies/:companyId/audit/agent-actions')
  @Authorize({ callers: ['board', 'agent'] })
  agentActions(@Param('companyId') companyId: string, @Query() q: AgentActionsQueryDto): Promise<AgentActionsPageDto> {
    return this.activity.agentActions(companyId, q);
  }
}
