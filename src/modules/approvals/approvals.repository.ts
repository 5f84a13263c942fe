import { Injectable } from '@nestjs/common';
import type { DeepPartial } from 'typeorm';
import { CompanyScopedRepository, returningRows } from '../../database/company-scoped.repository';
import { Db } from '../../database/db.service';
import { ApprovalEntity } from './approval.entity';

export interface ApprovalListFilter {
  status?: string;
  type?: string;
}

/** The only place the `approvals` table is read and written (plus the hire decision's agent rows, see below). */
@Injectable()
export class ApprovalsRepository extends CompanyScopedRepository {
  constructor(db: Db) {
    super(db);
  }

  private get entities() {
    return this.db.repo(ApprovalEntity);
  }

  /** Inserts a new approval and returns it with its generated columns. */
  insert(values: DeepPartial<ApprovalEntity>): Promise<ApprovalEntity> {
    return this.entities.save(this.entities.create(values));
  }

  /** Writes the decided fields of a loaded approval back. */
  save(approval: ApprovalEntity): Promise<ApprovalEntity> {
    return this.entities.save(approval);
  }

  /** By id (any company; access is checked by the caller); `lock` takes FOR UPDATE. */
  findById(approvalId: string, lock: boolean): Promise<ApprovalEntity | null> {
    const qb = this.entities.createQueryBuilder('a').where('a.id = :id', { id: approvalId });
    if (lock) qb.setLock('pessimistic_write');
    return qb.getOne();
  }

  /** The company's approvals, newest first, optionally by status and type. */
  list(companyId: string, filter: ApprovalListFilter): Promise<ApprovalEntity[]> {
    const qb = this.entities
      .createQueryBuilder('a')
      .where('a.company_id = :companyId', { companyId: this.scope(companyId) })
      .orderBy('a.created_at', 'DESC');
    if (filter.status) qb.andWhere('a.status = :status', { status: filter.status });
    if (filter.type) qb.andWhere('a.type = :type', { type: filter.type });
    return qb.getMany();
  }

  async hasPendingHire(agentId: string): Promise<boolean> {
    const rows = await this.db.query(`SELECT 1 FROM approvals WHERE agent_id = $1 AND type = 'hire_agent' AND status = 'pending'`, [
      agentId,
    ]);
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

  // The hire decision moves the hired agent (the agents module imports this one, so it cannot be
  // asked here without a module cycle): writes agents and agent_api_keys (owned by agents).

  /** An approved hire: its pending_approval agent becomes idle (a paused hire stays paused). */
  async activateHiredAgent(companyId: string, agentId: string): Promise<void> {
    // writes agents (owned by agents)
    await this.db.query(
      `UPDATE agents SET status = 'idle', updated_at = now() WHERE id = $1 AND company_id = $2 AND status = 'pending_approval'`,
      [agentId, this.scope(companyId)],
    );
  }

  /** A rejected hire: its agent is terminated; returns whether it was not terminated already. */
  async terminateHiredAgent(companyId: string, agentId: string): Promise<boolean> {
    // writes agents (owned by agents)
    const rows = await returningRows<{ id: string }>(
      this.db,
      `UPDATE agents SET status = 'terminated', terminated_at = now(), updated_at = now()
          WHERE id = $1 AND company_id = $2 AND status <> 'terminated' RETURNING id`,
      [agentId, this.scope(companyId)],
    );
    return rows.length > 0;
  }

  /** Every live key of the agent is revoked. */
  async revokeAgentKeys(agentId: string): Promise<void> {
    // writes agent_api_keys (owned by agents)
    await this.db.query(`UPDATE agent_api_keys SET revoked_at = now() WHERE agent_id = $1 AND revoked_at IS NULL`, [agentId]);
  }
}
