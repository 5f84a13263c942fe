import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { LogActivity } from '../../common/activity/log-activity.decorator';
import type { Actor } from '../../common/auth/actor';
import { Authorize } from '../../common/auth/authorize.decorator';
import { CurrentActor } from '../../common/auth/current-actor.decorator';
import { ApiDomainErrors } from '../../common/errors/api-domain-errors.decorator';
import {
  CreateMyUserSecretDto,
  CreateUserSecretDefinitionDto,
  MyUserSecretDto,
  MyUserSecretEntryDto,
  RotateMyUserSecretDto,
  UpdateUserSecretDefinitionDto,
  UserSecretCoverageDto,
  UserSecretDefinitionDto,
} from './dto/user-secret.dto';
import { SECRET_ERRORS } from './secrets.errors';
import { UserSecretsService } from './user-secrets.service';

/** Activity names the definition, never a value. */
const definitionDetails = (c: { result: Record<string, unknown> }) => ({ key: c.result.key, name: c.result.name, status: c.result.status });
const valueDetails = (c: { result: Record<string, unknown> }) => ({ key: c.result.key, version: c.result.latestVersion });

@ApiTags('secrets')
@ApiDomainErrors(SECRET_ERRORS)
@Controller('companies/:companyId')
export class UserSecretsController {
  constructor(private readonly userSecrets: UserSecretsService) {}

  /** Secrets each board user provides for themselves (definitions: key, name, how to use it). */
  @Get('user-secret-definitions')
  @Authorize({ callers: ['board'] })
  definitions(@Param('companyId') companyId: string): Promise<UserSecretDefinitionDto[]> {
    return this.userSecrets.definitions(companyId);
  }

  /** Declares a user secret; `key` unique in the company (409). */
  @Post('user-secret-definitions')
  @HttpCode(201)
  @Authorize({ callers: ['board'] })
  @LogActivity('user_secret_definition.created', { entityType: 'user_secret_definition', details: definitionDetails })
  createDefinition(
    @CurrentActor() actor: Actor,
    @Param('companyId') companyId: string,
    @Body() dto: CreateUserSecretDefinitionDto,
  ): Promise<UserSecretDefinitionDto> {
    return this.userSecrets.createDefinition(actor, companyId, dto);
  }

  @Patch('user-secret-definitions/:definitionId')
  @Authorize({ callers: ['board'] })
  @LogActivity('user_secret_definition.updated', { entityType: 'user_secret_definition', details: definitionDetails })
  updateDefinition(
    @Param('companyId') companyId: string,
    @Param('definitionId') definitionId: string,
    @Body() dto: UpdateUserSecretDefinitionDto,
  ): Promise<UserSecretDefinitionDto> {
    return this.userSecrets.updateDefinition(companyId, definitionId, dto);
  }

  /** Deletes the definition and every user's value of it. */
  @Delete('user-secret-definitions/:definitionId')
  @Authorize({ callers: ['board'] })
  @LogActivity('user_secret_definition.deleted', { entityType: 'user_secret_definition', details: definitionDetails })
  removeDefinition(@Param('companyId') companyId: string, @Param('definitionId') definitionId: string): Promise<UserSecretDefinitionDto> {
    return this.userSecrets.removeDefinition(companyId, definitionId);
  }

  /** How many active members have set a value, how many have not, and values of former members. */
  @Get('user-secret-definitions/:definitionId/coverage')
  @Authorize({ callers: ['board'] })
  coverage(@Param('companyId') companyId: string, @Param('definitionId') definitionId: string): Promise<UserSecretCoverageDto> {
    return this.userSecrets.coverage(companyId, definitionId);
  }

  /** The calling user's own values, each with its definition; never the values. */
  @Get('me/user-secrets')
  @Authorize({ callers: ['board'] })
  mine(@CurrentActor() actor: Actor, @Param('companyId') companyId: string): Promise<MyUserSecretEntryDto[]> {
    return this.userSecrets.mine(actor, companyId);
  }

  /** Sets the caller's value of a definition (encrypted; 409 when set already: rotate it). */
  @Post('me/user-secrets')
  @HttpCode(201)
  @Authorize({ callers: ['board'] })
  @LogActivity('user_secret.created', { entityType: 'user_secret', details: valueDetails })
  createMine(
    @CurrentActor() actor: Actor,
    @Param('companyId') companyId: string,
    @Body() dto: CreateMyUserSecretDto,
  ): Promise<MyUserSecretDto> {
    return this.userSecrets.createMine(actor, companyId, dto);
  }

  /** Replaces the caller's value (version + 1). */
  @Post('me/user-secrets/:userSecretId/rotate')
  @HttpCode(200)
  @Authorize({ callers: ['board'] })
  @LogActivity('user_secret.rotated', { entityType: 'user_secret', details: valueDetails })
  rotateMine(
    @CurrentActor() actor: Actor,
    @Param('companyId') companyId: string,
    @Param('userSecretId') id: string,
    @Body() dto: RotateMyUserSecretDto,
  ): Promise<MyUserSecretDto> {
    return this.userSecrets.rotateMine(actor, companyId, id, dto.value);
  }

  /** The same as rotate (the board UI edits a value with PATCH). */
  @Patch('me/user-secrets/:userSecretId')
  @Authorize({ callers: ['board'] })
  @LogActivity('user_secret.rotated', { entityType: 'user_secret', details: valueDetails })
  updateMine(
    @CurrentActor() actor: Actor,
    @Param('companyId') companyId: string,
    @Param('userSecretId') id: string,
    @Body() dto: RotateMyUserSecretDto,
  ): Promise<MyUserSecretDto> {
    return this.userSecrets.rotateMine(actor, companyId, id, dto.value);
  }

  @Delete('me/user-secrets/:userSecretId')
  @Authorize({ callers: ['board'] })
  @LogActivity('user_secret.deleted', { entityType: 'user_secret', details: valueDetails })
  removeMine(
    @CurrentActor() actor: Actor,
    @Param('companyId') companyId: string,
    @Param('userSecretId') id: string,
  ): Promise<MyUserSecretDto> {
    return this.userSecrets.removeMine(actor, companyId, id);
  }
}
