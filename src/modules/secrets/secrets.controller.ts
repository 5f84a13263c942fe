import { ApiDomainErrors } from '../../common/errors/api-domain-errors.decorator';
import { SECRET_ERRORS } from './secrets.errors';
import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { LogActivity } from '../../common/activity/log-activity.decorator';
import type { Actor } from '../../common/auth/actor';
import { Authorize } from '../../common/auth/authorize.decorator';
import { CurrentActor } from '../../common/auth/current-actor.decorator';
import { RouteCompany } from '../../common/auth/route-company.decorator';
import { CreateSecretDto, RotateSecretDto, SecretProviderDto, SecretResponseDto, UpdateSecretDto } from './dto/secret.dto';
import { SecretsService } from './secrets.service';

/** Activity details name the secret, never the value. */
const secretDetails = (c: { result: Record<string, unknown> }) => ({
  name: c.result.name,
  provider: c.result.provider,
  latestVersion: c.result.latestVersion,
});

@ApiTags('secrets')
@ApiDomainErrors(SECRET_ERRORS)
@Controller()
export class SecretsController {
  constructor(private readonly secrets: SecretsService) {}

  /** Provider descriptors `{ id, label, requiresExternalRef }`. */
  @Get('companies/:companyId/secret-providers')
  @Authorize({ callers: ['board'] })
  providers(): SecretProviderDto[] {
    return this.secrets.listProviders();
  }

  /** Metadata of the company's secrets, newest first; never values. */
  @Get('companies/:companyId/secrets')
  @Authorize({ callers: ['board'] })
  list(@Param('companyId') companyId: string): Promise<SecretResponseDto[]> {
    return this.secrets.list(companyId);
  }

  /** Creates the secret with version 1; duplicate name in the company: 409. Returns metadata only. */
  @Post('companies/:companyId/secrets')
  @HttpCode(201)
  @Authorize({ callers: ['board'] })
  @LogActivity('secret.created', { entityType: 'secret', details: secretDetails })
  create(@CurrentActor() actor: Actor, @Param('companyId') companyId: string, @Body() dto: CreateSecretDto): Promise<SecretResponseDto> {
    return this.secrets.create(actor, companyId, dto);
  }

  /** Metadata only (name, description, externalRef); no new version; rename must stay unique. */
  @Patch('secrets/:secretId')
  @Authorize({ callers: ['board'] })
  @LogActivity('secret.updated', { entityType: 'secret', details: (c) => ({ ...secretDetails(c), changed: Object.keys(c.body) }) })
  update(
    @CurrentActor() actor: Actor,
    @RouteCompany() companyId: string | undefined,
    @Param('secretId') secretId: string,
    @Body() dto: UpdateSecretDto,
  ): Promise<SecretResponseDto> {
    return this.secrets.update(actor, companyId, secretId, dto);
  }

  /** Adds a new immutable version and advances latestVersion; `latest` references follow it. */
  @Post('secrets/:secretId/rotate')
  @HttpCode(200)
  @Authorize({ callers: ['board'] })
  @LogActivity('secret.rotated', { entityType: 'secret', details: secretDetails })
  rotate(
    @CurrentActor() actor: Actor,
    @RouteCompany() companyId: string | undefined,
    @Param('secretId') secretId: string,
    @Body() dto: RotateSecretDto,
  ): Promise<SecretResponseDto> {
    return this.secrets.rotate(actor, companyId, secretId, dto);
  }

  /** Hard delete with all versions; references to it fail at resolution. Returns the deleted metadata. */
  @Delete('secrets/:secretId')
  @Authorize({ callers: ['board'] })
  @LogActivity('secret.deleted', { entityType: 'secret', details: secretDetails })
  remove(
    @CurrentActor() actor: Actor,
    @RouteCompany() companyId: string | undefined,
    @Param('secretId') secretId: string,
  ): Promise<SecretResponseDto> {
    return this.secrets.remove(actor, companyId, secretId);
  }
}
