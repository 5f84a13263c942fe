import { Injectable } from '@nestjs/common';
import type { Actor } from '../../common/auth/actor';
import { conflict } from '../../common/errors/domain-error';
import { WorkCancellation } from '../../common/events/work-cancellation';
import { Db } from '../../database/db.service';
import { ApprovalsService } from '../approvals/approvals.service';
import { AuthorizationService } from '../authorization/authorization.service';
import { BudgetSyncService } from '../budgets/budget-sync.service';
import { AgentLookup } from './agent-lookup.service';
import { AgentEntity, AgentStatus } from './agent.entity';
import { AgentResponseDto } from './dto/agent.dto';

const NOT_RESUMABLE: AgentStatus[] = ['terminated', 'pending_approval'];

/** The agent status table: pause, resume, terminate, delete, and status moves by PATCH. */
@Injectable()
export class AgentLifecycleService {
  constructor(
    private readonly db: Db,
    private readonly lookup: AgentLookup,
    private readonly authz: AuthorizationService,
    private readonly cancellation: WorkCancellation,
    private readonly budgets: BudgetSyncService,
    private readonly approvals: ApprovalsService,
  ) {}

  private async loadForLifecycle(actor: Actor, agentId: string): Promise<AgentEntity> {
    const agent = await this.lookup.byId(actor, agentId, true);
    await this.authz.assert({ actor, action: 'agent.lifecycle', companyId: agent.companyId, targetAgentId: agent.id });
    return agent;
  }

  async pause(actor: Actor, agentId: string): Promise<AgentResponseDto> {
    return this.moveTo(actor, agentId, 'paused');
  }

  private async moveTo(actor: Actor, agentId: string, target: AgentStatus): Promise<AgentResponseDto> {
    const agent = await this.loadForLifecycle(actor, agentId);
    await this.applyStatus(agent, target);
    return this.lookup.view(actor, agent);
  }

  async resume(actor: Actor, agentId: string): Promise<AgentResponseDto> {
    const agent = await this.loadForLifecycle(actor, agentId);
    if (NOT_RESUMABLE.includes(agent.status))
      throw conflict(`A ${agent.status} agent cannot be resumed`, 'invalid_agent_status', { status: agent.status });
    // a hire paused while waiting for approval must not slip past the board
    if (await this.approvals.hasPendingHire(agent.id)) throw conflict('The agent is waiting for hire approval', 'hire_approval_pending');
    await this.setStatus(agent, 'idle', null);
    return this.lookup.view(actor, agent);
  }

  async terminate(actor: Actor, agentId: string): Promise<AgentResponseDto> {
    return this.moveTo(actor, agentId, 'terminated');
  }

  /** Hard delete: runs, wakeups and keys go with the row (foreign keys cascade); queued work is cancelled first. */
  async remove(actor: Actor, agentId: string): Promise<AgentResponseDto> {
    const agent = await this.loadForLifecycle(actor, agentId);
    const before = await this.lookup.view(actor, agent, true);
    await this.cancellation.cancel({ companyId: agent.companyId, agentIds: [agent.id] }, 'agent_deleted');
    await this.approvals.cancelForAgent(agent.companyId, agent.id);
    await this.db.query(
      `DELETE FROM principal_permission_grants WHERE company_id = $1 AND principal_type = 'agent' AND principal_id = $2`,
      [agent.companyId, agent.id],
    );
    await this.db.query(`DELETE FROM company_memberships WHERE company_id = $1 AND principal_type = 'agent' AND principal_id = $2`, [
      agent.companyId,
      agent.id,
    ]);
    await this.db.query(`DELETE FROM agents WHERE id = $1`, [agent.id]);
    return before;
  }

  async updateBudget(actor: Actor, agentId: string, budgetMonthlyCents: number): Promise<AgentResponseDto> {
    const agent = await this.loadForLifecycle(actor, agentId);
    await this.db.query(`UPDATE agents SET budget_monthly_cents = $2, updated_at = now() WHERE id = $1`, [agent.id, budgetMonthlyCents]);
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
      throw conflict('A terminated agent cannot change status', 'invalid_agent_status', { status: agent.status });
    }
    if (target === 'terminated') return this.terminateRow(agent);
    if (target === 'paused') {
      if (agent.status !== 'paused') await this.setStatus(agent, 'paused', 'manual');
      await this.cancellation.cancel({ companyId: agent.companyId, agentIds: [agent.id] }, 'agent_paused');
      return;
    }
    if (agent.status === 'pending_approval') {
      throw conflict('A pending_approval agent leaves that state only through its approval', 'invalid_agent_status', {
        status: agent.status,
      });
    }
    if (target === 'pending_approval') throw conflict('An agent cannot be moved back to pending_approval', 'invalid_agent_status');
    if (await this.approvals.hasPendingHire(agent.id)) throw conflict('The agent is waiting for hire approval', 'hire_approval_pending');
    await this.setStatus(agent, target, null);
  }

  private async setStatus(agent: AgentEntity, status: AgentStatus, pauseReason: string | null): Promise<void> {
    await this.db.query(`UPDATE agents SET status = $2, pause_reason = $3, updated_at = now() WHERE id = $1`, [
      agent.id,
      status,
      pauseReason,
    ]);
    agent.status = status;
    agent.pauseReason = pauseReason;
  }

  /** Terminated: every key revoked at once, queued and running work cancelled. */
  private async terminateRow(agent: AgentEntity): Promise<void> {
    await this.db.query(
      `UPDATE agents SET status = 'terminated', pause_reason = NULL, terminated_at = now(), updated_at = now() WHERE id = $1`,
      [agent.id],
    );
    await this.db.query(`UPDATE agent_api_keys SET revoked_at = now() WHERE agent_id = $1 AND revoked_at IS NULL`, [agent.id]);
    await this.approvals.cancelForAgent(agent.companyId, agent.id);
    await this.cancellation.cancel({ companyId: agent.companyId, agentIds: [agent.id] }, 'agent_terminated');
    agent.status = 'terminated';
  }
}
