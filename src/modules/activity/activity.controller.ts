import { NoActivity } from '../../common/activity/log-activity.decorator';
import { Body, Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Authorize } from '../../common/auth/authorize.decorator';
import { ActivityQueryDto, ActivityResponseDto, CreateActivityDto } from './dto/activity.dto';
import { ActivityService } from './activity.service';

@ApiTags('activity')
@Controller('companies/:companyId/activity')
export class ActivityController {
  constructor(private readonly activity: ActivityService) {}

  /** Company activity, newest first; exact-match filters; no pagination. */
  @Get()
  @Authorize({ callers: ['board', 'agent'] })
  list(@Param('companyId') companyId: string, @Query() q: ActivityQueryDto): Promise<ActivityResponseDto[]> {
    return this.activity.listForCompany(companyId, q);
  }

  /** Board-only: append a record (actorType defaults to `system`; details are sanitised). */
  @Post()
  @NoActivity("the route writes the activity record itself (the caller's action)")
  @HttpCode(201)
  @Authorize({ callers: ['board'] })
  create(@Param('companyId') companyId: string, @Body() dto: CreateActivityDto): Promise<ActivityResponseDto> {
    return this.activity.create(companyId, dto);
  }
}
