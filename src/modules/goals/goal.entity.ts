import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';

export const GOAL_LEVELS = ['company', 'team', 'agent', 'task'] as const;
export const GOAL_STATUSES = ['planned', 'active', 'achieved', 'cancelled'] as const;
export type GoalLevel = (typeof GOAL_LEVELS)[number];
export type GoalStatus = (typeof GOAL_STATUSES)[number];

@Entity('goals')
export class GoalEntity {
  @PrimaryGeneratedColumn('uuid') id: string;
  @Column('uuid') companyId: string;
  @Column('text') title: string;
  @Column('text', { nullable: true }) description: string | null;
  @Column('text') level: GoalLevel;
  @Column('text') status: GoalStatus;
  @Column('uuid', { nullable: true }) parentId: string | null;
  @Column('uuid', { nullable: true }) ownerAgentId: string | null;
  /** the company default goal (issue goal precedence); at most one per company */
  @Column('boolean') isCompanyDefault: boolean;
  @CreateDateColumn({ type: 'timestamptz' }) createdAt: Date;
  @UpdateDateColumn({ type: 'timestamptz' }) updatedAt: Date;
}
