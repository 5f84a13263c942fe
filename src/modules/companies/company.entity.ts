import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';

export type CompanyStatus = 'active' | 'paused' | 'archived';

@Entity('companies')
export class CompanyEntity {
  @PrimaryGeneratedColumn('uuid') id: string;
  @Column('text') name: string;
  @Column('text', { nullable: true }) description: string | null;
  @Column('text') status: CompanyStatus;
  /** why the company is paused: `manual`, `budget`, … */
  @Column('text', { nullable: true }) pauseReason: string | null;
  @Column('text') issuePrefix: string;
  @Column('integer') issueCounter: number;
  @Column('integer') budgetMonthlyCents: number;
  @Column('integer') spentMonthlyCents: number;
  @Column('boolean') requireBoardApprovalForNewAgents: boolean;
  @Column('text', { nullable: true }) brandColor: string | null;
  @Column('uuid', { nullable: true }) logoAssetId: string | null;
  /** feedback-sharing consent: null = never set */
  @Column('boolean', { nullable: true }) feedbackSharingEnabled: boolean | null;
  @Column('timestamptz', { nullable: true }) feedbackSharingConsentedAt: Date | null;
  @Column('text', { nullable: true }) feedbackSharingConsentedByUserId: string | null;
  @CreateDateColumn({ type: 'timestamptz' }) createdAt: Date;
  @UpdateDateColumn({ type: 'timestamptz' }) updatedAt: Date;
}
