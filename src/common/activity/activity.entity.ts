import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';

export type ActivityActorType = 'agent' | 'user' | 'system';

/**
 * An activity_log row as SQL returns it (snake_case): the one declaration of the row's columns.
 * Readers add what their SELECT adds (the time, as a Date or as exact text; the chain columns).
 */
export interface ActivityLogRow {
  id: string;
  company_id: string;
  actor_type: string;
  actor_id: string;
  action: string;
  entity_type: string;
  entity_id: string;
  agent_id: string | null;
  run_id: string | null;
  details: Record<string, unknown> | null;
}

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
