import { Injectable, OnModuleInit } from '@nestjs/common';
import { HiredAgents } from '../approvals/hired-agents.port';
import { AgentScopesRepository } from './agent-scopes.repository';

/** The agents module's part of the approvals port: what a hire decision does to the hired agent. */
@Injectable()
export class HiredAgentsRegistration implements OnModuleInit {
  constructor(
    private readonly repo: AgentScopesRepository,
    private readonly hired: HiredAgents,
  ) {}

  onModuleInit(): void {
    const repo = this.repo;
    this.hired.register({
      activate: (companyId, agentId) => repo.activateHired(companyId, agentId),
      terminate: async (companyId, agentId) => {
        if (!(await repo.terminateHired(companyId, agentId))) return false;
        await repo.revokeKeys(companyId, agentId);
        return true;
      },
    });
  }
}
