import { Injectable } from '@nestjs/common';
import { notFound } from '../../common/errors/domain-error';
import { isUuid } from '../../common/http/uuid';
import { CompanyReferences } from './company-references';
import { GoalProjectLinks } from './goal-project-links.port';
import { CreateGoalDto, GoalResponseDto, UpdateGoalDto } from './dto/goal.dto';
import { GoalEntity } from './goal.entity';
import { goalError } from './goals.errors';
import { GoalsRepository } from './goals.repository';

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
    private readonly refs: CompanyReferences,
    private readonly projectLinks: GoalProjectLinks,
    private readonly goals: GoalsRepository,
  ) {}

  async list(companyId: string): Promise<GoalResponseDto[]> {
    const rows = await this.goals.listByCompany(companyId);
    return rows.map(toGoalResponse);
  }

  /**
   * The goal of the route's company (resolved and checked by the guard; undefined when the path
   * names no goal it knows): 404 unknown or another company's.
   */
  async getInCompany(companyId: string | undefined, goalId: string, lock = false): Promise<GoalEntity> {
    const goal = companyId && isUuid(goalId) ? await this.goals.findInCompany(companyId, goalId, lock) : null;
    if (!goal) throw notFound('Goal');
    return goal;
  }

  async get(companyId: string | undefined, goalId: string): Promise<GoalResponseDto> {
    return toGoalResponse(await this.getInCompany(companyId, goalId));
  }

  /**
   * The company default goal (issue goal precedence when an issue has no goal and no project):
   * the goal flagged `isCompanyDefault`, else the oldest goal of level `company`, else none.
   */
  async findCompanyDefault(companyId: string): Promise<GoalEntity | null> {
    return this.goals.findCompanyDefault(companyId);
  }

  async getCompanyDefault(companyId: string): Promise<GoalResponseDto> {
    const goal = await this.findCompanyDefault(companyId);
    if (!goal) throw notFound('Company default goal');
    return toGoalResponse(goal);
  }

  async create(companyId: string, dto: CreateGoalDto): Promise<GoalResponseDto> {
    await this.refs.lockCompanyGoals(companyId);
    if (dto.parentId) await this.assertParent(companyId, null, dto.parentId);
    if (dto.ownerAgentId) await this.refs.assertAgentOfCompany(companyId, dto.ownerAgentId, 'ownerAgentId');
    if (dto.isCompanyDefault) await this.goals.clearDefault(companyId);
    const goal = await this.goals.insert({
      companyId,
      title: dto.title.trim(),
      description: dto.description ?? null,
      level: dto.level ?? 'task',
      status: dto.status ?? 'planned',
      parentId: dto.parentId ?? null,
      ownerAgentId: dto.ownerAgentId ?? null,
      isCompanyDefault: dto.isCompanyDefault ?? false,
    });
    return toGoalResponse(goal);
  }

  /** Omitted fields stay unchanged. */
  async update(companyId: string | undefined, goalId: string, dto: UpdateGoalDto): Promise<GoalResponseDto> {
    const found = await this.getInCompany(companyId, goalId);
    await this.refs.lockCompanyGoals(found.companyId);
    const goal = await this.getInCompany(found.companyId, goalId, true);
    if (dto.parentId !== undefined && dto.parentId !== goal.parentId) {
      if (dto.parentId !== null) await this.assertParent(goal.companyId, goal.id, dto.parentId);
      goal.parentId = dto.parentId;
    }
    if (dto.ownerAgentId !== undefined && dto.ownerAgentId !== goal.ownerAgentId) {
      if (dto.ownerAgentId !== null) await this.refs.assertAgentOfCompany(goal.companyId, dto.ownerAgentId, 'ownerAgentId');
      goal.ownerAgentId = dto.ownerAgentId;
    }
    if (dto.isCompanyDefault === true && !goal.isCompanyDefault) await this.goals.clearDefault(goal.companyId);
    if (dto.isCompanyDefault !== undefined) goal.isCompanyDefault = dto.isCompanyDefault;
    if (dto.title !== undefined) goal.title = dto.title.trim();
    if (dto.description !== undefined) goal.description = dto.description;
    if (dto.level !== undefined) goal.level = dto.level;
    if (dto.status !== undefined) goal.status = dto.status;
    return toGoalResponse(await this.goals.save(goal));
  }

  /**
   * Returns the deleted row. Child goals move up to the deleted goal's parent (the tree stays
   * connected); linked projects lose the link and their legacy `goalId` follows their next
   * linked goal.
   */
  async remove(companyId: string | undefined, goalId: string): Promise<GoalResponseDto> {
    const found = await this.getInCompany(companyId, goalId);
    await this.refs.lockCompanyGoals(found.companyId);
    const goal = await this.getInCompany(found.companyId, goalId, true);
    const before = toGoalResponse(goal);
    await this.goals.reparentChildren(goal.companyId, goal.id, goal.parentId);
    const linked = await this.projectLinks.owner.projectIdsOfGoal(goal.companyId, goal.id);
    await this.goals.delete(goal.companyId, goal.id);
    if (linked.length) await this.projectLinks.owner.goalRemoved(goal.companyId, linked);
    return before;
  }

  /** The parent must be a goal of the company and must not be the goal itself or one of its descendants. */
  private async assertParent(companyId: string, goalId: string | null, parentId: string): Promise<void> {
    const parent = await this.goals.findInCompany(companyId, parentId);
    if (!parent) throw goalError('invalid_reference', 'parentId must reference a goal of this company', { field: 'parentId' });
    if (!goalId) return;
    if (await this.goals.isSelfOrAncestor(companyId, parentId, goalId))
      throw goalError('goal_cycle', 'parentId would create a cycle in the goal tree', { field: 'parentId' });
  }
}
