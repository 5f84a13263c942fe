import { Injectable } from '@nestjs/common';
import { AgentLookup } from '../agents/agent-lookup.service';
import { HeartbeatRunsService } from '../heartbeat/heartbeat-runs.service';
import { RunnerGoalCapabilityDto, RunnerGoalDto } from './dto/issue-controls.dto';
import { IssueStore } from './issue-store.service';

/**
 * What the assigned agent's runtime holds as its objective for an issue. None of this service's
 * adapters (process, http, the local CLI runtimes, the gateway) keeps a durable session goal: each
 * run gets its context from the wake and the issue's heartbeat context, so the answer is truthfully
 * `unsupported` for every one of them.
 */
const UNSUPPORTED: Omit<RunnerGoalCapabilityDto, 'reasonCode' | 'reason'> = {
  availability: 'unsupported',
  verified: true,
  actions: [],
  autonomousUpdates: false,
  persistentAcrossResume: false,
  maxObjectiveChars: null,
  tokenBudgetControl: false,
  usageReporting: false,
};

@Injectable()
export class RunnerGoalService {
  constructor(
    private readonly store: IssueStore,
    private readonly agents: AgentLookup,
    private readonly runs: HeartbeatRunsService,
  ) {}

  async get(routeCompanyId: string | undefined, ref: string): Promise<RunnerGoalDto> {
    const issue = await this.store.load(routeCompanyId, ref);
    const agent = issue.assigneeAgentId ? await this.agents.inCompany(issue.companyId, issue.assigneeAgentId) : null;
    const live = agent
      ? (await this.runs.live(issue.companyId, 50, { id: issue.id, checkoutRunId: issue.checkoutRunId })).find(
          (r) => r.agentId === agent.id,
        )
      : undefined;
    return {
      issueId: issue.id,
      agentId: agent?.id ?? null,
      adapterType: agent?.adapterType ?? null,
      sessionId: null,
      capability: agent
        ? {
            ...UNSUPPORTED,
            reasonCode: 'persistent_session_goal_extension_required',
            reason: `The ${agent.adapterType} adapter does not keep a durable session goal; each run is briefed by its wake and the issue's heartbeat context.`,
          }
        : { ...UNSUPPORTED, reasonCode: 'no_assigned_agent', reason: 'The issue has no assigned agent.' },
      goal: null,
      workingNow: !!live,
      activeRunId: live?.id ?? null,
      pendingAction: null,
      revision: 0,
      observedAt: null,
    };
  }
}
