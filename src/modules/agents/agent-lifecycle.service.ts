import { Injectable } from '@nestjs/common';
import type { Actor } from '../../common/auth/actor';
import { WorkCancellation } from '../../common/events/work-cancellation.port';
import { ApprovalsService } from '../approvals/approvals.service';
import { AuthorizationService } from '../authorization/authorization.service';
import { BudgetSyncService } from '../budgets/budget-sync.service';
import { AgentKeysRepository } from './agent-keys.repository';
import { AgentLookup } from './agent-lookup.service';
import { AgentMemberships } from './agent-memberships.port';
import { AgentEntity, AgentStatus } from './agent.entity';
import { agentError } from './agents.errors';
import { AgentsRepository } from './agents.repository';
import { AgentResponseDto } from './dto/agent.dto';

const NOT_RESUMABLE: AgentStatus[] = ['terminated', 'pending_approval'];

/** The agent status table: pause, resume, terminate, delete, and status moves by PATCH. */
@Injectable()
export class AgentLifecycleService {
  constructor(
    private readonly agents: AgentsRepository,
    private readonly keys: AgentKeysRepository,
    private readonly memberships: AgentMemberships,
    private readonly lookup: AgentLookup,
    private readonly authz: AuthorizationService,
    private readonly cancellation: WorkCancellation,
    private readonly budgets: BudgetSyncService,
    private readonly approvals: ApprovalsService,
  ) {}

  private async loadForLifecycle(actor: Actor, routeCompanyId: string | undefined, agentId: string): Promise<AgentEntity> {
    const agent = await this.lookup.byId(routeCompanyId, agentId, true);
    await this.authz.assert({ actor, action: 'agent.lifecycle', companyId: agent.companyId, targetAgentId: agent.id });
    return agent;
  }

  async pause(actor: Actor, routeCompanyId: string | undefined, agentId: string): Promise<AgentResponseDto> {
    return this.moveTo(actor, routeCompanyId, agentId, 'paused');
  }

  private async moveTo(actor: Actor, routeCompanyId: string | undefined, agentId: string, target: AgentStatus): Promise<AgentResponseDto> {
    const agent = await this.loadForLifecycle(actor, routeCompanyId, agentId);
    await this.applyStatus(agent, target);
    return this.lookup.view(actor, agent);
  }

  async resume(actor: Actor, routeCompanyId: string | undefined, agentId: string): Promise<AgentResponseDto> {
    const agent = await this.loadForLifecycle(actor, routeCompanyId, agentId);
    if (NOT_RESUMABLE.includes(agent.status))
      throw agentError('invalid_agent_status', `A ${agent.status} agent cannot be resumed`, { status: agent.status });
    // a hire paused while waiting for approval must not slip past the board
    if (await this.approvals.hasPendingHire(agent.id)) throw agentError('hire_approval_pending', 'The agent is waiting for hire approval');
    await this.setStatus(agent, 'idle', null);
    return this.lookup.view(actor, agent);
  }

  async terminate(actor: Actor, routeCompanyId: string | undefined, agentId: string): Promise<AgentResponseDto> {
    return this.moveTo(actor, routeCompanyId, agentId, 'terminated');
  }

  /** Hard delete: runs, wakeups and keys go with the row (foreign keys cascade); queued work is cancelled first. */
  async remove(actor: Actor, routeCompanyId: string | undefined, agentId: string): Promise<AgentResponseDto> {
    const agent = await this.loadForLifecycle(actor, routeCompanyId, agentId);
    const before = await this.lookup.view(actor, agent, true);
    await this.cancellation.cancel({ companyId: agent.companyId, agentIds: [agent.id] }, 'agent_deleted');
    await this.approvals.cancelForAgent(agent.companyId, agent.id);
    await this.memberships.deleteAll(agent.companyId, agent.id);
    await this.agents.delete(agent.companyId, agent.id);
    return before;
  }

  async updateBudget(
    actor: Actor,
    routeCompanyId: string | undefined,
    agentId: string,
    budgetMonthlyCents: number,
  ): Promise<AgentResponseDto> {
    const agent = await this.loadForLifecycle(actor, routeCompanyId, agentId);
    await this.agents.updateBudget(agent.companyId, agent.id, budgetMonthlyCents);
    await this.budgets.syncMonthlyPolicy(agent.companyId, 'agent', agent.id, budgetMonthlyCents);
    return this.lookup.view(actor, agent);
  }

  /**
   * One status move of the state table. Terminated agents never come back; pending_approval
   * leaves only through the approval decision; pause works from any other state.
   */
  async applyStatus(agent: AgentEntity, target: AgentStatus): Promise<void> {
    if (agent.status === 'terminated') {
      if (target === 'terminated') return;
      throw agentError('invalid_agent_status', 'A terminated agent cannot change status', { status: agent.status });
    }
    if (target === 'terminated') return this.terminateRow(agent);
    if (target === 'paused') {
      if (agent.status !== 'paused') await this.setStatus(agent, 'paused', 'manual');
      await this.cancellation.cancel({ companyId: agent.companyId, agentIds: [agent.id] }, 'agent_paused');
      return;
    }
    if (agent.status === 'pending_approval') {
      throw agentError('invalid_agent_status', 'A pending_approval agent leaves that state only through its approval', {
        status: agent.status,
      });
    }
    if (target === 'pending_approval') throw agentError('invalid_agent_status', 'An agent cannot be moved back to pending_approval');
    if (await this.approvals.hasPendingHire(agent.id)) throw agentError('hire_approval_pending', 'The agent is waiting for hire approval');
    await this.setStatus(agent, target, null);
  }

  private async setStatus(agent: AgentEntity, status: AgentStatus, pauseReason: string | null): Promise<void> {
    await this.agents.setStatus(agent.companyId, agent.id, status, pauseReason);
    agent.status = status;
    agent.pauseReason = pauseReason;
  }

  /** Terminated: every key revoked at once, queued and running work cancelled. */
  private async terminateRow(agent: AgentEntity): Promise<void> {
    await this.agents.markTerminated(agent.companyId, agent.id);
    await this.keys.revokeAllForAgent(agent.companyId, agent.id);
    await this.approvals.cancelForAgent(agent.companyId, agent.id);
    await this.cancellation.cancel({ companyId: agent.companyId, agentIds: [agent.id] }, 'agent_terminated');
    agent.status = 'terminated';
  }
}
