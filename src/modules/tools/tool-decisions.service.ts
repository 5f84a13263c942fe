import { Injectable } from '@nestjs/common';
import { notFound } from '../../common/errors/domain-error';
import { LIVE_RUN_STATUSES } from '../adapters/run.types';
import { HeartbeatRunsService } from '../heartbeat/heartbeat-runs.service';
import type { RunToolDecisionsDto } from './dto/tool-decision.dto';
import { ToolActionRequestsRepository } from './tool-action-requests.repository';
import { toDecision } from './tool-decision-view';
import { ToolInvocationsRepository } from './tool-invocations.repository';

/** How many of a run's calls the run page gets (its last ones). */
const MAX_DECISIONS = 1000;

/** What the gateway decided of each company-tool call of a run, and what became of it (the run page's labels). */
@Injectable()
export class ToolDecisionsService {
  constructor(
    private readonly runs: HeartbeatRunsService,
    private readonly invocations: ToolInvocationsRepository,
    private readonly requests: ToolActionRequestsRepository,
  ) {}

  /** The run's calls in order; 404 for a run that is not one of the company's. */
  async forRun(companyId: string, runId: string): Promise<RunToolDecisionsDto> {
    const run = await this.runs.findInCompany(companyId, runId);
    if (!run) throw notFound('Heartbeat run');
    const invocations = await this.invocations.forRun(companyId, run.id, MAX_DECISIONS);
    const requestIds = [...new Set(invocations.flatMap((i) => (i.actionRequestId ? [i.actionRequestId] : [])))];
    const requests = new Map((await this.requests.findMany(companyId, requestIds)).map((r) => [r.id, r]));
    const live = LIVE_RUN_STATUSES.includes(run.status);
    return { decisions: invocations.map((i) => toDecision(i, (i.actionRequestId && requests.get(i.actionRequestId)) || null, live)) };
  }
}
