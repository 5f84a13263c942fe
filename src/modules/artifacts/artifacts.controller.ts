import { ApiDomainErrors } from '../../common/errors/api-domain-errors.decorator';
import { ARTIFACT_ERRORS } from './artifacts.errors';
import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Authorize } from '../../common/auth/authorize.decorator';
import { ArtifactsService } from './artifacts.service';
import { ArtifactListResponseDto, ListArtifactsQueryDto } from './dto/artifact.dto';

@ApiTags('artifacts')
@ApiDomainErrors(ARTIFACT_ERRORS)
@Controller('companies/:companyId/artifacts')
export class ArtifactsController {
  constructor(private readonly artifacts: ArtifactsService) {}

  /** `{ artifacts, nextCursor }` newest first; `groupBy` task|parent_task gives `groups`; `groupIssueId` expands one. */
  @Get()
  @Authorize({ callers: ['board', 'agent'] })
  list(@Param('companyId') companyId: string, @Query() q: ListArtifactsQueryDto): Promise<ArtifactListResponseDto> {
    return this.artifacts.list(companyId, q);
  }
}
