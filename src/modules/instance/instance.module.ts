import { Module } from '@nestjs/common';
import { AccessModule } from '../access/access.module';
import { AdminUsersService } from './admin-users.service';
import { InstanceController } from './instance.controller';
import { InstanceRepository } from './instance.repository';
import { InstanceSettingsService } from './instance-settings.service';
import { DatabaseBackupsScheduler } from './database-backups.jobs';
import { DatabaseBackupsRepository } from './database-backups.repository';
import { DatabaseBackupsService } from './database-backups.service';

/** Instance settings, user administration, database backups. */
@Module({
  imports: [AccessModule],
  controllers: [InstanceController],
  providers: [
    InstanceRepository,
    InstanceSettingsService,
    AdminUsersService,
    DatabaseBackupsRepository,
    DatabaseBackupsService,
    DatabaseBackupsScheduler,
  ],
  exports: [InstanceSettingsService],
})
export class InstanceModule {}
