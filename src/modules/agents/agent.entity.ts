import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';

export type AgentStatus = 'active' | 'paused' | 'idle' | 'running' | 'error' | 'pending_approval' | 'terminated';

@Entity('agents')
export class AgentEntity {
  @PrimaryGeneratedColumn('uuid') id: string;
  @Column('uuid') companyId: string;
  @Column('text') name: string;
  @Column('text') urlKey: string;
  @Column('text') role: string;
  @Column('text', { nullable: true }) title: string | null;
  @Column('text') capabilities: string;
  @Column('uuid', { nullable: true }) reportsTo: string | null;
  @Column('text') adapterType: string;
  @Column('jsonb') adapterConfig: Record<string, unknown>;
  @Column('jsonb') runtimeConfig: Record<string, unknown>;
  @Column('integer') budgetMonthlyCents: number;
  @Column('integer') spentMonthlyCents: number;
  @Column('text') status: AgentStatus;
  @Column('text', { nullable: true }) pauseReason: string | null;
  @Column('jsonb') permissions: Record<string, unknown>;
  @Column('jsonb') metadata: Record<string, unknown>;
  /** issues that led to the hire (POST agent-hires sourceIssueId/sourceIssueIds) */
  @Column('jsonb') sourceIssueIds: string[];
  @Column('timestamptz', { nullable: true }) terminatedAt: Date | null;
  @CreateDateColumn({ type: 'timestamptz' }) createdAt: Date;
  @UpdateDateColumn({ type: 'timestamptz' }) updatedAt: Date;
}
