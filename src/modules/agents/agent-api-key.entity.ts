import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';

/** Only the SHA-256 of the token is stored; the token itself is shown once at creation. */
@Entity('agent_api_keys')
export class AgentApiKeyEntity {
  @PrimaryGeneratedColumn('uuid') id: string;
  @Column('uuid') companyId: string;
  @Column('uuid') agentId: string;
  @Column('text') name: string;
  @Column('text') tokenHash: string;
  /** first characters of the token, to recognise a key in a list */
  @Column('text') tokenPrefix: string;
  @Column('timestamptz', { nullable: true }) revokedAt: Date | null;
  @Column('timestamptz', { nullable: true }) lastUsedAt: Date | null;
  @CreateDateColumn({ type: 'timestamptz' }) createdAt: Date;
}
