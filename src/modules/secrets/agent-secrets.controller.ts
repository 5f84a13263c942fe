import { ApiDomainErrors } from '../../common/errors/api-domain-errors.decorator';
import { SECRET_ERRORS } from './secrets.errors';
import { NoActivity } from '../../common/activity/log-activity.decorator';
import { Controller, Get, Header, HttpCode, Param, Post, Req } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import type { AgentActor, RequestWithActor } from '../../common/auth/actor';
import { Authorize } from '../../common/auth/authorize.decorator';
import { CurrentActor } from '../../common/auth/current-actor.decorator';
import { GrantedSecretListDto, SecretValueDto } from './dto/secret.dto';
import { RunSecretsService } from './run-secrets.service';

@ApiTags('secrets')
@ApiDomainErrors(SECRET_ERRORS)
@Controller('agents/me/secrets')
export class AgentSecretsController {
  constructor(private readonly runSecrets: RunSecretsService) {}

  /** Secrets bound to the calling agent (aliases, versions, delivery); never values, ids or config paths. */
  @Get()
  @Authorize({ callers: ['agent'], runBound: true })
  @Header('Cache-Control', 'no-store')
  list(@CurrentActor() actor: AgentActor): Promise<GrantedSecretListDto> {
    return this.runSecrets.listGranted(actor);
  }

  /** The value of a granted alias (delivery api|both) as `{ key, value, version }`; audited; alias not granted: 403. */
  @Post(':key/value')
  @NoActivity('the service records the read (never the value) and writes the security audit trail')
  @HttpCode(200)
  @Authorize({ callers: ['agent'], runBound: true })
  @Header('Cache-Control', 'no-store')
  @Header('Pragma', 'no-cache')
  readValue(@CurrentActor() actor: AgentActor, @Param('key') key: string, @Req() req: RequestWithActor): Promise<SecretValueDto> {
    return this.runSecrets.readValue(actor, key, typeof req.id === 'string' ? req.id : undefined);
  }
}
