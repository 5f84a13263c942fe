import { Injectable } from '@nestjs/common';
import type { Actor } from '../../common/auth/actor';
import { CompanyAccessService } from '../../common/auth/company-access.service';
import { conflict, notFound } from '../../common/errors/domain-error';
import { WorkCancellation } from '../../common/events/work-cancellation';
import { isUuid } from '../../common/http/uuid';
import { Db } from '../../database/db.service';
import { AuthorizationService } from '../authorization/authorization.service';
import { ApprovalEntity, ApprovalType } from './approval.entity';
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

/**
 * What deciding an approval of another type does (registered by the feature that creates such
 * approvals). Called in the decision's transaction: a failing `approve` leaves the approval pending.
 */
export interface ApprovalDecisionHandler {
  approve(approval: ApprovalEntity, actor: Actor): Promise<void>;
  reject?(approval: ApprovalEntity, actor: Actor): Promise<void>;
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
    private readonly db: Db,
    private readonly access: CompanyAccessService,
    private readonly authz: AuthorizationService,
    private readonly cancellation: WorkCancellation,
  ) {}

  private readonly handlers = new Map<string, ApprovalDecisionHandler>();

  private get repo() {
    return this.db.repo(ApprovalEntity);
  }

  /** The feature that creates approvals of `type` decides what approving and rejecting them does. */
  registerHandler(type: Exclude<ApprovalType, 'hire_agent'>, handler: ApprovalDecisionHandler): void {
    this.handlers.set(type, handler);
  }

  /** A pending approval for a suggested change (agent configuration, skill). */
  async createChangeApproval(input: ChangeApprovalInput): Promise<ApprovalEntity> {
    const a = input.requestedBy;
    return this.repo.save(
      this.repo.create({
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
      }),
    );
  }

  async createHireApproval(input: HireApprovalInput): Promise<ApprovalEntity> {
    const a = input.requestedBy;
    return this.repo.save(
      this.repo.create({
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
      }),
    );
  }

  /** An agent hired under approval stays unusable (no resume, no keys) until the board decides. */
  async hasPendingHire(agentId: string): Promise<boolean> {
    const rows = await this.db.query(`SELECT 1 FROM approvals WHERE agent_id = $1 AND type = 'hire_agent' AND status = 'pending'`, [
      agentId,
    ]);
    return rows.length > 0;
  }

  /** Pending approvals of a deleted agent can no longer be decided. */
  async cancelForAgent(companyId: string, agentId: string): Promise<void> {
    await this.db.query(
      `UPDATE approvals SET status = 'cancelled', decided_at = now(), updated_at = now()
        WHERE company_id = $1 AND agent_id = $2 AND status = 'pending'`,
      [companyId, agentId],
    );
  }

  async list(companyId: string, q: ListApprovalsQueryDto): Promise<ApprovalResponseDto[]> {
    const qb = this.repo.createQueryBuilder('a').where('a.company_id = :companyId', { companyId }).orderBy('a.created_at', 'DESC');
    if (q.status) qb.andWhere('a.status = :status', { status: q.status });
    if (q.type) qb.andWhere('a.type = :type', { type: q.type });
    return (await qb.getMany()).map(toApprovalResponse);
  }

  async get(actor: Actor, approvalId: string): Promise<ApprovalResponseDto> {
    return toApprovalResponse(await this.load(actor, approvalId, false));
  }

  async approve(actor: Actor, approvalId: string, dto: DecideApprovalDto): Promise<ApprovalResponseDto> {
    const approval = await this.decide(actor, approvalId, 'approved', dto);
    const handler = this.handlers.get(approval.type);
    if (handler) {
      await handler.approve(approval, actor);
      return toApprovalResponse(approval);
    }
    if (approval.agentId) {
      await this.db.query(
        `UPDATE agents SET status = 'idle', updated_at = now() WHERE id = $1 AND company_id = $2 AND status = 'pending_approval'`,
        [approval.agentId, approval.companyId],
      );
    }
    return toApprovalResponse(approval);
  }

  async reject(actor: Actor, approvalId: string, dto: DecideApprovalDto): Promise<ApprovalResponseDto> {
    const approval = await this.decide(actor, approvalId, 'rejected', dto);
    const handler = this.handlers.get(approval.type);
    if (handler) {
      await handler.reject?.(approval, actor);
      return toApprovalResponse(approval);
    }
    if (approval.agentId) {
      const rows = await this.db.query(
        `UPDATE agents SET status = 'terminated', terminated_at = now(), updated_at = now()
          WHERE id = $1 AND company_id = $2 AND status <> 'terminated' RETURNING id`,
        [approval.agentId, approval.companyId],
      );
      if (rows.length) {
        await this.db.query(`UPDATE agent_api_keys SET revoked_at = now() WHERE agent_id = $1 AND revoked_at IS NULL`, [approval.agentId]);
        await this.cancellation.cancel({ companyId: approval.companyId, agentIds: [approval.agentId] }, 'hire_rejected');
      }
    }
    return toApprovalResponse(approval);
  }

  /** Locks the approval; only a pending one can be decided (409 otherwise). */
  private async decide(actor: Actor, approvalId: string, status: 'approved' | 'rejected', dto: DecideApprovalDto): Promise<ApprovalEntity> {
    const approval = await this.load(actor, approvalId, true);
    await this.authz.assert({ actor, action: 'agent.create', companyId: approval.companyId, targetAgentId: approval.agentId });
    if (approval.status !== 'pending') {
      throw conflict(`Approval is already ${approval.status}`, 'approval_already_decided', { status: approval.status });
    }
    approval.status = status;
    approval.decisionNote = dto.decisionNote ?? null;
    approval.decidedByUserId = actor.kind === 'board' ? actor.userId : null;
    approval.decidedAt = new Date();
    return this.repo.save(approval);
  }

  private async load(actor: Actor, approvalId: string, lock: boolean): Promise<ApprovalEntity> {
    const qb = this.repo.createQueryBuilder('a').where('a.id = :id', { id: approvalId });
    if (lock) qb.setLock('pessimistic_write');
    const approval = isUuid(approvalId) ? await qb.getOne() : null;
    if (!approval) throw notFound('Approval');
    await this.access.assertAccessToKnownCompany(actor, approval.companyId);
    return approval;
  }
}
