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
  /** the board UI's access summary: the credential again (`local_implicit`: the local board, which may do everything) */
  @ApiProperty({ enum: ['local_implicit', 'session', 'board_token', 'api_key', 'run_token'] }) source: string;
  isInstanceAdmin: boolean;
  @ApiProperty({ nullable: true, type: String }) userId: string | null;
  /** companies the caller may act in; empty for local or instance-admin callers, who may act in every company */
  companyIds: string[];
  /** always empty here: company access is `companyIds` */
  @ApiProperty({ type: [Object] }) memberships: never[];
}
