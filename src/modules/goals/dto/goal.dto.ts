import { ApiProperty, ApiPropertyOptional, OmitType, PartialType } from '@nestjs/swagger';
import { OmittableNotNull } from '../../../common/http/optional';
import { IsBoolean, IsIn, IsNotEmpty, IsOptional, IsString, IsUUID, MaxLength, ValidateIf } from 'class-validator';
import { GOAL_LEVELS, GOAL_STATUSES, GoalLevel, GoalStatus } from '../goal.entity';
import { RefersTo } from '../../../common/references/refers-to.decorator';

export class CreateGoalDto {
  @IsString() @IsNotEmpty() @MaxLength(500) title: string;
  @IsOptional() @ValidateIf((_, v) => v !== null) @IsString() @MaxLength(20_000) description?: string | null;
  /** default `task` */
  @ApiPropertyOptional({ enum: GOAL_LEVELS })
  @IsOptional()
  @IsIn(GOAL_LEVELS)
  level?: GoalLevel;
  /** default `planned` */
  @ApiPropertyOptional({ enum: GOAL_STATUSES })
  @IsOptional()
  @IsIn(GOAL_STATUSES)
  status?: GoalStatus;
  /** another goal of the same company; no cycles */
  @ApiPropertyOptional({ nullable: true, format: 'uuid', type: String })
  @RefersTo('goal')
  @IsOptional()
  @ValidateIf((_, v) => v !== null)
  @IsUUID()
  parentId?: string | null;
  /** an agent of the same company */
  @ApiPropertyOptional({ nullable: true, format: 'uuid', type: String })
  @RefersTo('agent')
  @IsOptional()
  @ValidateIf((_, v) => v !== null)
  @IsUUID()
  ownerAgentId?: string | null;
  /** true makes this the company default goal (the previous default loses the flag) */
  @IsOptional() @IsBoolean() isCompanyDefault?: boolean;
}

/** Partial goal fields: omitted ones stay unchanged; `null` clears the nullable ones and is refused for the others. */
export class UpdateGoalDto extends PartialType(OmitType(CreateGoalDto, ['title', 'level', 'status'] as const)) {
  @OmittableNotNull() @IsString() @IsNotEmpty() @MaxLength(500) title?: string;
  @ApiPropertyOptional({ enum: GOAL_LEVELS })
  @OmittableNotNull()
  @IsIn(GOAL_LEVELS)
  level?: GoalLevel;
  @ApiPropertyOptional({ enum: GOAL_STATUSES })
  @OmittableNotNull()
  @IsIn(GOAL_STATUSES)
  status?: GoalStatus;
}

export class GoalResponseDto {
  id: string;
  companyId: string;
  title: string;
  @ApiProperty({ nullable: true, type: String }) description: string | null;
  @ApiProperty({ enum: GOAL_LEVELS }) level: string;
  @ApiProperty({ enum: GOAL_STATUSES }) status: string;
  @ApiProperty({ nullable: true, type: String }) parentId: string | null;
  @ApiProperty({ nullable: true, type: String }) ownerAgentId: string | null;
  /** flagged company default goal */
  isCompanyDefault: boolean;
  createdAt: string;
  updatedAt: string;
}
