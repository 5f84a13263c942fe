import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';

export type ActivityActorType = 'agent' | 'user' | 'system';

/** Append-only audit trail. Rows are inserted, never updated. */
@Entity('activity_log')
export class ActivityEntity {
  @PrimaryGeneratedColumn('uuid') id: string;
  @Column('uuid') companyId: string;
  @Column('text') actorType: ActivityActorType;
  @Column('text') actorId: string;
  @Column('text') action: string;
  @Column('text') entityType: string;
  @Column('text') entityId: string;
  @Column('uuid', { nullable: true }) agentId: string | null;
  @Column('uuid', { nullable: true }) runId: string | null;
  @Column('jsonb', { nullable: true }) details: Record<string, unknown> | null;
  @CreateDateColumn({ type: 'timestamptz' }) createdAt: Date;
}
