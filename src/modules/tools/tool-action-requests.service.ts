import { Injectable } from '@nestjs/common';
import type { Actor } from '../../common/auth/actor';
import { notFound } from '../../common/errors/domain-error';
import { WakeupQueue } from '../heartbeat/wakeup-queue.service';
import type {
  ActionRequestDto,
  ActionRequestItemDto,
  ApproveActionRequestDto,
  DeclineActionRequestDto,
} from './dto/tool-action-request.dto';
import { ToolActionRequestsRepository } from './tool-action-requests.repository';
import { toActionRequestDto, toActionRequestItem } from './tool-views';
import { toolError } from './tools.errors';
import type { ActionRequest, ActionRequestStatus } from './tool.types';

/** The board's side of "ask" tools: the requests waiting for it, and its decisions. */
@Injectable()
export class ToolActionRequestsService {
  constructor(
    private readonly repo: ToolActionRequestsRepository,
    private readonly wakeups: WakeupQueue,
  ) {}

  async list(companyId: string, status: ActionRequestStatus | 'all' = 'pending', limit = 100): Promise<ActionRequestItemDto[]> {
    return (await this.repo.list(companyId, status, limit)).map(toActionRequestItem);
  }

  /**
   * Allows this one call; the agent's waiting call goes on, or its next identical call runs.
   * `routeCompanyId`: the request's company, resolved and checked by the guard (undefined when the
   * path holds no UUID); a `companyId` in the body must name it too.
   */
  async approve(actor: Actor, routeCompanyId: string | undefined, id: string, dto: ApproveActionRequestDto): Promise<ActionRequestDto> {
    if (dto.rememberAction)
      throw toolError('unsupported_option', '"Always allow" is not offered: approve each call, or set the tool to allow in its profile');
    return this.decide(actor, routeCompanyId, id, dto.companyId, 'approved', null);
  }

  /** Refuses the call: the agent's call ends with a tool error naming the reason. */
  async decline(actor: Actor, routeCompanyId: string | undefined, id: string, dto: DeclineActionRequestDto): Promise<ActionRequestDto> {
    return this.decide(actor, routeCompanyId, id, dto.companyId, 'rejected', dto.reason ?? null);
  }

  private async decide(
    actor: Actor,
    owner: string | undefined,
    id: string,
    bodyCompanyId: string | undefined,
    status: 'approved' | 'rejected',
    reason: string | null,
  ) {
    if (!owner || (bodyCompanyId !== undefined && bodyCompanyId !== owner)) throw notFound('Action request');
    const userId = actor.kind === 'board' ? actor.userId : `agent:${actor.agentId}`;
    const decided = await this.repo.decide(owner, id, status, userId, reason);
    if (!decided) {
      const current = await this.repo.find(owner, id);
      if (!current) throw notFound('Action request');
      if (current.status === 'expired')
        throw toolError('action_request_expired', 'The request timed out before a decision', { status: current.status });
      throw toolError('action_request_decided', `The request is already ${current.status}`, { status: current.status });
    }
    await this.wake(decided, actor);
    return toActionRequestDto(decided);
  }

  /** The agent hears of the decision: its waiting call sees it at once; an agent no longer running is woken to go on. */
  private async wake(r: ActionRequest, actor: Actor): Promise<void> {
    await this.wakeups.enqueue({
      companyId: r.companyId,
      agentId: r.agentId,
      source: 'automation',
      triggerDetail: 'system',
      reason: 'tool_action_decided',
      payload: { actionRequestId: r.id, connectionId: r.connectionId, toolName: r.toolName, decision: r.status },
      idempotencyKey: `tool-action:${r.id}`,
      requestedBy: actor,
    });
  }
}
