import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import {
  IsISO8601,
  IsIn,
  IsInt,
  IsNotEmpty,
  IsObject,
  IsOptional,
  IsString,
  IsUUID,
  Max,
  MaxLength,
  Min,
  ValidateIf,
} from 'class-validator';
import { RefersTo } from '../../../common/references/refers-to.decorator';

export class ActivityQueryDto {
  @IsOptional() @IsString() @MaxLength(200) agentId?: string;
  @IsOptional() @IsString() @MaxLength(200) entityType?: string;
  @IsOptional() @IsString() @MaxLength(200) entityId?: string;
}

export class CreateActivityDto {
  /** default `system` */
  @IsOptional() @IsIn(['agent', 'user', 'system']) actorType?: 'agent' | 'user' | 'system';
  @IsString() @IsNotEmpty() @MaxLength(200) actorId: string;
  @IsString() @IsNotEmpty() @MaxLength(200) action: string;
  @IsString() @IsNotEmpty() @MaxLength(200) entityType: string;
  @IsString() @IsNotEmpty() @MaxLength(200) entityId: string;
  @ApiPropertyOptional({ nullable: true, type: String, format: 'uuid' })
  @RefersTo('agent')
  @IsOptional()
  @ValidateIf((_, v) => v !== null)
  @IsUUID()
  agentId?: string | null;
  @ApiPropertyOptional({ nullable: true, type: Object, description: 'sanitised: secret values and tokens are redacted' })
  @IsOptional()
  @ValidateIf((_, v) => v !== null)
  @IsObject()
  details?: Record<string, unknown> | null;
}

export class ActivityResponseDto {
  id: string;
  companyId: string;
  @ApiProperty({ enum: ['agent', 'user', 'system'] }) actorType: string;
  actorId: string;
  action: string;
  entityType: string;
  entityId: string;
  @ApiProperty({ nullable: true, type: String }) agentId: string | null;
  @ApiProperty({ nullable: true, type: String }) runId: string | null;
  @ApiProperty({ nullable: true, type: Object }) details: Record<string, unknown> | null;
  createdAt: string;
}

const toInt = ({ value }: { value: unknown }) => (typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value);

export class AgentActionsQueryDto {
  /** `nextCursor` of the previous page */
  @IsOptional() @IsString() @IsNotEmpty() @MaxLength(200) cursor?: string;
  @ApiPropertyOptional({ minimum: 1, maximum: 200, default: 50 })
  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(200)
  limit?: number;
  /** `agents` (default): actions of agents; `all`: every actor (users and the system too) */
  @ApiPropertyOptional({ enum: ['agents', 'all'], default: 'agents' })
  @IsOptional()
  @IsIn(['agents', 'all'])
  actorScope?: 'agents' | 'all';
  /** exact action name, e.g. `issue.updated` */
  @IsOptional() @IsString() @IsNotEmpty() @MaxLength(200) action?: string;
  /** exact entity type, e.g. `issue` */
  @IsOptional() @IsString() @IsNotEmpty() @MaxLength(200) entityType?: string;
  /** exact entity id (with entityType: one record's trail) */
  @IsOptional() @IsString() @IsNotEmpty() @MaxLength(200) entityId?: string;
  /** only this agent's actions */
  @IsOptional() @IsUUID() agentId?: string;
  /** only what happened in this heartbeat run */
  @IsOptional() @IsUUID() runId?: string;
  /** only this user's actions (with `actorScope=all`) */
  @IsOptional() @IsString() @IsNotEmpty() @MaxLength(200) responsibleUserId?: string;
  /** from this time (inclusive; ISO 8601) */
  @IsOptional() @IsISO8601() from?: string;
  /** before this time (exclusive; ISO 8601) */
  @IsOptional() @IsISO8601() to?: string;
}

export class AuditEntityIssueDto {
  id: string;
  identifier: string;
  title: string;
  status: string;
}

export class AuditEntityDto {
  /** the issue the record is about (entity type `issue`), else null */
  @ApiProperty({ type: AuditEntityIssueDto, nullable: true }) issue: AuditEntityIssueDto | null;
  /** always null (comments are named in `details`) */
  @ApiProperty({ nullable: true, type: Object }) comment: null;
  /** always null (documents are named in `details`) */
  @ApiProperty({ nullable: true, type: Object }) document: null;
}

export class AgentActionDto extends ActivityResponseDto {
  entity: AuditEntityDto;
}

export class AgentActionsPageDto {
  /** activity whose actor is an agent, newest first */
  @ApiProperty({ type: [AgentActionDto] }) items: AgentActionDto[];
  /** pass as `cursor` for the next page; null on the last page */
  @ApiProperty({ nullable: true, type: String }) nextCursor: string | null;
  /** what the caller may see of the records: always `full` here (agent actions are not redacted) */
  @ApiProperty({ enum: ['full'] }) accessTier: 'full';
}
