import { Module, OnModuleInit } from '@nestjs/common';
import { AuthRegistry } from '../../common/auth/auth-registry';
import { AccessPermissions } from './access-permissions.service';
import { InvitesController } from './invites.controller';
import { InvitesRepository } from './invites.repository';
import { InvitesService } from './invites.service';
import { JoinRequestsController } from './join-requests.controller';
import { JoinRequestsRepository } from './join-requests.repository';
import { JoinRequestsService } from './join-requests.service';
import { JoinedAgents } from './joined-agents.port';
import { MembersController } from './members.controller';
import { MembersService } from './members.service';
import { MembershipChecker } from './membership-checker';
import { MembershipsRepository } from './memberships.repository';
import { MembershipsService } from './memberships.service';
import { StorageModule } from '../storage/storage.module';
import { AuthorizationModule } from '../authorization/authorization.module';

/** Members and grants, invites, join requests; registers the membership checker with the guard. */
@Module({
  imports: [AuthorizationModule, StorageModule],
  controllers: [MembersController, InvitesController, JoinRequestsController],
  providers: [
    MembershipsService,
    MembersService,
    AccessPermissions,
    InvitesService,
    JoinRequestsService,
    MembershipChecker,
    MembershipsRepository,
    InvitesRepository,
    JoinRequestsRepository,
    JoinedAgents,
  ],
  exports: [MembershipsService, AccessPermissions, InvitesService, JoinedAgents],
})
export class AccessModule implements OnModuleInit {
  constructor(
    private readonly registry: AuthRegistry,
    private readonly checker: MembershipChecker,
  ) {}

  onModuleInit(): void {
    this.registry.membershipChecker = this.checker;
  }
}
