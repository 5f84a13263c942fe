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
    return this.repo.find({ where: { companyId: this.scope(companyId) }, order: { createdAt: 'ASC', id: 'ASC' } });
  }

  /** A goal by id, whatever its company (the caller checks access); `lock` takes a row lock for a change. */
  findById(goalId: string, lock = false): Promise<GoalEntity | null> {
    const qb = this.repo.createQueryBuilder('g').where('g.id = :goalId', { goalId });
    if (lock) qb.setLock('pessimistic_write');
    return qb.getOne();
  }

  /** A goal of the company, or null. */
  findInCompany(companyId: string, goalId: string): Promise<GoalEntity | null> {
    return this.repo.findOne({ where: { id: goalId, companyId: this.scope(companyId) } });
  }

  /** The goal flagged `isCompanyDefault`, else the oldest goal of level `company`, else null. */
  findCompanyDefault(companyId: string): Promise<GoalEntity | null> {
    return this.repo
      .createQueryBuilder('g')
      .where('g.company_id = :companyId', { companyId: this.scope(companyId) })
      .andWhere(`(g.is_company_default OR g.level = 'company')`)
      .orderBy('g.is_company_default', 'DESC')
      .addOrderBy('g.created_at', 'ASC')
      .addOrderBy('g.id', 'ASC')
      .getOne();
  }

  /** Inserts a goal and reads it back (timestamps as stored). */
  async insert(fields: DeepPartial<GoalEntity>): Promise<GoalEntity> {
    this.scope(fields.companyId as string | undefined);
    const goal = await this.repo.save(this.repo.create(fields));
    return this.repo.findOneByOrFail({ id: goal.id, companyId: goal.companyId });
  }

  /** Writes a loaded goal's changes and reads it back. */
  async save(goal: GoalEntity): Promise<GoalEntity> {
    await this.repo.save(goal);
    return this.repo.findOneByOrFail({ id: goal.id, companyId: this.scope(goal.companyId) });
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
