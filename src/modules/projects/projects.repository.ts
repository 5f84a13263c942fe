import { Injectable } from '@nestjs/common';
import { In } from 'typeorm';
import { CompanyScopedRepository } from '../../database/company-scoped.repository';
import { Db } from '../../database/db.service';
import type { ProjectGoalSummaryDto } from './dto/project.dto';
import { ProjectEntity } from './project.entity';

/** The columns of a new project (the shortname is tried by the caller until one is free). */
export interface ProjectInsert {
  name: string;
  urlKey: string;
  description: string | null;
  status: string;
  leadAgentId: string | null;
  targetDate: string | null;
  color: string;
  env: Record<string, unknown>;
  executionWorkspacePolicy: Record<string, unknown> | null;
  archivedAt: string | null;
}

/** The projects tables: projects, project_goals. */
@Injectable()
export class ProjectsRepository extends CompanyScopedRepository {
  constructor(db: Db) {
    super(db);
  }

  private get repo() {
    return this.orm(ProjectEntity);
  }

  async listByCompany(companyId: string): Promise<ProjectEntity[]> {
    return this.ormIn(companyId, ProjectEntity).find({ order: { createdAt: 'ASC', id: 'ASC' } });
  }

  /** The company's project, or null. */
  async findInCompany(companyId: string, id: string): Promise<ProjectEntity | null> {
    return this.ormIn(companyId, ProjectEntity).findOneBy({ id });
  }

  /** A project known to exist (just written). */
  async getById(companyId: string, id: string): Promise<ProjectEntity> {
    return this.ormIn(companyId, ProjectEntity).findOneByOrFail({ id });
  }

  /** The project row locked for the rest of the transaction, or null. */
  async lock(companyId: string, id: string): Promise<ProjectEntity | null> {
    return this.ormIn(companyId, ProjectEntity).findOne({ where: { id }, lock: { mode: 'pessimistic_write' } });
  }

  async findByUrlKey(companyId: string, urlKey: string): Promise<ProjectEntity | null> {
    return this.ormIn(companyId, ProjectEntity).findOneBy({ urlKey });
  }

  /** Up to two projects with the shortname, in the given companies (undefined: any company). */
  async findByUrlKeyIn(urlKey: string, companyIds: string[] | undefined): Promise<ProjectEntity[]> {
    return this.unscopedOrm('a shortname looked up in the companies the caller may see (ids from its access check)', ProjectEntity).find({
      where: companyIds ? { urlKey, companyId: In(companyIds) } : { urlKey },
      take: 2,
    });
  }

  /** The new project's id, or undefined when the shortname is taken in the company. */
  async insert(companyId: string, p: ProjectInsert): Promise<string | undefined> {
    const rows = await this.rows<{ id: string }>(
      companyId,
      `INSERT INTO projects (company_id, name, url_key, description, status, lead_agent_id, target_date, color, env, execution_workspace_policy, archived_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
         ON CONFLICT (company_id, url_key) DO NOTHING RETURNING id`,
      [
        p.name,
        p.urlKey,
        p.description,
        p.status,
        p.leadAgentId,
        p.targetDate,
        p.color,
        JSON.stringify(p.env),
        p.executionWorkspacePolicy ? JSON.stringify(p.executionWorkspacePolicy) : null,
        p.archivedAt,
      ],
    );
    return rows[0]?.id;
  }

  /** Whether another project of the company has the shortname. */
  async urlKeyTaken(companyId: string, urlKey: string, exceptId: string): Promise<boolean> {
    const taken = await this.rows(companyId, `SELECT 1 FROM projects WHERE company_id = $1 AND url_key = $2 AND id <> $3`, [
      urlKey,
      exceptId,
    ]);
    return taken.length > 0;
  }

  async save(project: ProjectEntity): Promise<void> {
    await this.repo.save(project);
  }

  async delete(companyId: string, id: string): Promise<void> {
    await this.rows(companyId, `DELETE FROM projects WHERE company_id = $1 AND id = $2`, [id]);
  }

