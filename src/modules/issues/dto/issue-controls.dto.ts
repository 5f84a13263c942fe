import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsBoolean,
  IsNotEmpty,
  IsOptional,
  IsString,
  Matches,
  MaxLength,
  ValidateNested,
} from 'class-validator';

export class TreeHoldDto {
  id: string;
  /** the issue whose subtree is paused (this issue or an ancestor) */
  rootIssueId: string;
  rootIssueIdentifier: string;
  /** true when the hold is on an ancestor of the asked issue */
  inherited: boolean;
  @ApiProperty({ nullable: true, type: String }) reason: string | null;
  createdByUserId: string;
  createdAt: string;
}

export class TreeControlStateDto {
  issueId: string;
  companyId: string;
  /** the active hold pausing this issue's subtree, or null */
  @ApiProperty({ type: TreeHoldDto, nullable: true }) activePauseHold: TreeHoldDto | null;
}

export class TreeResumeResultDto extends TreeControlStateDto {
  releasedHoldId: string;
  /** deferred wakes of the subtree that became runs */
  promotedWakes: number;
}

export class PauseTreeDto {
  /** shown with the hold */
  @IsOptional() @IsString() @MaxLength(2000) reason?: string;
}

export class InteractionOptionDto {
  /** stable key of the option, e.g. `yes` (letters, digits, `_`, `-`) */
  @IsString() @Matches(/^[A-Za-z0-9_-]{1,64}$/) id: string;
  @IsString() @IsNotEmpty() @MaxLength(500) label: string;
}

export class CreateInteractionDto {
  /** the question to the human (markdown) */
  @IsString() @IsNotEmpty() @MaxLength(20000) prompt: string;
  /** choices the human picks one of; omitted: a free-text question */
  @ApiPropertyOptional({ type: [InteractionOptionDto] })
  @IsOptional()
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(20)
  @ValidateNested({ each: true })
  @Type(() => InteractionOptionDto)
  options?: InteractionOptionDto[];
  /** whether a free-text answer is accepted; default true without options, false with them */
  @IsOptional() @IsBoolean() allowFreeText?: boolean;
}

export class AnswerInteractionDto {
  /** the chosen option's id */
  @IsOptional() @IsString() @Matches(/^[A-Za-z0-9_-]{1,64}$/) optionId?: string;
  /** a free-text answer (or a note with the option) */
  @IsOptional() @IsString() @IsNotEmpty() @MaxLength(20000) text?: string;
}

export class InteractionAnswerDto {
  @ApiProperty({ nullable: true, type: String }) optionId: string | null;
  @ApiProperty({ nullable: true, type: String }) text: string | null;
  answeredByUserId: string;
  answeredAt: string;
}

export class InteractionDto {
  id: string;
  companyId: string;
  issueId: string;
  @ApiProperty({ enum: ['question'] }) kind: string;
  @ApiProperty({ enum: ['pending', 'answered'] }) status: string;
  askedByAgentId: string;
  /** the run the agent asked from, if any */
  @ApiProperty({ nullable: true, type: String }) runId: string | null;
  prompt: string;
  @ApiProperty({ type: [InteractionOptionDto], nullable: true }) options: InteractionOptionDto[] | null;
  allowFreeText: boolean;
  @ApiProperty({ type: InteractionAnswerDto, nullable: true }) answer: InteractionAnswerDto | null;
  createdAt: string;
  updatedAt: string;
}

export class RunnerGoalCapabilityDto {
  @ApiProperty({ enum: ['supported', 'unsupported'] }) availability: string;
  /** the answer comes from the adapter's known behaviour, not a guess */
  verified: boolean;
  @ApiProperty({ type: [String] }) actions: string[];
  autonomousUpdates: boolean;
  persistentAcrossResume: boolean;
  @ApiProperty({ nullable: true, type: Number }) maxObjectiveChars: number | null;
  tokenBudgetControl: boolean;
  usageReporting: boolean;
  @ApiProperty({ nullable: true, type: String }) reasonCode: string | null;
  @ApiProperty({ nullable: true, type: String }) reason: string | null;
}

export class RunnerGoalDto {
  issueId: string;
  @ApiProperty({ nullable: true, type: String }) agentId: string | null;
  @ApiProperty({ nullable: true, type: String }) adapterType: string | null;
  @ApiProperty({ nullable: true, type: String }) sessionId: string | null;
  capability: RunnerGoalCapabilityDto;
  /** the objective the runtime holds; always null (no adapter of this service holds one) */
  @ApiProperty({ nullable: true, type: Object }) goal: null;
  /** the assignee has a live run for this issue */
  workingNow: boolean;
  @ApiProperty({ nullable: true, type: String }) activeRunId: string | null;
  @ApiProperty({ nullable: true, type: Object }) pendingAction: null;
  revision: number;
  @ApiProperty({ nullable: true, type: String }) observedAt: string | null;
}
