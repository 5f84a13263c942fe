import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Put, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { ActivityContext, LogActivity, NoActivity } from '../../common/activity/log-activity.decorator';
import type { Actor } from '../../common/auth/actor';
import { Authorize } from '../../common/auth/authorize.decorator';
import { CurrentActor } from '../../common/auth/current-actor.decorator';
import { ApiDomainErrors } from '../../common/errors/api-domain-errors.decorator';
import { AI_CONNECTION_ERRORS, aiConnectionError } from './ai-connections.errors';
import { AiConnectionsService } from './ai-connections.service';
import {
  AiConnectionDto,
  AiConnectionListDto,
  AiConnectionRunDto,
  AiConnectionsQueryDto,
  AiConnectionTestDto,
  CreateAiConnectionDto,
  SetDefaultAiConnectionDto,
  UpdateAiConnectionDto,
} from './dto/ai-connection.dto';

/** What the activity log keeps of a connection: never its key. */
const details = (c: ActivityContext) => ({
  provider: c.result.provider,
  name: c.result.name,
  ownership: c.result.ownership,
  baseUrl: c.result.baseUrl,
  defaultModel: c.result.defaultModel,
});
const activity = (action: string) => LogActivity(action, { entityType: 'ai_connection', details });

const unsupported = () =>
  aiConnectionError(
    'login_method_unsupported',
    'Subscription sign-ins on this machine are not supported: connect the provider with an API key (POST …/ai-connections, method "api_key")',
  );

/**
 * AI connections of a company (the board UI's "Connect a model" step): model-provider accounts
 * whose API key is kept as a company secret. Agents are configured from one with
 * `runtimeConfig.aiConnection` (create, hire, PATCH) and get its key and base URL as env entries.
 */
@ApiTags('ai-connections')
@ApiDomainErrors(AI_CONNECTION_ERRORS)
@Controller('companies/:companyId/ai-connections')
export class AiConnectionsController {
  constructor(private readonly connections: AiConnectionsService) {}

  /** The connections you may use (the company's shared ones and your personal ones), with who you are. */
  @Get()
  @Authorize({ callers: ['board'] })
  list(
    @CurrentActor() actor: Actor,
    @Param('companyId') companyId: string,
    @Query() _q: AiConnectionsQueryDto,
  ): Promise<AiConnectionListDto> {
    return this.connections.list(actor, companyId);
  }

  /**
   * Connects a provider with an API key (kept as a company secret, never returned): a personal
   * connection becomes your default for the provider. With `connectionId`, replaces that
   * connection's key instead. Subscription sign-ins: 422 `login_method_unsupported`.
   */
  @Post()
  @HttpCode(201)
  @Authorize({ callers: ['board'] })
  @activity('ai_connection.created')
  create(
    @CurrentActor() actor: Actor,
    @Param('companyId') companyId: string,
    @Body() dto: CreateAiConnectionDto,
  ): Promise<AiConnectionDto> {
    return this.connections.create(actor, companyId, dto);
  }

  /** Makes a connection (`grantId`) the default of its provider: yours, or the company's for a shared one. */
  @Put('default')
  @Authorize({ callers: ['board'] })
  @activity('ai_connection.default_set')
  setDefault(
    @CurrentActor() actor: Actor,
    @Param('companyId') companyId: string,
    @Body() dto: SetDefaultAiConnectionDto,
  ): Promise<AiConnectionDto> {
    return this.connections.setDefault(actor, companyId, dto.grantId);
  }

  /** Sign-in sessions exist only for browser sign-ins, which are not supported: always 404. */
  @Get('login/:sessionId')
  @Authorize({ callers: ['board'] })
  loginResult(@Param('sessionId') _sessionId: string): never {
    throw aiConnectionError('login_session_not_found', 'No sign-in session: API-key connections are complete when created');
  }

  /** Subscription sign-in on this machine: not supported (422 `login_method_unsupported`). */
  @Post('local/attempts')
  @Authorize({ callers: ['board'] })
  @NoActivity('refused: nothing changes')
  startLocal(): never {
    throw unsupported();
  }

  /** Subscription sign-in on this machine: not supported (422 `login_method_unsupported`). */
  @Post('local/check')
  @Authorize({ callers: ['board'] })
  @NoActivity('refused: nothing changes')
  checkLocal(): never {
    throw unsupported();
  }

  /** Subscription sign-in on this machine: not supported (422 `login_method_unsupported`). */
  @Post('local')
  @Authorize({ callers: ['board'] })
  @NoActivity('refused: nothing changes')
  connectLocal(): never {
    throw unsupported();
  }

  /** There is no sign-in to cancel: 404. */
  @Delete('local/attempts/:sessionId')
  @Authorize({ callers: ['board'] })
  @NoActivity('nothing to cancel')
  cancelLocal(@Param('sessionId') _sessionId: string): never {
    throw aiConnectionError('login_session_not_found', 'No sign-in session to cancel');
  }

  @Get(':connectionId')
  @Authorize({ callers: ['board'] })
  get(@CurrentActor() actor: Actor, @Param('companyId') companyId: string, @Param('connectionId') id: string): Promise<AiConnectionDto> {
    return this.connections.get(actor, companyId, id);
  }

  /** Renames it, replaces its key (a new version of its secret), sets or clears its base URL and default model. */
  @Patch(':connectionId')
  @Authorize({ callers: ['board'] })
  @activity('ai_connection.updated')
  update(
    @CurrentActor() actor: Actor,
    @Param('companyId') companyId: string,
    @Param('connectionId') id: string,
    @Body() dto: UpdateAiConnectionDto,
  ): Promise<AiConnectionDto> {
    return this.connections.update(actor, companyId, id, dto);
  }

  /** Deletes the connection and its key; agents configured from it fail their next run until reconfigured. */
  @Delete(':connectionId')
  @Authorize({ callers: ['board'] })
  @activity('ai_connection.deleted')
  remove(@CurrentActor() actor: Actor, @Param('companyId') companyId: string, @Param('connectionId') id: string): Promise<AiConnectionDto> {
    return this.connections.remove(actor, companyId, id);
  }

  /**
   * Asks the provider's API at the connection's endpoint which models the key may use (no model
   * turn is spent): `pass` with the models, or `fail` with the HTTP status or why it was not
   * reached. The destination policy applies; the answer carries nothing else the endpoint sent.
   */
  @Post(':connectionId/test')
  @HttpCode(200)
  @Authorize({ callers: ['board'] })
  @LogActivity('ai_connection.tested', {
    entityType: 'ai_connection',
    details: (c) => ({ status: c.result.status, httpStatus: c.result.httpStatus, endpoint: c.result.endpoint }),
  })
  test(
    @CurrentActor() actor: Actor,
    @Param('companyId') companyId: string,
    @Param('connectionId') id: string,
  ): Promise<AiConnectionTestDto> {
    return this.connections.test(actor, companyId, id);
  }

  /** Queued and running runs of the agents configured with this connection's key. */
  @Get(':connectionId/active-runs')
  @Authorize({ callers: ['board'] })
  activeRuns(
    @CurrentActor() actor: Actor,
    @Param('companyId') companyId: string,
    @Param('connectionId') id: string,
  ): Promise<AiConnectionRunDto[]> {
    return this.connections.activeRuns(actor, companyId, id);
  }
}
