import { Module } from '@nestjs/common';
import { InboxService } from './inbox.service';
import { PreferencesController } from './preferences.controller';
import { ResourceMembershipsService } from './resource-memberships.service';
import { SidebarPreferencesService } from './sidebar-preferences.service';

@Module({
  controllers: [PreferencesController],
  providers: [ResourceMembershipsService, SidebarPreferencesService, InboxService],
})
export class PreferencesModule {}
