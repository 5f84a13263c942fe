import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';

/** Security audit trail: one row per successful run-bound secret value read. Never holds the value. */
@Entity('secret_access_events')
export class SecretAccessEventEntity {
  @PrimaryGeneratedColumn('uuid') id: string;
  @Column('uuid') companyId: string;
  @Column('uuid') secretId: string;
  @Column('text') secretName: string;
  @Column('text') bindingKey: string;
  @Column('integer') version: number;
  @Column('text') action: string;
  @Column('uuid') agentId: string;
  @Column('uuid', { nullable: true }) runId: string | null;
  @Column('text') credentialSource: string;
  @Column('text', { nullable: true }) credentialId: string | null;
  @Column('text', { nullable: true }) requestId: string | null;
  @CreateDateColumn({ type: 'timestamptz' }) createdAt: Date;
}
