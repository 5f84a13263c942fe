import { Module } from '@nestjs/common';
import { InboxService } from './inbox.service';
import { PreferencesController } from './preferences.controller';
import { PreferencesRepository } from './preferences.repository';
import { ResourceMembershipsService } from './resource-memberships.service';
import { SidebarPreferencesService } from './sidebar-preferences.service';

@Module({
  controllers: [PreferencesController],
  providers: [PreferencesRepository, ResourceMembershipsService, SidebarPreferencesService, InboxService],
  // projects clears the memberships of a deleted project
  exports: [PreferencesRepository],
})
export class PreferencesModule {}
