import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';

/** A stored file owned by a company (logos; attachments build on the same storage). */
@Entity('assets')
export class AssetEntity {
  @PrimaryGeneratedColumn('uuid') id: string;
  @Column('uuid') companyId: string;
  @Column('text') kind: string;
  @Column('text') contentType: string;
  @Column('integer') byteSize: number;
  @Column('text') sha256: string;
  @Column('text') storageKey: string;
  @Column('text', { nullable: true }) originalFilename: string | null;
  @Column('text', { nullable: true }) createdByUserId: string | null;
  @Column('uuid', { nullable: true }) createdByAgentId: string | null;
  @CreateDateColumn({ type: 'timestamptz' }) createdAt: Date;
}
