import { Injectable } from '@nestjs/common';
import type { Actor } from '../../common/auth/actor';
import { CompanyAccessService } from '../../common/auth/company-access.service';
import { notFound, unprocessable } from '../../common/errors/domain-error';
import { isUuid } from '../../common/http/uuid';
import { Db } from '../../database/db.service';
import { assertAgentOfCompany, lockCompanyGoals } from './company-references';
import { CreateGoalDto, GoalResponseDto, UpdateGoalDto } from './dto/goal.dto';
import { GoalEntity } from './goal.entity';

export function toGoalResponse(g: GoalEntity): GoalResponseDto {
  return {
    id: g.id,
    companyId: g.companyId,
    title: g.title,
    description: g.description,
    level: g.level,
    status: g.status,
    parentId: g.parentId,
    ownerAgentId: g.ownerAgentId,
    isCompanyDefault: g.isCompanyDefault,
    createdAt: g.createdAt.toISOString(),
    updatedAt: g.updatedAt.toISOString(),
  };
}

@Injectable()
export class GoalsService {
  constructor(
    private readonly db: Db,
    private readonly access: CompanyAccessService,
  ) {}

  private get repo() {
    return this.db.repo(GoalEntity);
  }

  async list(companyId: string): Promise<GoalResponseDto[]> {
    const rows = await this.repo.find({ where: { companyId }, order: { createdAt: 'ASC', id: 'ASC' } });
    return rows.map(toGoalResponse);
  }

  /** Loads a goal the caller may see: 404 unknown, 403 another company. */
  async getAccessible(actor: Actor, goalId: string, lock = false): Promise<GoalEntity> {
    if (!isUuid(goalId)) throw notFound('Goal');
    const qb = this.repo.createQueryBuilder('g').where('g.id = :goalId', { goalId });
    if (lock) qb.setLock('pessimistic_write');
    const goal = await qb.getOne();
    if (!goal) throw notFound('Goal');
    await this.access.assertAccessToKnownCompany(actor, goal.companyId);
    return goal;
  }

  async get(actor: Actor, goalId: string): Promise<GoalResponseDto> {
    return toGoalResponse(await this.getAccessible(actor, goalId));
  }

  /**
   * The company default goal (issue goal precedence when an issue has no goal and no project):
   * the goal flagged `isCompanyDefault`, else the oldest goal of level `company`, else none.
   */
  async findCompanyDefault(companyId: string): Promise<GoalEntity | null> {
    return this.repo
      .createQueryBuilder('g')
      .where('g.company_id = :companyId', { companyId })
      .andWhere(`(g.is_company_default OR g.level = 'company')`)
      .orderBy('g.is_company_default', 'DESC')
      .addOrderBy('g.created_at', 'ASC')
      .addOrderBy('g.id', 'ASC')
      .getOne();
  }

  async getCompanyDefault(companyId: string): Promise<GoalResponseDto> {
    const goal = await this.findCompanyDefault(companyId);
    if (!goal) throw notFound('Company default goal');
    return toGoalResponse(goal);
  }

  async create(companyId: string, dto: CreateGoalDto): Promise<GoalResponseDto> {
    await lockCompanyGoals(this.db, companyId);
    if (dto.parentId) await this.assertParent(companyId, null, dto.parentId);
    if (dto.ownerAgentId) await assertAgentOfCompany(this.db, companyId, dto.ownerAgentId, 'ownerAgentId');
    if (dto.isCompanyDefault) await this.clearDefault(companyId);
    const goal = await this.repo.save(
      this.repo.create({
        companyId,
        title: dto.title.trim(),
        description: dto.description ?? null,
        level: dto.level ?? 'task',
        status: dto.status ?? 'planned',
        parentId: dto.parentId ?? null,
        ownerAgentId: dto.ownerAgentId ?? null,
        isCompanyDefault: dto.isCompanyDefault ?? false,
      }),
    );
    return toGoalResponse(await this.repo.findOneByOrFail({ id: goal.id }));
  }

