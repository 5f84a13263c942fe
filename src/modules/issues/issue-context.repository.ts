import { Injectable } from '@nestjs/common';
import { CompanyScopedRepository } from '../../database/company-scoped.repository';
import { Db } from '../../database/db.service';

export interface ProjectRow {
  id: string;
  name: string;
  url_key: string;
  status: string;
  goal_id: string | null;
  color: string | null;
  paused_at: Date | null;
  archived_at: Date | null;
}

export interface GoalRow {
  id: string;
  title: string;
  level: string;
  status: string;
  parent_id: string | null;
}

const PROJECT_COLUMNS = 'id, name, url_key, status, goal_id, color, paused_at, archived_at';

/**
 * The projects and goals an issue names, as issue rules and the issue detail page read them
 * (projects and goals are owned by their modules, which sit above issues in the import graph;
 * these reads are listed in FOREIGN_READS).
 */
@Injectable()
export class IssueContextRepository extends CompanyScopedRepository {
  constructor(db: Db) {
    super(db);
  }

  /** When the project of the company was paused (null when active); undefined for an unknown project. */
  async projectPause(companyId: string, projectId: string): Promise<{ paused_at: Date | null } | undefined> {
    const p = await this.row<{ paused_at: Date | null }>(companyId, `SELECT paused_at FROM projects WHERE company_id = $1 AND id = $2`, [
      projectId,
    ]);
    return p ?? undefined;
  }

  /** Whether a project or goal of that id belongs to the company. */
  async existsInCompany(table: 'projects' | 'goals', companyId: string, id: string): Promise<boolean> {
    const rows =
      table === 'projects'
        ? await this.rows(companyId, `SELECT 1 FROM projects WHERE company_id = $1 AND id = $2`, [id])
        : await this.rows(companyId, `SELECT 1 FROM goals WHERE company_id = $1 AND id = $2`, [id]);
    return rows.length > 0;
  }

  /** A project of the company, for the issue detail page. */
  project(companyId: string, projectId: string): Promise<ProjectRow | null> {
    return this.row<ProjectRow>(companyId, `SELECT ${PROJECT_COLUMNS} FROM projects WHERE company_id = $1 AND id = $2`, [projectId]);
  }

  /** Projects of the company among `ids`. */
  mentionedProjects(companyId: string, ids: string[]): Promise<ProjectRow[]> {
    return this.rows<ProjectRow>(companyId, `SELECT ${PROJECT_COLUMNS} FROM projects WHERE company_id = $1 AND id = ANY($2::uuid[])`, [
      ids,
    ]);
  }

  /** A goal of the company, for the issue detail page. */
  goal(companyId: string, goalId: string): Promise<GoalRow | null> {
    return this.row<GoalRow>(companyId, `SELECT id, title, level, status, parent_id FROM goals WHERE company_id = $1 AND id = $2`, [
      goalId,
    ]);
  }

  /** The company's default goal: the flagged one when `flagged` (the column exists), else the oldest company-level goal. */
  companyDefaultGoal(companyId: string, flagged: boolean): Promise<GoalRow | null> {
    const preferFlag = flagged ? 'is_company_default DESC,' : '';
    const where = preferFlag ? `(is_company_default OR level = 'company')` : `level = 'company'`;
    return this.row<GoalRow>(
      companyId,
      `SELECT id, title, level, status, parent_id FROM goals WHERE company_id = $1 AND ${where} ORDER BY ${preferFlag} created_at, id LIMIT 1`,
    );
  }

  /** `goals.is_company_default` is added by the goals module; whether this database has it. */
  async hasDefaultGoalColumn(): Promise<boolean> {
    const r = await this.unscoped(
      'a schema question (information_schema), about no company',
      `SELECT 1 FROM information_schema.columns WHERE table_name = 'goals' AND column_name = 'is_company_default'`,
    );
    return r.length > 0;
  }
}
