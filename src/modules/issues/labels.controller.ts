import { ApiDomainErrors } from '../../common/errors/api-domain-errors.decorator';
import { ISSUE_ERRORS } from './issues.errors';
import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { LogActivity } from '../../common/activity/log-activity.decorator';
import { Authorize } from '../../common/auth/authorize.decorator';
import { CreateLabelDto, LabelResponseDto, UpdateLabelDto } from './dto/label.dto';
import { LabelsService } from './labels.service';

@ApiTags('issues')
@ApiDomainErrors(ISSUE_ERRORS)
@Controller('companies/:companyId/labels')
export class LabelsController {
  constructor(private readonly labels: LabelsService) {}

  /** Company labels by name. */
  @Get()
  @Authorize({ callers: ['board', 'agent'] })
  list(@Param('companyId') companyId: string): Promise<LabelResponseDto[]> {
    return this.labels.list(companyId);
  }

  /** Name unique in the company (case-insensitive; 409 otherwise); optional `#rrggbb` color. */
  @Post()
  @HttpCode(201)
  @Authorize({ callers: ['board', 'agent'] })
  @LogActivity('label.created', { entityType: 'label' })
  create(@Param('companyId') companyId: string, @Body() dto: CreateLabelDto): Promise<LabelResponseDto> {
    return this.labels.create(companyId, dto);
  }

  /** Rename or recolor. */
  @Patch(':labelId')
  @Authorize({ callers: ['board', 'agent'] })
  @LogActivity('label.updated', { entityType: 'label' })
  update(@Param('companyId') companyId: string, @Param('labelId') labelId: string, @Body() dto: UpdateLabelDto): Promise<LabelResponseDto> {
    return this.labels.update(companyId, labelId, dto);
  }

  /** Deletes the label and detaches it from its issues; returns the deleted label. */
  @Delete(':labelId')
  @Authorize({ callers: ['board', 'agent'] })
  @LogActivity('label.deleted', { entityType: 'label', details: () => ({}) })
  remove(@Param('companyId') companyId: string, @Param('labelId') labelId: string): Promise<LabelResponseDto> {
    return this.labels.remove(companyId, labelId);
  }
}
