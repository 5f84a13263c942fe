import { Controller, Get, Res } from '@nestjs/common';
import { ApiOkResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply as Response } from 'fastify';
import { Authorize } from '../../common/auth/authorize.decorator';

@ApiTags('announcements')
@Controller()
export class AnnouncementsController {
  /** The announcement the board UI shows above every page: this service publishes none, so always JSON `null`. */
  @Get('announcements/current')
  @Authorize({ callers: ['board', 'agent'] })
  @ApiOkResponse({ description: 'always `null`: no announcement', schema: { nullable: true, type: 'object', example: null } })
  current(@Res() res: Response): void {
    // Nest sends an empty body for a null result; the UI expects the JSON literal
    void res.status(200).type('application/json; charset=utf-8').send('null');
  }
}
