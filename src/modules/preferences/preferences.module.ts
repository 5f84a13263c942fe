import { Module } from '@nestjs/common';
import { InboxService } from './inbox.service';
import { PreferencesController } from './preferences.controller';
import { PreferencesRepository } from './preferences.repository';
import { ResourceMembershipsService } from './resource-memberships.service';
import { SidebarPreferencesService } from './sidebar-preferences.service';

/**
 * A user's preferences in a company: inbox dismissals, resource memberships and the sidebar
 * (`inbox_dismissals`, `resource_memberships`, `sidebar_preferences`).
 */
@Module({
  controllers: [PreferencesController],
  providers: [PreferencesRepository, ResourceMembershipsService, SidebarPreferencesService, InboxService],
  // projects clears the memberships of a deleted project
  exports: [PreferencesRepository],
})
export class PreferencesModule {}
