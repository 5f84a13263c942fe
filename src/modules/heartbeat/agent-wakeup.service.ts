import { Injectable } from '@nestjs/common';
import type { Actor } from '../../common/auth/actor';
import { forbidden, notFound } from '../../common/errors/domain-error';
import { isUuid } from '../../common/http/uuid';
import { HeldWakeupDto, SkippedWakeupDto, WakeupDto, WakeupRunResponseDto } from './dto/heartbeat.dto';
import { HeartbeatAgents } from './heartbeat-agents.port';
import { heartbeatError } from './heartbeat.errors';
import { toRunResponse } from './heartbeat.types';
import { NOT_RUNNABLE_AGENT_STATUSES } from './run-store';
import { WakeupQueue } from './wakeup-queue.service';

/** POST /api/agents/{agentId}/wakeup: who may wake whom, then the queue decides. */
@Injectable()
export class AgentWakeupService {
  constructor(
    private readonly agents: HeartbeatAgents,
    private readonly queue: WakeupQueue,
  ) {}

  /** `routeCompanyId`: the company the guard resolved from the path (undefined when it knows no such agent). */
  async wake(
    actor: Actor,
    routeCompanyId: string | undefined,
    agentId: string,
    dto: WakeupDto,
  ): Promise<WakeupRunResponseDto | SkippedWakeupDto | HeldWakeupDto> {
    const agent = routeCompanyId && isUuid(agentId) ? await this.agents.findForWake(routeCompanyId, agentId) : null;
    if (!agent) throw notFound('Agent');
    if (actor.kind === 'agent' && actor.agentId !== agent.id) {
      throw forbidden('Agents may only wake themselves', { reason: 'deny_unsupported_action' });
    }
    if (NOT_RUNNABLE_AGENT_STATUSES.includes(agent.status)) {
      throw heartbeatError('agent_not_wakeable', `Agent is ${agent.status} and cannot be woken`, { status: agent.status });
    }
    const result = await this.queue.enqueue({
      companyId: agent.companyId,
      agentId: agent.id,
      source: dto.source ?? 'on_demand',
      triggerDetail: dto.triggerDetail ?? (actor.kind === 'board' ? 'manual' : null),
      reason: dto.reason ?? null,
      payload: dto.payload ?? {},
      idempotencyKey: dto.idempotencyKey ?? null,
      forceFreshSession: dto.forceFreshSession ?? false,
      requestedBy: actor,
    });
    if (result.heldBy) return { deferred: true, reason: 'issue_tree_held', holdId: result.heldBy, wakeupRequestId: result.wakeupId };
    if (result.status === 'skipped' || !result.run) {
      return { skipped: true, reason: result.skipReason ?? 'skipped', wakeupRequestId: result.wakeupId };
    }
    return {
      ...toRunResponse(result.run),
      wakeupStatus: result.status,
      wakeupRequestIdOfThisWake: result.wakeupId,
      ...(result.replayed ? { idempotentReplay: true } : {}),
    };
  }
}