  async countByCompany(companyId: string): Promise<number> {
    const [{ count }] = await this.rows<{ count: number }>(companyId, `SELECT count(*)::int AS count FROM projects WHERE company_id = $1`);
    return count;
  }

  /** Replaces the linked goals (in order) and keeps the legacy `goal_id` equal to the first. */
  async setGoals(companyId: string, projectId: string, goalIds: string[]): Promise<void> {
    await this.rows(
      companyId,
      `DELETE FROM project_goals pg USING projects p WHERE p.company_id = $1 AND p.id = $2 AND pg.project_id = p.id`,
      [projectId],
    );
    if (goalIds.length) {
      await this.rows(
        companyId,
        `INSERT INTO project_goals (project_id, goal_id, position)
         SELECT p.id, g, t.n::int - 1 FROM projects p, unnest($3::uuid[]) WITH ORDINALITY AS t(g, n) WHERE p.company_id = $1 AND p.id = $2`,
        [projectId, goalIds],
      );
    }
    await this.rows(companyId, `UPDATE projects SET goal_id = $3, updated_at = now() WHERE company_id = $1 AND id = $2`, [
      projectId,
      goalIds[0] ?? null,
    ]);
  }

  // reads goals (owned by goals): the summaries of the linked goals, for the project pages
  async goalSummaries(companyId: string, projectIds: string[]): Promise<Array<ProjectGoalSummaryDto & { projectId: string }>> {
    return this.rows<ProjectGoalSummaryDto & { projectId: string }>(
      companyId,
      `SELECT pg.project_id AS "projectId", g.id, g.title, g.level, g.status
         FROM project_goals pg JOIN goals g ON g.id = pg.goal_id AND g.company_id = $1
        WHERE pg.project_id = ANY($2::uuid[]) ORDER BY pg.position, g.id`,
      [projectIds],
    );
  }

  // ---- what goals and budgets ask through the ports they declare (GoalProjectLinks, BudgetScopeOwners)

  /** The projects of the company linked to a goal. */
  async projectIdsOfGoal(companyId: string, goalId: string): Promise<string[]> {
    const rows = await this.rows<{ project_id: string }>(
      companyId,
      `SELECT pg.project_id FROM project_goals pg JOIN projects p ON p.id = pg.project_id AND p.company_id = $1 WHERE pg.goal_id = $2`,
      [goalId],
    );
    return rows.map((r) => r.project_id);
  }

  /** Points each project's legacy `goal_id` at its first remaining linked goal (after a goal deletion). */
  async resyncLegacyGoal(companyId: string, projectIds: string[]): Promise<void> {
    await this.rows(
      companyId,
      `UPDATE projects p
          SET goal_id = (SELECT pg.goal_id FROM project_goals pg WHERE pg.project_id = p.id ORDER BY pg.position, pg.goal_id LIMIT 1),
              updated_at = now()
        WHERE p.company_id = $1 AND p.id = ANY($2::uuid[])`,
      [projectIds],
    );
  }

  /** Pauses the project with reason `budget` unless it is paused already. */
  async pauseForBudget(companyId: string, projectId: string): Promise<void> {
    await this.rows(
      companyId,
      `UPDATE projects SET paused_at = now(), pause_reason = 'budget', updated_at = now() WHERE company_id = $1 AND id = $2 AND paused_at IS NULL`,
      [projectId],
    );
  }

  /** Resumes a project its budget paused; true when it did. */
  async resumeFromBudget(companyId: string, projectId: string): Promise<boolean> {
    const rows = await this.rows(
      companyId,
      `WITH u AS (UPDATE projects SET paused_at = NULL, pause_reason = NULL, updated_at = now()
        WHERE company_id = $1 AND id = $2 AND pause_reason = 'budget' RETURNING id) SELECT * FROM u`,
      [projectId],
    );
    return rows.length > 0;
  }
}