  /** Omitted fields stay unchanged. */
  async update(actor: Actor, goalId: string, dto: UpdateGoalDto): Promise<GoalResponseDto> {
    const found = await this.getAccessible(actor, goalId);
    await lockCompanyGoals(this.db, found.companyId);
    const goal = await this.getAccessible(actor, goalId, true);
    if (dto.parentId !== undefined && dto.parentId !== goal.parentId) {
      if (dto.parentId !== null) await this.assertParent(goal.companyId, goal.id, dto.parentId);
      goal.parentId = dto.parentId;
    }
    if (dto.ownerAgentId !== undefined && dto.ownerAgentId !== goal.ownerAgentId) {
      if (dto.ownerAgentId !== null) await assertAgentOfCompany(this.db, goal.companyId, dto.ownerAgentId, 'ownerAgentId');
      goal.ownerAgentId = dto.ownerAgentId;
    }
    if (dto.isCompanyDefault === true && !goal.isCompanyDefault) await this.clearDefault(goal.companyId);
    if (dto.isCompanyDefault !== undefined) goal.isCompanyDefault = dto.isCompanyDefault;
    if (dto.title !== undefined) goal.title = dto.title.trim();
    if (dto.description !== undefined) goal.description = dto.description;
    if (dto.level !== undefined) goal.level = dto.level;
    if (dto.status !== undefined) goal.status = dto.status;
    await this.repo.save(goal);
    return toGoalResponse(await this.repo.findOneByOrFail({ id: goal.id }));
  }

  /**
   * Returns the deleted row. Child goals move up to the deleted goal's parent (the tree stays
   * connected); linked projects lose the link and their legacy `goalId` follows their next
   * linked goal.
   */
  async remove(actor: Actor, goalId: string): Promise<GoalResponseDto> {
    const found = await this.getAccessible(actor, goalId);
    await lockCompanyGoals(this.db, found.companyId);
    const goal = await this.getAccessible(actor, goalId, true);
    const before = toGoalResponse(goal);
    await this.db.query(`UPDATE goals SET parent_id = $2, updated_at = now() WHERE parent_id = $1`, [goal.id, goal.parentId]);
    const linked = await this.db.query<{ project_id: string }>(`SELECT project_id FROM project_goals WHERE goal_id = $1`, [goal.id]);
    await this.repo.delete({ id: goal.id });
    if (linked.length) {
      await this.db.query(
        `UPDATE projects p
            SET goal_id = (SELECT pg.goal_id FROM project_goals pg WHERE pg.project_id = p.id ORDER BY pg.position, pg.goal_id LIMIT 1),
                updated_at = now()
          WHERE p.id = ANY($1::uuid[])`,
        [linked.map((r) => r.project_id)],
      );
    }
    return before;
  }

  /** The parent must be a goal of the company and must not be the goal itself or one of its descendants. */
  private async assertParent(companyId: string, goalId: string | null, parentId: string): Promise<void> {
    const parent = await this.repo.findOne({ where: { id: parentId, companyId } });
    if (!parent) throw unprocessable('parentId must reference a goal of this company', 'invalid_reference', { field: 'parentId' });
    if (!goalId) return;
    const rows = await this.db.query(
      `WITH RECURSIVE up(id, parent_id, depth) AS (
         SELECT id, parent_id, 0 FROM goals WHERE id = $1
         UNION ALL
         SELECT g.id, g.parent_id, up.depth + 1 FROM goals g JOIN up ON g.id = up.parent_id WHERE up.depth < 1000
       )
       SELECT 1 FROM up WHERE id = $2 LIMIT 1`,
      [parentId, goalId],
    );
    if (rows.length) throw unprocessable('parentId would create a cycle in the goal tree', 'goal_cycle', { field: 'parentId' });
  }

  private async clearDefault(companyId: string): Promise<void> {
    await this.db.query(`UPDATE goals SET is_company_default = false, updated_at = now() WHERE company_id = $1 AND is_company_default`, [
      companyId,
    ]);
  }
}
