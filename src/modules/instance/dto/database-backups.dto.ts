import { ApiProperty } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, IsOptional, Max, Min } from 'class-validator';

export class DatabaseBackupDto {
  id: string;
  /** file in the backup directory of the instance that wrote it (`SERVICE_BACKUP_DIR`, default `<data dir>/backups`) */
  fileName: string;
  @ApiProperty({ enum: ['pg_dump', 'builtin'] }) engine: string;
  @ApiProperty({ enum: ['manual', 'scheduled'] }) trigger: string;
  @ApiProperty({ enum: ['running', 'succeeded', 'failed'] }) status: string;
  @ApiProperty({ type: Number, nullable: true }) sizeBytes: number | null;
  @ApiProperty({ type: Number, nullable: true }) durationMs: number | null;
  @ApiProperty({ type: String, nullable: true }) error: string | null;
  /** the instance that wrote the file */
  instanceId: string;
  /** absolute path of the file on that instance */
  path: string;
  createdAt: string;
  @ApiProperty({ type: String, nullable: true }) finishedAt: string | null;
  /** why the built-in dumper was used instead of pg_dump (only on the create answer) */
  engineNote?: string;
}

export class DatabaseBackupListQueryDto {
  /** newest first; 1 to 500, default 100 */
  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(500) limit?: number;
}
