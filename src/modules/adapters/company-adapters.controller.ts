import { Body, Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { NoActivity } from '../../common/activity/log-activity.decorator';
import type { Actor } from '../../common/auth/actor';
import { Authorize } from '../../common/auth/authorize.decorator';
import { CurrentActor } from '../../common/auth/current-actor.decorator';
import { ApiDomainErrors } from '../../common/errors/api-domain-errors.decorator';
import { RUNTIME_SETUP_ERRORS } from './adapters.errors';
import {
  AuthSignalDto,
  DetectModelResponseDto,
  EnvironmentReportDto,
  LoginSessionDto,
  ModelOptionDto,
  ModelsQueryDto,
  StartLoginDto,
  TestEnvironmentDto,
} from './dto/runtime-setup.dto';
import { RuntimeSetupService } from './runtimes/runtime-setup.service';

/** The adapter routes of the board UI's new-agent form, per company (models, default model, environment test, login). */
@ApiTags('adapters')
@ApiDomainErrors(RUNTIME_SETUP_ERRORS)
@Controller('companies/:companyId/adapters/:type')
export class CompanyAdaptersController {
  constructor(private readonly setup: RuntimeSetupService) {}

  /** The models the runtime offers (`[]` for types without a model choice); 404 for an unknown type. */
  @Get('models')
  @Authorize({ callers: ['board'] })
  models(@Param('type') type: string, @Query() _q: ModelsQueryDto): ModelOptionDto[] {
    return this.setup.models(type);
  }

  /** The model the CLI would use without `adapterConfig.model`: the type's instance env, the CLI's settings, or its default. */
  @Get('detect-model')
  @Authorize({ callers: ['board'] })
  detectModel(
    @CurrentActor() actor: Actor,
    @Param('companyId') companyId: string,
    @Param('type') type: string,
  ): Promise<DetectModelResponseDto> {
    return this.setup.detectModel(actor, companyId, type);
  }

  /**
   * Environment test of a config: the CLI binary (found, version), credentials (a key in env or
   * testCredentials, or a stored login), and whether the model endpoint (its base-URL variable, else
   * the vendor's) accepts connections; for a coding CLI, when all that passed, the CLI answers a test
   * prompt (`adapter_hello_probe_passed` / `_failed`: one short model call through the CLI, as the
   * agent's runs make it; the board UI's form waits for it). A failed check says why (`message`), what
   * the CLI said (`detail`) and what to check (`hint`). The prompt's usage is booked: with `agentId`
   * (it runs as that agent) as a cost event of the agent (`billingCode` `environment_test`, no run);
   * without (the new-agent form) as a finance event of the company (`inference_charge`, metadata
   * `billingCode` `environment_test`). `status`: pass, warn or fail.
   */
  @Post('test-environment')
  @HttpCode(200)
  @NoActivity(
    'a check: nothing of the config is stored (the test prompt is booked by costs, recorded as cost.reported or finance_event.created)',
  )
  @Authorize({ callers: ['board'] })
  testEnvironment(
    @CurrentActor() actor: Actor,
    @Param('companyId') companyId: string,
    @Param('type') type: string,
    @Body() dto: TestEnvironmentDto,
  ): Promise<EnvironmentReportDto> {
    return this.setup.testEnvironment(actor, type, dto, companyId);
  }

  /**
   * API-key login: the key is stored as a company secret and the answer's `envBinding` is the
   * secret reference to put into the agent's env; the session is `authenticated` at once.
   * Not supported: browser and subscription (OAuth) logins (422 `login_method_unsupported`).
   */
  @Post('login-sessions')
  @NoActivity('the secrets service records secret.created')
  @Authorize({ callers: ['board'] })
  startLogin(
    @CurrentActor() actor: Actor,
    @Param('companyId') companyId: string,
    @Param('type') type: string,
    @Body() dto: StartLoginDto,
  ): Promise<LoginSessionDto> {
    return this.setup.startLogin(actor, companyId, type, dto);
  }

  /** The login in progress: always 404 here (API-key logins complete at once; browser logins are not supported). */
  @Get('login-sessions/active')
  @Authorize({ callers: ['board'] })
  activeLogin(@Param('type') type: string): LoginSessionDto {
    return this.setup.activeLogin(type);
  }

  @Get('login-sessions/:sessionId')
  @Authorize({ callers: ['board'] })
  loginSession(
    @Param('companyId') companyId: string,
    @Param('type') type: string,
    @Param('sessionId') sessionId: string,
  ): Promise<LoginSessionDto> {
    return this.setup.loginSession(companyId, type, sessionId);
  }

  /** Nothing to cancel (an API-key login is complete when created): answers the session as it is. */
  @Post('login-sessions/:sessionId/cancel')
  @HttpCode(200)
  @NoActivity('changes nothing')
  @Authorize({ callers: ['board'] })
  cancelLogin(
    @Param('companyId') companyId: string,
    @Param('type') type: string,
    @Param('sessionId') sessionId: string,
  ): Promise<LoginSessionDto> {
    return this.setup.loginSession(companyId, type, sessionId);
  }

  /** Whether agents of the type would find credentials without their own: the type's instance env or a stored CLI login. */
  @Get('auth-signal')
  @Authorize({ callers: ['board'] })
  authSignal(@Param('type') type: string, @Query() _q: ModelsQueryDto): Promise<AuthSignalDto> {
    return this.setup.authSignal(type);
  }
}
