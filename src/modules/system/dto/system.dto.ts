import { ApiProperty } from '@nestjs/swagger';

export class HealthDto {
  @ApiProperty({ enum: ['ok', 'degraded'] }) status: string;
  version: string;
  @ApiProperty({ enum: ['local_trusted', 'authenticated'] }) deploymentMode: string;
  database: { reachable: boolean; latencyMs?: number };
  time: string;
}

export class IdentityDto {
  @ApiProperty({ enum: ['board', 'agent'] }) persona: string;
  @ApiProperty({ nullable: true, type: Object }) user: { id: string; isInstanceAdmin: boolean } | null;
  @ApiProperty({ nullable: true, type: Object }) agent: { id: string; companyId: string } | null;
  @ApiProperty({ enum: ['instance', 'company'] }) scope: string;
  @ApiProperty({ nullable: true, type: String }) companyId: string | null;
  @ApiProperty({ enum: ['local_implicit', 'session', 'board_token', 'api_key', 'run_token'] }) credential: string;
  @ApiProperty({ nullable: true, type: String }) runId: string | null;
  deploymentMode: string;
}
