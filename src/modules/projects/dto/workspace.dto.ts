import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsBoolean,
  IsIn,
  IsInt,
  IsNotEmpty,
  IsObject,
  IsOptional,
  IsString,
  Matches,
  Max,
  MaxLength,
  Min,
  ValidateIf,
  ValidateNested,
} from 'class-validator';
import { WORKSPACE_SOURCE_TYPES, WorkspaceSourceType } from '../project-workspace.entity';

const ABSOLUTE_PATH = /^\//;

export class RuntimeHealthCheckDto {
  /**
   * `http://127.0.0.1:<runtimeConfig.port>/…` (loopback, the workspace's own port only: 422 otherwise);
   * or use `path`. Polled only once the port is served by the workspace's own process.
   */
  @IsOptional() @Matches(/^https?:\/\/\S+$/, { message: 'healthCheck.url must be an http(s) URL' }) @MaxLength(2000) url?: string;
  @IsOptional() @Matches(/^\/\S*$/, { message: 'healthCheck.path must start with /' }) @MaxLength(2000) path?: string;
  /** how long to wait for a 2xx/3xx answer (default 10000) */
  @IsOptional() @IsInt() @Min(100) @Max(120_000) timeoutMs?: number;
  @IsOptional() @IsInt() @Min(20) @Max(10_000) intervalMs?: number;
}

/** The runtime service of a workspace: run without a shell, in the workspace cwd, in its own process group. */
export class RuntimeConfigDto {
  /** executable (looked up on PATH) */
  @IsString() @IsNotEmpty() @MaxLength(1000) command: string;
  @IsOptional() @IsString({ each: true }) @MaxLength(10_000, { each: true }) @ArrayMaxSize(200) args?: string[];
  /** extra environment variables (string values) */
  @ApiPropertyOptional({ type: 'object', additionalProperties: { type: 'string' } })
  @IsOptional()
  @IsObject()
  env?: Record<string, string>;
  /** exported to the process as PORT; the health check path is polled on it */
  @IsOptional() @IsInt() @Min(1) @Max(65535) port?: number;
  @IsOptional() @ValidateNested() @Type(() => RuntimeHealthCheckDto) healthCheck?: RuntimeHealthCheckDto;
  /** grace period between SIGTERM and SIGKILL (default 5000) */
  @IsOptional() @IsInt() @Min(0) @Max(60_000) stopTimeoutMs?: number;
}

const nullable = () => ValidateIf((_: unknown, v: unknown) => v !== null);

export class UpdateWorkspaceDto {
  @IsOptional() @IsString() @IsNotEmpty() @MaxLength(200) name?: string;
  @ApiPropertyOptional({ enum: WORKSPACE_SOURCE_TYPES })
  @IsOptional()
  @IsIn(WORKSPACE_SOURCE_TYPES)
  sourceType?: WorkspaceSourceType;
  /**
   * absolute path; required unless repoUrl is given. Must lie under SERVICE_WORKSPACE_ROOTS (after
   * `..` and symbolic links are resolved) and outside the service's data and key files: 422
   * `path_not_allowed` otherwise.
   */
  @ApiPropertyOptional({ nullable: true, type: String })
  @IsOptional()
  @nullable()
  @IsString()
  @Matches(ABSOLUTE_PATH, { message: 'cwd must be an absolute path' })
  @MaxLength(4000)
  cwd?: string | null;
  @ApiPropertyOptional({ nullable: true, type: String })
  @IsOptional()
  @nullable()
  @IsString()
  @IsNotEmpty()
  @MaxLength(2000)
  repoUrl?: string | null;
  @ApiPropertyOptional({ nullable: true, type: String })
  @IsOptional()
  @nullable()
  @IsString()
  @MaxLength(500)
  repoRef?: string | null;
  @ApiPropertyOptional({ nullable: true, type: String })
  @IsOptional()
  @nullable()
  @IsString()
  @MaxLength(500)
  defaultRef?: string | null;
  @ApiPropertyOptional({ nullable: true, type: String })
  @IsOptional()
  @nullable()
  @IsString()
  @MaxLength(100)
  visibility?: string | null;
  @ApiPropertyOptional({ nullable: true, type: String })
  @IsOptional()
  @nullable()
  @IsString()
  @MaxLength(10_000)
  setupCommand?: string | null;
  @ApiPropertyOptional({ nullable: true, type: String })
  @IsOptional()
  @nullable()
  @IsString()
  @MaxLength(10_000)
  cleanupCommand?: string | null;
  @ApiPropertyOptional({ nullable: true, type: String })
  @IsOptional()
  @nullable()
  @IsString()
  @MaxLength(200)
  remoteProvider?: string | null;
  /** required for `remote_managed` unless repoUrl is given */
  @ApiPropertyOptional({ nullable: true, type: String })
  @IsOptional()
  @nullable()
  @IsString()
  @IsNotEmpty()
  @MaxLength(2000)
  remoteWorkspaceRef?: string | null;
  @ApiPropertyOptional({ nullable: true, type: String })
  @IsOptional()
  @nullable()
  @IsString()
  @MaxLength(500)
  sharedWorkspaceKey?: string | null;
  @IsOptional() @IsObject() metadata?: Record<string, unknown>;
  /** null removes the runtime service configuration */
  @ApiPropertyOptional({ nullable: true, type: RuntimeConfigDto })
  @IsOptional()
  @nullable()
  @ValidateNested()
  @Type(() => RuntimeConfigDto)
  runtimeConfig?: RuntimeConfigDto | null;
  /** true makes this the project's primary workspace */
  @IsOptional() @IsBoolean() isPrimary?: boolean;
}

