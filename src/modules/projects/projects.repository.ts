import { Injectable } from '@nestjs/common';
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
    return this.db.repo(ProjectEntity);
  }

  async listByCompany(companyId: string): Promise<ProjectEntity[]> {
    return this.repo.find({ where: { companyId: this.scope(companyId) }, order: { createdAt: 'ASC', id: 'ASC' } });
  }

  /** A project of any company, or null (routes address projects by id; access is checked after). */
  async findById(id: string): Promise<ProjectEntity | null> {
    return this.repo.findOne({ where: { id } });
  }

  /** A project known to exist (just written). */
  async getById(id: string): Promise<ProjectEntity> {
    return this.repo.findOneByOrFail({ id });
  }

  /** The project row locked for the rest of the transaction, or null. */
  async lock(id: string): Promise<ProjectEntity | null> {
    return this.repo.createQueryBuilder('p').setLock('pessimistic_write').where('p.id = :id', { id }).getOne();
  }

  async findByUrlKey(companyId: string, urlKey: string): Promise<ProjectEntity | null> {
    return this.repo.findOne({ where: { companyId: this.scope(companyId), urlKey } });
  }

  /** Up to two projects with the shortname, in the given companies (undefined: any company). */
  async findByUrlKeyIn(urlKey: string, companyIds: string[] | undefined): Promise<ProjectEntity[]> {
    const qb = this.repo.createQueryBuilder('p').where('p.url_key = :urlKey', { urlKey }).limit(2);
    if (companyIds) qb.andWhere('p.company_id = ANY(:ids)', { ids: companyIds });
    return qb.getMany();
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

  async delete(id: string): Promise<void> {
    await this.repo.delete({ id });
  }

  async countByCompany(companyId: string): Promise<number> {
    const [{ count }] = await this.rows<{ count: number }>(companyId, `SELECT count(*)::int AS count FROM projects WHERE company_id = $1`);
    return count;
  }

  /** Replaces the linked goals (in order) and keeps the legacy `goal_id` equal to the first. */
  async setGoals(projectId: string, goalIds: string[]): Promise<void> {
    await this.db.query(`DELETE FROM project_goals WHERE project_id = $1`, [projectId]);
    if (goalIds.length) {
      await this.db.query(
        `INSERT INTO project_goals (project_id, goal_id, position) SELECT $1, g, p::int - 1 FROM unnest($2::uuid[]) WITH ORDINALITY AS t(g, p)`,
        [projectId, goalIds],
      );
    }
    await this.db.query(`UPDATE projects SET goal_id = $2, updated_at = now() WHERE id = $1`, [projectId, goalIds[0] ?? null]);
  }

  // reads goals (owned by goals): the summaries of the linked goals, for the project pages
  async goalSummaries(projectIds: string[]): Promise<Array<ProjectGoalSummaryDto & { project_id: string }>> {
    return this.db.query<ProjectGoalSummaryDto & { project_id: string }>(
      `SELECT pg.project_id, g.id, g.title, g.level, g.status
         FROM project_goals pg JOIN goals g ON g.id = pg.goal_id
        WHERE pg.project_id = ANY($1::uuid[]) ORDER BY pg.position, g.id`,
      [projectIds],
    );
  }
}
