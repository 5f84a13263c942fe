import { Injectable } from '@nestjs/common';
import type { Actor } from '../../common/auth/actor';
import { AuthorizationService } from '../authorization/authorization.service';
import { AdapterExecutors } from '../adapters/adapter-executors';
import { AgentLookup } from './agent-lookup.service';
import { AgentEnvironmentReportDto } from './dto/agent.dto';

/** `POST /api/agents/{agentId}/test-environment`: the adapter's own environment check, on demand. */
@Injectable()
export class AgentEnvironmentService {
  constructor(
    private readonly lookup: AgentLookup,
    private readonly authz: AuthorizationService,
    private readonly executors: AdapterExecutors,
  ) {}

  /** Board callers of the company, or agents allowed to create agents (`agents:create`). Nothing is stored. */
  async test(actor: Actor, agentId: string): Promise<AgentEnvironmentReportDto> {
    const agent = await this.lookup.byId(actor, agentId);
    if (actor.kind === 'agent')
      await this.authz.assert({ actor, action: 'agent.create', companyId: agent.companyId, targetAgentId: agent.id });
    const executor = this.executors.get(agent.adapterType);
    const report = executor
      ? await executor.testEnvironment(agent.adapterConfig ?? {})
      : {
          ok: false,
          checks: [{ name: 'adapter', ok: false, message: `No executor for adapter type ${agent.adapterType} on this instance` }],
        };
    return { agentId: agent.id, adapterType: agent.adapterType, ok: report.ok, checks: report.checks, testedAt: new Date().toISOString() };
  }
}