/** At least one of cwd or repoUrl; `remote_managed` needs remoteWorkspaceRef or repoUrl; the first workspace is primary. */
export class CreateWorkspaceDto extends UpdateWorkspaceDto {}

export class RuntimeServiceStateDto {
  @ApiProperty({ enum: ['running', 'stopped', 'exited'] }) status: 'running' | 'stopped' | 'exited';
  @ApiProperty({ nullable: true, type: Number }) pid: number | null;
  @ApiProperty({ nullable: true, type: String, description: 'service instance owning the process' }) ownerInstanceId: string | null;
  @ApiProperty({ nullable: true, type: String }) startedAt: string | null;
  @ApiProperty({ nullable: true, type: Number }) exitCode: number | null;
  @ApiProperty({ nullable: true, type: String }) exitedAt: string | null;
}

export class WorkspaceResponseDto {
  id: string;
  companyId: string;
  projectId: string;
  name: string;
  @ApiProperty({ enum: WORKSPACE_SOURCE_TYPES }) sourceType: string;
  @ApiProperty({ nullable: true, type: String }) cwd: string | null;
  @ApiProperty({ nullable: true, type: String }) repoUrl: string | null;
  @ApiProperty({ nullable: true, type: String }) repoRef: string | null;
  @ApiProperty({ nullable: true, type: String }) defaultRef: string | null;
  @ApiProperty({ nullable: true, type: String }) visibility: string | null;
  @ApiProperty({ nullable: true, type: String }) setupCommand: string | null;
  @ApiProperty({ nullable: true, type: String }) cleanupCommand: string | null;
  @ApiProperty({ nullable: true, type: String }) remoteProvider: string | null;
  @ApiProperty({ nullable: true, type: String }) remoteWorkspaceRef: string | null;
  @ApiProperty({ nullable: true, type: String }) sharedWorkspaceKey: string | null;
  metadata: Record<string, unknown>;
  @ApiProperty({ nullable: true, type: RuntimeConfigDto }) runtimeConfig: RuntimeConfigDto | null;
  isPrimary: boolean;
  @ApiProperty({ enum: ['running', 'stopped'] }) desiredState: string;
  /** observed state of the runtime process */
  runtimeService: RuntimeServiceStateDto;
  createdAt: string;
  updatedAt: string;
}

export class RuntimeOperationResponseDto {
  id: string;
  workspaceId: string;
  @ApiProperty({ enum: ['start', 'stop', 'restart', 'reconcile'] }) action: string;
  @ApiProperty({ enum: ['succeeded', 'failed'] }) status: string;
  @ApiProperty({ nullable: true, type: Number }) pid: number | null;
  instanceId: string;
  startedAt: string;
  @ApiProperty({ nullable: true, type: String }) finishedAt: string | null;
  @ApiProperty({ nullable: true, type: String, description: 'stdout and stderr of the started process' }) logPath: string | null;
  @ApiProperty({ nullable: true, type: String }) error: string | null;
}

export class RuntimeServiceResultDto {
  workspace: WorkspaceResponseDto;
  operation: RuntimeOperationResponseDto;
}

/** A repository a workspace of the company names. */
export class ProjectRepositoryDto {
  /** the (first) workspace that names it */
  id: string;
  url: string;
  /** the URL's last segment without `.git` */
  name: string;
  @ApiProperty({ nullable: true, type: String }) defaultRef: string | null;
  projectId: string;
}

export class ProjectRepositoriesDto {
  @ApiProperty({ type: [ProjectRepositoryDto] }) repositories: ProjectRepositoryDto[];
  /** always 0: no GitHub connections here */
  connectionCount: number;
  failedConnectionCount: number;
}
