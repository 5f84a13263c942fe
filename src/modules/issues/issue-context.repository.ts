import { Injectable } from '@nestjs/common';
import { CompanyScopedRepository } from '../../database/company-scoped.repository';
import { Db } from '../../database/db.service';
import { recordColumns } from '../../database/row-mapping';

/** A project an issue names, as issue rules and the issue detail page read it. */
export interface IssueProjectRecord {
  id: string;
  name: string;
  urlKey: string;
  status: string;
  goalId: string | null;
  color: string | null;
  pausedAt: Date | null;
  archivedAt: Date | null;
}

/** A goal an issue (or its project, or its company) names. */
export interface IssueGoalRecord {
  id: string;
  title: string;
  level: string;
  status: string;
  parentId: string | null;
}

const PROJECT_COLUMNS = recordColumns('id, name, url_key, status, goal_id, color, paused_at, archived_at');
const GOAL_COLUMNS = recordColumns('id, title, level, status, parent_id');

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
  async projectPause(companyId: string, projectId: string): Promise<{ pausedAt: Date | null } | undefined> {
    const p = await this.row<{ pausedAt: Date | null }>(
      companyId,
      `SELECT paused_at AS "pausedAt" FROM projects WHERE company_id = $1 AND id = $2`,
      [projectId],
    );
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
  project(companyId: string, projectId: string): Promise<IssueProjectRecord | null> {
    return this.row<IssueProjectRecord>(companyId, `SELECT ${PROJECT_COLUMNS} FROM projects WHERE company_id = $1 AND id = $2`, [
      projectId,
    ]);
  }

  /** Projects of the company among `ids`. */
  mentionedProjects(companyId: string, ids: string[]): Promise<IssueProjectRecord[]> {
    return this.rows<IssueProjectRecord>(
      companyId,
      `SELECT ${PROJECT_COLUMNS} FROM projects WHERE company_id = $1 AND id = ANY($2::uuid[])`,
      [ids],
    );
  }

  /** A goal of the company, for the issue detail page. */
  goal(companyId: string, goalId: string): Promise<IssueGoalRecord | null> {
    return this.row<IssueGoalRecord>(companyId, `SELECT ${GOAL_COLUMNS} FROM goals WHERE company_id = $1 AND id = $2`, [goalId]);
  }

  /** The company's default goal: the flagged one when `flagged` (the column exists), else the oldest company-level goal. */
  companyDefaultGoal(companyId: string, flagged: boolean): Promise<IssueGoalRecord | null> {
    const preferFlag = flagged ? 'is_company_default DESC,' : '';
    const where = preferFlag ? `(is_company_default OR level = 'company')` : `level = 'company'`;
    return this.row<IssueGoalRecord>(
      companyId,
      `SELECT ${GOAL_COLUMNS} FROM goals WHERE company_id = $1 AND ${where} ORDER BY ${preferFlag} created_at, id LIMIT 1`,
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
