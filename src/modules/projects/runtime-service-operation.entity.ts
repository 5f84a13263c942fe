import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';

export type RuntimeAction = 'start' | 'stop' | 'restart' | 'reconcile';
export type RuntimeOperationStatus = 'succeeded' | 'failed';

/** One start/stop/restart (or start-up reconciliation) of a workspace's runtime service. */
@Entity('runtime_service_operations')
export class RuntimeServiceOperationEntity {
  @PrimaryGeneratedColumn('uuid') id: string;
  @Column('uuid') companyId: string;
  @Column('uuid') projectId: string;
  @Column('uuid') workspaceId: string;
  @Column('text') action: RuntimeAction;
  @Column('text') status: RuntimeOperationStatus;
  @Column('integer', { nullable: true }) pid: number | null;
  @Column('text') instanceId: string;
  @Column('text', { nullable: true }) logPath: string | null;
  @Column('text', { nullable: true }) error: string | null;
  @Column('text', { nullable: true }) requestedByActorType: string | null;
  @Column('text', { nullable: true }) requestedByActorId: string | null;
  @Column('timestamptz') startedAt: Date;
  @Column('timestamptz', { nullable: true }) finishedAt: Date | null;
  @CreateDateColumn({ type: 'timestamptz' }) createdAt: Date;
}
