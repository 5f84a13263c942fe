import { Controller, Get, Param, Res } from '@nestjs/common';
import { ApiOkResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply as Response } from 'fastify';
import { Authorize } from '../../common/auth/authorize.decorator';

@ApiTags('ai-connections')
@Controller('companies/:companyId')
export class ClaudeLoginStatusController {
  /**
   * The Claude subscription (OAuth) token the board UI offers to reuse for a new Claude Code agent.
   * This service keeps none (Claude Code agents authenticate with an API key: an AI connection or a
   * secret reference in their env), so the answer is JSON `null`, which the UI reads as "no stored login".
   */
  @Get('claude-oauth-token-status')
  @Authorize({ callers: ['board'] })
  @ApiOkResponse({
    description: 'always `null`: no Claude subscription token is stored',
    schema: { nullable: true, type: 'object', example: null },
  })
  status(@Param('companyId') _companyId: string, @Res() res: Response): void {
    // Nest sends an empty body for a null result; the UI expects the JSON literal
    void res.status(200).type('application/json; charset=utf-8').send('null');
  }
}
