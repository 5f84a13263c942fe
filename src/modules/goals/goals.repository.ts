import { Injectable } from '@nestjs/common';
import type { DeepPartial } from 'typeorm';
import { CompanyScopedRepository } from '../../database/company-scoped.repository';
import { Db } from '../../database/db.service';
import { GoalEntity } from './goal.entity';

/** The goals table (a deletion repairs its project links through GoalProjectLinks). */
@Injectable()
export class GoalsRepository extends CompanyScopedRepository {
  constructor(db: Db) {
    super(db);
  }

  private get repo() {
    return this.orm(GoalEntity);
  }

  /** All goals of the company, oldest first. */
  listByCompany(companyId: string): Promise<GoalEntity[]> {
    return this.ormIn(companyId, GoalEntity).find({ order: { createdAt: 'ASC', id: 'ASC' } });
  }

  /** A goal of the company, or null; `lock` takes a row lock for a change. */
  findInCompany(companyId: string, goalId: string, lock = false): Promise<GoalEntity | null> {
    return this.ormIn(companyId, GoalEntity).findOne({ where: { id: goalId }, lock: lock ? { mode: 'pessimistic_write' } : undefined });
  }

  /** The goal flagged `isCompanyDefault`, else the oldest goal of level `company`, else null. */
  findCompanyDefault(companyId: string): Promise<GoalEntity | null> {
    return this.ormIn(companyId, GoalEntity).findOne({
      where: [{ isCompanyDefault: true }, { level: 'company' }],
      order: { isCompanyDefault: 'DESC', createdAt: 'ASC', id: 'ASC' },
    });
  }

  /** Inserts a goal and reads it back (timestamps as stored). */
  async insert(fields: DeepPartial<GoalEntity>): Promise<GoalEntity> {
    this.scope(fields.companyId as string | undefined);
    const goal = await this.repo.save(this.repo.create(fields));
    return this.ormIn(goal.companyId, GoalEntity).findOneByOrFail({ id: goal.id });
  }

  /** Writes a loaded goal's changes and reads it back. */
  async save(goal: GoalEntity): Promise<GoalEntity> {
    await this.repo.save(goal);
    return this.ormIn(goal.companyId, GoalEntity).findOneByOrFail({ id: goal.id });
  }

  /** Whether `goalId` is `parentId` itself or one of its ancestors (a new parent there would close a cycle). */
  async isSelfOrAncestor(companyId: string, parentId: string, goalId: string): Promise<boolean> {
    const rows = await this.rows(
      companyId,
      `WITH RECURSIVE up(id, parent_id, depth) AS (
         SELECT id, parent_id, 0 FROM goals WHERE company_id = $1 AND id = $2
         UNION ALL
         SELECT g.id, g.parent_id, up.depth + 1 FROM goals g JOIN up ON g.id = up.parent_id WHERE g.company_id = $1 AND up.depth < 1000
       )
       SELECT 1 FROM up WHERE id = $3 LIMIT 1`,
      [parentId, goalId],
    );
    return rows.length > 0;
  }

  /** Drops the company default flag from every goal of the company. */
  async clearDefault(companyId: string): Promise<void> {
    await this.rows(
      companyId,
      `UPDATE goals SET is_company_default = false, updated_at = now() WHERE company_id = $1 AND is_company_default`,
    );
  }

  /** Moves the children of a goal up to `parentId`. */
  async reparentChildren(companyId: string, goalId: string, parentId: string | null): Promise<void> {
    await this.rows(companyId, `UPDATE goals SET parent_id = $3, updated_at = now() WHERE company_id = $1 AND parent_id = $2`, [
      goalId,
      parentId,
    ]);
  }

  async delete(companyId: string, goalId: string): Promise<void> {
    await this.rows(companyId, `DELETE FROM goals WHERE company_id = $1 AND id = $2`, [goalId]);
  }
}
