import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';

export const WORKSPACE_SOURCE_TYPES = ['local_path', 'git_repo', 'remote_managed', 'non_git_path'] as const;
export type WorkspaceSourceType = (typeof WORKSPACE_SOURCE_TYPES)[number];
export type DesiredState = 'running' | 'stopped';

export interface RuntimeHealthCheck {
  /** full URL, or a path on http://127.0.0.1:<port> */
  url?: string;
  path?: string;
  timeoutMs?: number;
  intervalMs?: number;
}

export interface RuntimeConfig {
  command: string;
  args?: string[];
  env?: Record<string, string>;
  port?: number;
  healthCheck?: RuntimeHealthCheck;
  stopTimeoutMs?: number;
}

@Entity('project_workspaces')
export class ProjectWorkspaceEntity {
  @PrimaryGeneratedColumn('uuid') id: string;
  @Column('uuid') companyId: string;
  @Column('uuid') projectId: string;
  @Column('text') name: string;
  @Column('text') sourceType: WorkspaceSourceType;
  @Column('text', { nullable: true }) cwd: string | null;
  @Column('text', { nullable: true }) repoUrl: string | null;
  @Column('text', { nullable: true }) repoRef: string | null;
  @Column('text', { nullable: true }) defaultRef: string | null;
  @Column('text', { nullable: true }) visibility: string | null;
  @Column('text', { nullable: true }) setupCommand: string | null;
  @Column('text', { nullable: true }) cleanupCommand: string | null;
  @Column('text', { nullable: true }) remoteProvider: string | null;
  @Column('text', { nullable: true }) remoteWorkspaceRef: string | null;
  @Column('text', { nullable: true }) sharedWorkspaceKey: string | null;
  @Column('jsonb') metadata: Record<string, unknown>;
  @Column('jsonb', { nullable: true }) runtimeConfig: RuntimeConfig | null;
  @Column('boolean') isPrimary: boolean;
  @Column('text') desiredState: DesiredState;
  /** the service instance that owns the runtime process */
  @Column('text', { nullable: true }) runtimeOwnerId: string | null;
  @Column('integer', { nullable: true }) runtimePid: number | null;
  @Column('timestamptz', { nullable: true }) runtimeStartedAt: Date | null;
  @Column('integer', { nullable: true }) runtimeExitCode: number | null;
  @Column('timestamptz', { nullable: true }) runtimeExitedAt: Date | null;
  @CreateDateColumn({ type: 'timestamptz' }) createdAt: Date;
  @UpdateDateColumn({ type: 'timestamptz' }) updatedAt: Date;
}
