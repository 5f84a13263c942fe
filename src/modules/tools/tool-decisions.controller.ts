import { Controller, Get, Param } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Authorize } from '../../common/auth/authorize.decorator';
import { RunToolDecisionsDto } from './dto/tool-decision.dto';
import { ToolDecisionsService } from './tool-decisions.service';

/** A read of the run page: it answers no domain error of its own (only access errors and 404). */
@ApiTags('tools')
@Controller()
export class ToolDecisionsController {
  constructor(private readonly decisions: ToolDecisionsService) {}

  /**
   * Each call the run made of a company connection's tool through the gateway, in order: the
   * profiles' decision (allow, require_approval, deny), the action request an "ask" call waited on,
   * and what became of the call (`outcome`, `reasonCode`, `denialReason`), with its steps. The run
   * page shows a label per call from these (Allowed, Needs approval, Approved, Executed, Denied,
   * Failed, Timed out). `{ decisions: [] }` for a run without such calls; 404 for a run that is not
   * the company's.
   */
  @Get('companies/:companyId/tools/runs/:runId/decisions')
  @Authorize({ callers: ['board'] })
  runDecisions(@Param('companyId') companyId: string, @Param('runId') runId: string): Promise<RunToolDecisionsDto> {
    return this.decisions.forRun(companyId, runId);
  }
}
