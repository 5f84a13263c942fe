import { Controller, Get, Param } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Authorize } from '../../common/auth/authorize.decorator';
import { DashboardService } from './dashboard.service';
import { DashboardResponseDto } from './dto/dashboard.dto';

@ApiTags('dashboard')
@Controller()
export class DashboardController {
  constructor(private readonly dashboard: DashboardService) {}

  /** Agents by status, tasks open / in progress / blocked / done, month spend and budget, approvals, budget holds, 14 days of run activity. */
  @Get('companies/:companyId/dashboard')
  @Authorize({ callers: ['board', 'agent'] })
  get(@Param('companyId') companyId: string): Promise<DashboardResponseDto> {
    return this.dashboard.get(companyId);
  }
}
