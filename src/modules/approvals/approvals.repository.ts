import { Injectable } from '@nestjs/common';
import type { DeepPartial } from 'typeorm';
import { CompanyScopedRepository } from '../../database/company-scoped.repository';
import { Db } from '../../database/db.service';
import { ApprovalEntity } from './approval.entity';

export interface ApprovalListFilter {
  status?: string;
  type?: string;
}

/** The only place the `approvals` table is read and written (the hired agent moves through HiredAgents). */
@Injectable()
export class ApprovalsRepository extends CompanyScopedRepository {
  constructor(db: Db) {
    super(db);
  }

  private get entities() {
    return this.orm(ApprovalEntity);
  }

  /** Inserts a new approval and returns it with its generated columns. */
  insert(values: DeepPartial<ApprovalEntity>): Promise<ApprovalEntity> {
    return this.entities.save(this.entities.create(values));
  }

  /** Writes the decided fields of a loaded approval back. */
  save(approval: ApprovalEntity): Promise<ApprovalEntity> {
    return this.entities.save(approval);
  }

  /** The company's approval by id, or null; `lock` takes FOR UPDATE. */
  findInCompany(companyId: string, approvalId: string, lock: boolean): Promise<ApprovalEntity | null> {
    return this.ormIn(companyId, ApprovalEntity).findOne({
      where: { id: approvalId },
      lock: lock ? { mode: 'pessimistic_write' } : undefined,
    });
  }

  /** The company's approvals, newest first, optionally by status and type. */
  list(companyId: string, filter: ApprovalListFilter): Promise<ApprovalEntity[]> {
    return this.ormIn(companyId, ApprovalEntity).find({
      where: {
        ...(filter.status ? { status: filter.status as ApprovalEntity['status'] } : {}),
        ...(filter.type ? { type: filter.type as ApprovalEntity['type'] } : {}),
      },
      order: { createdAt: 'DESC' },
    });
  }

  async hasPendingHire(agentId: string): Promise<boolean> {
    const rows = await this.unscoped(
      'a hire approval by the id of an agent the caller loaded (and checked) already',
      `SELECT 1 FROM approvals WHERE agent_id = $1 AND type = 'hire_agent' AND status = 'pending'`,
      [agentId],
    );
    return rows.length > 0;
  }

  /** Pending approvals of the agent become cancelled. */
  async cancelPendingForAgent(companyId: string, agentId: string): Promise<void> {
    await this.returning(
      companyId,
      `UPDATE approvals SET status = 'cancelled', decided_at = now(), updated_at = now()
        WHERE company_id = $1 AND agent_id = $2 AND status = 'pending'`,
      [agentId],
    );
  }
}
