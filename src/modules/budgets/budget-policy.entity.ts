import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';

export type BudgetScopeType = 'company' | 'agent' | 'project';

@Entity('budget_policies')
export class BudgetPolicyEntity {
  @PrimaryGeneratedColumn('uuid') id: string;
  @Column('uuid') companyId: string;
  @Column('text') scopeType: BudgetScopeType;
  @Column('uuid') scopeId: string;
  @Column('text') metric: string;
  @Column('text') windowKind: string;
  /** ceiling in the metric's unit (cents for billed_cents) */
  @Column('integer') amount: number;
  @Column('integer') warnPercent: number;
  @Column('boolean') hardStopEnabled: boolean;
  @Column('boolean') notifyEnabled: boolean;
  @Column('boolean') isActive: boolean;
  @CreateDateColumn({ type: 'timestamptz' }) createdAt: Date;
  @UpdateDateColumn({ type: 'timestamptz' }) updatedAt: Date;
}
