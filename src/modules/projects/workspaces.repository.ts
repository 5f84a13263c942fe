import { Injectable } from '@nestjs/common';
import { DeepPartial, In } from 'typeorm';
import { CompanyScopedRepository } from '../../database/company-scoped.repository';
import { Db } from '../../database/db.service';
import { ProjectWorkspaceEntity } from './project-workspace.entity';

/**
 * The project_workspaces table. Workspaces are addressed through their project, which the caller
 * has resolved (and checked access to) first; runtime bookkeeping addresses them by id.
 */
@Injectable()
export class WorkspacesRepository extends CompanyScopedRepository {
  constructor(db: Db) {
    super(db);
  }

  private get repo() {
    return this.orm(ProjectWorkspaceEntity);
  }

  /** A new (unsaved) workspace entity. */
  build(fields: DeepPartial<ProjectWorkspaceEntity>): ProjectWorkspaceEntity {
    return this.repo.create(fields);
  }

  async listByProjects(companyId: string, projectIds: string[]): Promise<ProjectWorkspaceEntity[]> {
    return this.ormIn(companyId, ProjectWorkspaceEntity).find({
      where: { projectId: In(projectIds) },
      order: { createdAt: 'ASC', id: 'ASC' },
    });
  }

  /** The workspace of the project, or null; `lock` locks it for the rest of the transaction. */
  /** The repositories the company's project workspaces name, one row per URL (its first workspace). */
  companyRepositories(companyId: string): Promise<Array<{ repoUrl: string; id: string; projectId: string; repoRef: string | null }>> {
    return this.rows(
      companyId,
      `SELECT DISTINCT ON (repo_url) repo_url AS "repoUrl", id, project_id AS "projectId", repo_ref AS "repoRef" FROM project_workspaces
        WHERE company_id = $1 AND repo_url IS NOT NULL ORDER BY repo_url, created_at, id`,
    );
  }

  async findInProject(companyId: string, projectId: string, workspaceId: string, lock: boolean): Promise<ProjectWorkspaceEntity | null> {
    return this.ormIn(companyId, ProjectWorkspaceEntity).findOne({
      where: { id: workspaceId, projectId },
      lock: lock ? { mode: 'pessimistic_write' } : undefined,
    });
  }

  /** A workspace known to exist (just written). */
  async getById(companyId: string, id: string): Promise<ProjectWorkspaceEntity> {
    return this.ormIn(companyId, ProjectWorkspaceEntity).findOneByOrFail({ id });
  }

  async countInProject(companyId: string, projectId: string): Promise<number> {
    const [{ count }] = await this.rows<{ count: number }>(
      companyId,
      `SELECT count(*)::int AS count FROM project_workspaces WHERE company_id = $1 AND project_id = $2`,
      [projectId],
    );
    return count;
  }

  async save(w: ProjectWorkspaceEntity): Promise<ProjectWorkspaceEntity> {
    return this.repo.save(w);
  }

  async delete(companyId: string, id: string): Promise<void> {
    await this.rows(companyId, `DELETE FROM project_workspaces WHERE company_id = $1 AND id = $2`, [id]);
  }

  async makePrimary(companyId: string, id: string): Promise<void> {
    await this.rows(companyId, `UPDATE project_workspaces SET is_primary = true, updated_at = now() WHERE company_id = $1 AND id = $2`, [
      id,
    ]);
  }

  async clearPrimary(companyId: string, projectId: string): Promise<void> {
    await this.rows(
      companyId,
      `UPDATE project_workspaces SET is_primary = false, updated_at = now() WHERE company_id = $1 AND project_id = $2 AND is_primary`,
      [projectId],
    );
  }

  /** The oldest workspace of the project other than the given one. */
  async oldestOther(companyId: string, projectId: string, workspaceId: string): Promise<string | undefined> {
    const rows = await this.rows<{ id: string }>(
      companyId,
      `SELECT id FROM project_workspaces WHERE company_id = $1 AND project_id = $2 AND id <> $3 ORDER BY created_at, id LIMIT 1`,
      [projectId, workspaceId],
    );
    return rows[0]?.id;
  }

  // ---- runtime bookkeeping

  /** Workspaces whose runtime process an instance owns (every company: start-up reconciliation). */
  async ownedBy(ownerId: string): Promise<ProjectWorkspaceEntity[]> {
    return this.unscopedOrm("start-up: this instance's runtime processes, in every company", ProjectWorkspaceEntity).find({
      where: { runtimeOwnerId: ownerId },
    });
  }

  async clearRuntimePid(companyId: string, id: string): Promise<void> {
    await this.rows(companyId, `UPDATE project_workspaces SET runtime_pid = NULL, updated_at = now() WHERE company_id = $1 AND id = $2`, [
      id,
    ]);
  }

  /** Shutdown: the instance's processes are gone (outside any transaction). */
  async releaseRuntimes(ids: string[], ownerId: string): Promise<void> {
    await this.unscoped(
      "shutdown: this instance's runtime processes, in every company",
      `UPDATE project_workspaces SET runtime_pid = NULL, updated_at = now() WHERE id = ANY($1::uuid[]) AND runtime_owner_id = $2`,
      [ids, ownerId],
      { detached: true },
    );
  }

  /** A process that exited on its own (outside any transaction: the exit may fire inside the request that spawned it). */
  async recordUnexpectedExit(workspaceId: string, pid: number, code: number | null): Promise<void> {
    await this.unscoped(
      'a runtime process exit names the workspace (and pid) this instance spawned',
      `UPDATE project_workspaces SET runtime_pid = NULL, runtime_exit_code = $3, runtime_exited_at = now(), updated_at = now()
          WHERE id = $1 AND runtime_pid = $2`,
      [workspaceId, pid, code],
      { detached: true },
    );
  }
}
