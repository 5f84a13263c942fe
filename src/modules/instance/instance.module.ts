import { Module } from '@nestjs/common';
import { AccessModule } from '../access/access.module';
import { AdminUsersService } from './admin-users.service';
import { InstanceController } from './instance.controller';
import { InstanceSettingsRepository } from './instance-settings.repository';
import { InstanceUsers } from './instance-users.port';
import { InstanceSettingsService } from './instance-settings.service';
import { DatabaseBackupsScheduler } from './database-backups.jobs';
import { DatabaseBackupsRepository } from './database-backups.repository';
import { DatabaseBackupsService } from './database-backups.service';

/** Instance settings, user administration, database backups. */
@Module({
  imports: [AccessModule],
  controllers: [InstanceController],
  providers: [
    InstanceSettingsRepository,
    InstanceUsers,
    InstanceSettingsService,
    AdminUsersService,
    DatabaseBackupsRepository,
    DatabaseBackupsService,
    DatabaseBackupsScheduler,
  ],
  exports: [InstanceSettingsService, InstanceUsers],
})
export class InstanceModule {}
