import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';

export const PROJECT_STATUSES = ['backlog', 'planned', 'in_progress', 'completed', 'cancelled'] as const;
export type ProjectStatus = (typeof PROJECT_STATUSES)[number];

@Entity('projects')
export class ProjectEntity {
  @PrimaryGeneratedColumn('uuid') id: string;
  @Column('uuid') companyId: string;
  @Column('text') name: string;
  /** shortname, unique per company, derived from the name */
  @Column('text') urlKey: string;
  @Column('text', { nullable: true }) description: string | null;
  @Column('text') status: ProjectStatus;
  /** legacy: always the first linked goal (project_goals position 0) */
  @Column('uuid', { nullable: true }) goalId: string | null;
  @Column('uuid', { nullable: true }) leadAgentId: string | null;
  /** `YYYY-MM-DD` */
  @Column('date', { nullable: true }) targetDate: string | null;
  @Column('text', { nullable: true }) color: string | null;
  @Column('jsonb') env: Record<string, unknown>;
  @Column('jsonb', { nullable: true }) executionWorkspacePolicy: Record<string, unknown> | null;
  /** set by a budget hard stop */
  @Column('timestamptz', { nullable: true }) pausedAt: Date | null;
  @Column('text', { nullable: true }) pauseReason: string | null;
  @Column('timestamptz', { nullable: true }) archivedAt: Date | null;
  @CreateDateColumn({ type: 'timestamptz' }) createdAt: Date;
  @UpdateDateColumn({ type: 'timestamptz' }) updatedAt: Date;
}
