import { Injectable } from '@nestjs/common';
import type { Actor } from '../../common/auth/actor';
import { notFound } from '../../common/errors/domain-error';
import { WorkCancellation } from '../../common/events/work-cancellation.port';
import { HiredAgents } from './hired-agents.port';
import { isUuid } from '../../common/http/uuid';
import { AuthorizationService } from '../authorization/authorization.service';
import { ApprovalEntity, ApprovalType } from './approval.entity';
import { ApprovalHandlers } from './approval-handlers.port';
import { approvalError } from './approvals.errors';
import { ApprovalsRepository } from './approvals.repository';
import { ApprovalResponseDto, DecideApprovalDto, ListApprovalsQueryDto } from './dto/approval.dto';

export function toApprovalResponse(a: ApprovalEntity): ApprovalResponseDto {
  return {
    id: a.id,
    companyId: a.companyId,
    type: a.type,
    status: a.status,
    agentId: a.agentId,
    payload: a.payload,
    sourceIssueIds: a.sourceIssueIds,
    requestedByActorType: a.requestedByActorType,
    requestedByActorId: a.requestedByActorId,
    decisionNote: a.decisionNote,
    decidedByUserId: a.decidedByUserId,
    decidedAt: a.decidedAt ? a.decidedAt.toISOString() : null,
    createdAt: a.createdAt.toISOString(),
    updatedAt: a.updatedAt.toISOString(),
  };
}

export interface HireApprovalInput {
  companyId: string;
  agentId: string;
  payload: Record<string, unknown>;
  sourceIssueIds: string[];
  requestedBy: Actor;
}

export interface ChangeApprovalInput {
  companyId: string;
  type: Exclude<ApprovalType, 'hire_agent'>;
  agentId: string | null;
  payload: Record<string, unknown>;
  requestedBy: Actor;
}

/**
 * Board approvals. A hire approval moves its pending agent out of pending_approval:
 * approve -> idle (a paused hire stays paused), reject -> terminated (keys revoked, work cancelled).
 */
@Injectable()
export class ApprovalsService {
  constructor(
    private readonly repo: ApprovalsRepository,
    private readonly authz: AuthorizationService,
    private readonly cancellation: WorkCancellation,
    private readonly hired: HiredAgents,
    private readonly handlers: ApprovalHandlers,
  ) {}

  /** A pending approval for a suggested change (agent configuration, skill). */
  async createChangeApproval(input: ChangeApprovalInput): Promise<ApprovalEntity> {
    const a = input.requestedBy;
    return this.repo.insert({
      companyId: input.companyId,
      type: input.type,
      status: 'pending',
      agentId: input.agentId,
      payload: input.payload,
      sourceIssueIds: [],
      requestedByActorType: a.kind === 'agent' ? 'agent' : 'user',
      requestedByActorId: a.kind === 'agent' ? a.agentId : a.userId,
      decisionNote: null,
      decidedByUserId: null,
      decidedAt: null,
    });
  }

  async createHireApproval(input: HireApprovalInput): Promise<ApprovalEntity> {
    const a = input.requestedBy;
    return this.repo.insert({
      companyId: input.companyId,
      type: 'hire_agent',
      status: 'pending',
      agentId: input.agentId,
      payload: input.payload,
      sourceIssueIds: input.sourceIssueIds,
      requestedByActorType: a.kind === 'agent' ? 'agent' : 'user',
      requestedByActorId: a.kind === 'agent' ? a.agentId : a.userId,
      decisionNote: null,
      decidedByUserId: null,
      decidedAt: null,
    });
  }

  /** An agent hired under approval stays unusable (no resume, no keys) until the board decides. */
  async hasPendingHire(agentId: string): Promise<boolean> {
    return this.repo.hasPendingHire(agentId);
  }

  /** Pending approvals of a deleted agent can no longer be decided. */
  async cancelForAgent(companyId: string, agentId: string): Promise<void> {
    await this.repo.cancelPendingForAgent(companyId, agentId);
  }

  async list(companyId: string, q: ListApprovalsQueryDto): Promise<ApprovalResponseDto[]> {
    return (await this.repo.list(companyId, { status: q.status, type: q.type })).map(toApprovalResponse);
  }

  /** `companyId`: the route's company (resolved and checked by the guard; undefined when it knows no such approval). */
  async get(companyId: string | undefined, approvalId: string): Promise<ApprovalResponseDto> {
    return toApprovalResponse(await this.load(companyId, approvalId, false));
  }

  async approve(actor: Actor, companyId: string | undefined, approvalId: string, dto: DecideApprovalDto): Promise<ApprovalResponseDto> {
    const approval = await this.decide(actor, companyId, approvalId, 'approved', dto);
    const handler = this.handlers.of(approval.type);
    if (handler) {
      await handler.approve(approval, actor);
      return toApprovalResponse(approval);
    }
    if (approval.agentId) {
      await this.hired.owner.activate(approval.companyId, approval.agentId);
    }
    return toApprovalResponse(approval);
  }

  async reject(actor: Actor, companyId: string | undefined, approvalId: string, dto: DecideApprovalDto): Promise<ApprovalResponseDto> {
    const approval = await this.decide(actor, companyId, approvalId, 'rejected', dto);
    const handler = this.handlers.of(approval.type);
    if (handler) {
      await handler.reject?.(approval, actor);
      return toApprovalResponse(approval);
    }
    if (approval.agentId) {
      if (await this.hired.owner.terminate(approval.companyId, approval.agentId)) {
        await this.cancellation.cancel({ companyId: approval.companyId, agentIds: [approval.agentId] }, 'hire_rejected');
      }
    }
    return toApprovalResponse(approval);
  }

  /** Locks the approval; only a pending one can be decided (409 otherwise). */
  private async decide(
    actor: Actor,
    companyId: string | undefined,
    approvalId: string,
    status: 'approved' | 'rejected',
    dto: DecideApprovalDto,
  ): Promise<ApprovalEntity> {
    const approval = await this.load(companyId, approvalId, true);
    await this.authz.assert({ actor, action: 'agent.create', companyId: approval.companyId, targetAgentId: approval.agentId });
    if (approval.status !== 'pending') {
      throw approvalError('approval_already_decided', `Approval is already ${approval.status}`, { status: approval.status });
    }
    approval.status = status;
    approval.decisionNote = dto.decisionNote ?? null;
    approval.decidedByUserId = actor.kind === 'board' ? actor.userId : null;
    approval.decidedAt = new Date();
    return this.repo.save(approval);
  }

  private async load(companyId: string | undefined, approvalId: string, lock: boolean): Promise<ApprovalEntity> {
    const approval = companyId && isUuid(approvalId) ? await this.repo.findInCompany(companyId, approvalId, lock) : null;
    if (!approval) throw notFound('Approval');
    return approval;
  }
}
