import { Column, CreateDateColumn, Entity, PrimaryColumn, UpdateDateColumn } from 'typeorm';

/** A company secret's metadata. The value lives only in its versions, encrypted or external. */
@Entity('company_secrets')
export class SecretEntity {
  @PrimaryColumn('uuid') id: string;
  @Column('uuid') companyId: string;
  @Column('text') name: string;
  @Column('text') provider: string;
  @Column('text', { nullable: true }) externalRef: string | null;
  @Column('integer') latestVersion: number;
  @Column('text', { nullable: true }) description: string | null;
  @Column('uuid', { nullable: true }) createdByAgentId: string | null;
  @Column('text', { nullable: true }) createdByUserId: string | null;
  @CreateDateColumn({ type: 'timestamptz' }) createdAt: Date;
  @UpdateDateColumn({ type: 'timestamptz' }) updatedAt: Date;
}

/** One immutable version: ciphertext + IV + GCM tag + master key fingerprint, or an external reference. */
@Entity('company_secret_versions')
export class SecretVersionEntity {
  @PrimaryColumn('uuid') id: string;
  @Column('uuid') secretId: string;
  @Column('uuid') companyId: string;
  @Column('integer') version: number;
  @Column('text') provider: string;
  @Column('text', { nullable: true }) externalRef: string | null;
  @Column('bytea', { nullable: true }) ciphertext: Buffer | null;
  @Column('bytea', { nullable: true }) iv: Buffer | null;
  @Column('bytea', { nullable: true }) authTag: Buffer | null;
  @Column('text', { nullable: true }) keyFingerprint: string | null;
  @Column('text') valueSha256: string;
  @Column('uuid', { nullable: true }) createdByAgentId: string | null;
  @Column('text', { nullable: true }) createdByUserId: string | null;
  @CreateDateColumn({ type: 'timestamptz' }) createdAt: Date;
}
