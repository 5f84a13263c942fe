import { Module } from '@nestjs/common';
import { AccessModule } from '../access/access.module';
import { AdminUsersService } from './admin-users.service';
import { InstanceController } from './instance.controller';
import { InstanceSettingsService } from './instance-settings.service';

/** Instance settings, user administration, scheduler overview. */
@Module({
  imports: [AccessModule],
  controllers: [InstanceController],
  providers: [InstanceSettingsService, AdminUsersService],
  exports: [InstanceSettingsService],
})
export class InstanceModule {}
