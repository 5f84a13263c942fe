import { ApiProperty } from '@nestjs/swagger';

export class LivenessDto {
  @ApiProperty({ enum: ['ok'] }) status: string;
  /** seconds since this process started */
  uptimeSec: number;
}

export class ReadinessDto {
  @ApiProperty({ enum: ['ready', 'not_ready'] }) status: string;
  /** the database answers */
  databaseReachable: boolean;
  /** a migration is running (on this or another instance) */
  migrating: boolean;
  /** this build has migrations the database lacks */
  pendingMigrations: boolean;
}
