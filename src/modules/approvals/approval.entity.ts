import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';

export const APPROVAL_TYPES = ['hire_agent', 'agent_config_change', 'skill_change'] as const;
/** hire_agent: a hire waiting for the board; *_change: a suggested change, applied when approved */
export type ApprovalType = (typeof APPROVAL_TYPES)[number];
export type ApprovalStatus = 'pending' | 'approved' | 'rejected' | 'cancelled';

/** A board decision waiting on a request; hire approvals hold the requested agent configuration. */
@Entity('approvals')
export class ApprovalEntity {
  @PrimaryGeneratedColumn('uuid') id: string;
  @Column('uuid') companyId: string;
  @Column('text') type: ApprovalType;
  @Column('text') status: ApprovalStatus;
  @Column('uuid', { nullable: true }) agentId: string | null;
  /** the requested configuration snapshot */
  @Column('jsonb') payload: Record<string, unknown>;
  @Column('jsonb') sourceIssueIds: string[];
  @Column('text') requestedByActorType: 'user' | 'agent' | 'system';
  @Column('text') requestedByActorId: string;
  @Column('text', { nullable: true }) decisionNote: string | null;
  @Column('text', { nullable: true }) decidedByUserId: string | null;
  @Column('timestamptz', { nullable: true }) decidedAt: Date | null;
  @CreateDateColumn({ type: 'timestamptz' }) createdAt: Date;
  @UpdateDateColumn({ type: 'timestamptz' }) updatedAt: Date;
}
