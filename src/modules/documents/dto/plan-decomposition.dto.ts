import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, IsUUID } from 'class-validator';
import { RefersTo } from '../../../common/references/refers-to.decorator';
import { IssueSummaryDto } from '../../issues/dto/issue.dto';

export class AcceptPlanDto {
  /** the plan revision the board read; 409 with the current one when the plan changed since */
  @RefersTo('document_revision') @IsOptional() @IsUUID() baseRevisionId?: string;
  /** status of the child issues; default `todo` */
  @ApiPropertyOptional({ enum: ['backlog', 'todo'], default: 'todo' })
  @IsOptional()
  @IsIn(['backlog', 'todo'])
  childStatus?: 'backlog' | 'todo';
}

export class PlanDecompositionDto {
  id: string;
  companyId: string;
  issueId: string;
  /** always `plan` */
  documentKey: string;
  revisionId: string;
  revisionNumber: number;
  acceptedByUserId: string;
  acceptedAt: string;
  /** the child issues created from the plan's list items, in plan order (issues deleted since are left out) */
  @ApiProperty({ type: [IssueSummaryDto] }) childIssues: IssueSummaryDto[];
}
