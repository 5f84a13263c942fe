import { ApiDomainErrors } from '../../common/errors/api-domain-errors.decorator';
import { INSTANCE_ERRORS } from './instance.errors';
import { InstanceAudit } from '../../common/activity/log-activity.decorator';
import { Body, Controller, Get, HttpCode, Param, Patch, Post, Put, Query, Req } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import type { FastifyRequest as Request } from 'fastify';
import type { Actor } from '../../common/auth/actor';
import { Authorize } from '../../common/auth/authorize.decorator';
import { CurrentActor } from '../../common/auth/current-actor.decorator';
import { UserResponseDto } from './user.types';
import { AdminUsersService } from './admin-users.service';
import { AdminUsersQueryDto, CompanyAccessResponseDto, PutCompanyAccessDto } from './dto/admin-users.dto';
import { ExperimentalSettingsDto, GeneralSettingsDto, InstanceSettingsDto, PatchInstanceSettingsDto } from './dto/instance-settings.dto';
import { assertInstanceAdmin } from '../../common/auth/instance-admin';
import { InstanceSettingsService } from './instance-settings.service';
import { DatabaseBackupsService } from './database-backups.service';
import { DatabaseBackupDto, DatabaseBackupListQueryDto } from './dto/database-backups.dto';

const rawBody = (req: Request) =>
  req.body && typeof req.body === 'object' && !Array.isArray(req.body) ? (req.body as Record<string, unknown>) : {};

/** Instance administration; every route needs an instance admin (the local board is one). */
@ApiTags('instance')
@ApiDomainErrors(INSTANCE_ERRORS)
@Controller()
export class InstanceController {
  constructor(
    private readonly settings: InstanceSettingsService,
    private readonly users: AdminUsersService,
    private readonly backups: DatabaseBackupsService,
  ) {}

  /** General and experimental settings in one object (the same values as the two block routes). */
  @Get('instance/settings')
  @Authorize({ callers: ['board'] })
  all(@CurrentActor() actor: Actor): Promise<InstanceSettingsDto> {
    assertInstanceAdmin(actor);
    return this.settings.all();
  }

  /** Partial update of `general`, `experimental` or both in one transaction; unknown blocks or fields and nulls are rejected (400). */
  @Patch('instance/settings')
  @InstanceAudit('instance.settings_updated')
  @Authorize({ callers: ['board'] })
  patchAll(@CurrentActor() actor: Actor, @Req() req: Request, @Body() dto: PatchInstanceSettingsDto): Promise<InstanceSettingsDto> {
    assertInstanceAdmin(actor);
    return this.settings.patchAll(rawBody(req), dto);
  }

  /**
   * Writes a compressed logical backup of the service's database into the backup directory
   * (`SERVICE_BACKUP_DIR`, default `<data dir>/backups`) and answers with its file name, size and
   * duration: `pg_dump --format=custom` when a pg_dump at least as new as the server exists
   * (`SERVICE_PG_DUMP_PATH`), else the built-in dumper. Restore with `npm run restore -- <file>`.
   * 503 `backup_failed` when the dump fails (the attempt stays listed as failed).
   */
  @Post('instance/database-backups')
  @InstanceAudit('instance.database_backup_created')
  @Authorize({ callers: ['board'] })
  createBackup(@CurrentActor() actor: Actor): Promise<DatabaseBackupDto> {
    assertInstanceAdmin(actor);
    return this.backups.create('manual', actor);
  }

  /** Backups, newest first (manual and scheduled; failed attempts included, deleted ones not). */
  @Get('instance/database-backups')
  @Authorize({ callers: ['board'] })
  listBackups(@CurrentActor() actor: Actor, @Query() q: DatabaseBackupListQueryDto): Promise<DatabaseBackupDto[]> {
    assertInstanceAdmin(actor);
    return this.backups.list(q.limit);
  }

  /** Instance-wide general settings. */
  @Get('instance/settings/general')
  @Authorize({ callers: ['board'] })
  general(@CurrentActor() actor: Actor): Promise<GeneralSettingsDto> {
    assertInstanceAdmin(actor);
    return this.settings.general();
  }

  /** Partial update; unknown fields and nulls are rejected (400). */
  @Patch('instance/settings/general')
  @InstanceAudit('instance.settings_general_updated')
  @Authorize({ callers: ['board'] })
  patchGeneral(@CurrentActor() actor: Actor, @Req() req: Request, @Body() dto: GeneralSettingsDto): Promise<GeneralSettingsDto> {
    assertInstanceAdmin(actor);
    return this.settings.patch('general', rawBody(req), dto);
  }

  /** Feature flags, e.g. `builtInAgents`. */
  @Get('instance/settings/experimental')
  @Authorize({ callers: ['board'] })
  experimental(@CurrentActor() actor: Actor): Promise<ExperimentalSettingsDto> {
    assertInstanceAdmin(actor);
    return this.settings.experimental();
  }

  /** Partial update of the feature flags; unknown flags and nulls are rejected (400). */
  @Patch('instance/settings/experimental')
  @InstanceAudit('instance.settings_experimental_updated')
  @Authorize({ callers: ['board'] })
  patchExperimental(
    @CurrentActor() actor: Actor,
    @Req() req: Request,
    @Body() dto: ExperimentalSettingsDto,
  ): Promise<ExperimentalSettingsDto> {
    assertInstanceAdmin(actor);
    return this.settings.patch('experimental', rawBody(req), dto);
  }

  /** Users of the instance; `query` searches email, name and slug. */
  @Get('admin/users')
  @Authorize({ callers: ['board'] })
  listUsers(@CurrentActor() actor: Actor, @Query() q: AdminUsersQueryDto): Promise<UserResponseDto[]> {
    assertInstanceAdmin(actor);
    return this.users.list(q.query);
  }

  /** Makes the user an instance admin (idempotent). */
  @Post('admin/users/:userId/promote-instance-admin')
  @InstanceAudit('instance.admin_promoted')
  @HttpCode(200)
  @Authorize({ callers: ['board'] })
  promote(@CurrentActor() actor: Actor, @Param('userId') userId: string): Promise<UserResponseDto> {
    assertInstanceAdmin(actor);
    return this.users.promote(userId);
  }

  /** Removes the instance admin role; the last instance admin cannot be demoted (409). */
  @Post('admin/users/:userId/demote-instance-admin')
  @InstanceAudit('instance.admin_demoted')
  @HttpCode(200)
  @Authorize({ callers: ['board'] })
  demote(@CurrentActor() actor: Actor, @Param('userId') userId: string): Promise<UserResponseDto> {
    assertInstanceAdmin(actor);
    return this.users.demote(userId);
  }

  /** The user's company memberships. */
  @Get('admin/users/:userId/company-access')
  @Authorize({ callers: ['board'] })
  companyAccess(@CurrentActor() actor: Actor, @Param('userId') userId: string): Promise<CompanyAccessResponseDto> {
    assertInstanceAdmin(actor);
    return this.users.companyAccess(userId);
  }

  /** Replaces the user's company access: listed companies active, every other membership inactive. */
  @Put('admin/users/:userId/company-access')
  @InstanceAudit('instance.company_access_updated')
  @Authorize({ callers: ['board'] })
  putCompanyAccess(
    @CurrentActor() actor: Actor,
    @Param('userId') userId: string,
    @Body() dto: PutCompanyAccessDto,
  ): Promise<CompanyAccessResponseDto> {
    assertInstanceAdmin(actor);
    return this.users.replaceCompanyAccess(actor, userId, dto.companies);
  }
}
