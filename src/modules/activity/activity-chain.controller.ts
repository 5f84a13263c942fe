import { Readable } from 'node:stream';
import { Controller, Get, HttpCode, Param, Post, StreamableFile } from '@nestjs/common';
import { ApiOkResponse, ApiProduces, ApiTags } from '@nestjs/swagger';
import { NoActivity } from '../../common/activity/log-activity.decorator';
import { Authorize } from '../../common/auth/authorize.decorator';
import { ApiDomainErrors } from '../../common/errors/api-domain-errors.decorator';
import { ActivityChainService } from './activity-chain.service';
import { ACTIVITY_ERRORS, activityError } from './activity.errors';
import { ActivityAnchorResponseDto, ChainVerifyResponseDto } from './dto/activity-chain.dto';

/** The tamper-evident activity log (docs/audit-chain.md). Board only. */
@ApiTags('activity')
@ApiDomainErrors(ACTIVITY_ERRORS)
@Controller('companies/:companyId/activity')
export class ActivityChainController {
  constructor(private readonly chain: ActivityChainService) {}

  /** Recomputes the company's hash chain up to its head, in batches; `{ ok, checked, firstBrokenId }` and why it broke. */
  @Get('verify')
  @Authorize({ callers: ['board'] })
  verify(@Param('companyId') companyId: string): Promise<ChainVerifyResponseDto> {
    return this.chain.verify(companyId);
  }

  /** The chain for an offline audit: JSON lines (header with the public key, anchors, records, end), streamed. */
  @Get('export')
  @ApiProduces('application/x-ndjson')
  @ApiOkResponse({ description: 'JSON lines: header, anchors, records in chain order, end (docs/audit-chain.md)' })
  @Authorize({ callers: ['board'] })
  export(@Param('companyId') companyId: string): StreamableFile {
    return new StreamableFile(Readable.from(this.chain.exportLines(companyId)), {
      type: 'application/x-ndjson',
      disposition: `attachment; filename="activity-chain-${companyId}.jsonl"`,
    });
  }

  /** Signs the company's chain head now with the instance key (anchors are also made on a schedule). */
  @Post('anchors')
  @HttpCode(201)
  @NoActivity('an anchor signs the chain as it is; a record of it would move the head it signs')
  @Authorize({ callers: ['board'] })
  async anchor(@Param('companyId') companyId: string): Promise<ActivityAnchorResponseDto> {
    const anchor = await this.chain.anchor(companyId);
    if (!anchor) throw activityError('activity_chain_empty', 'The company has no activity to anchor yet');
    return anchor;
  }
}
