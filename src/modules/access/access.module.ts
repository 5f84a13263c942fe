import { Module } from '@nestjs/common';
import { recordCompanies } from '../../common/references/record-company.repository';
import { AccessPermissions } from './access-permissions.service';
import { AgentMembershipsRegistration } from './agent-memberships.port-impl';
import { MembershipCheckerRegistration } from './auth-registry.port-impl';
import { AgentMembershipsRepository } from './agent-memberships.repository';
import { AgentsModule } from '../agents/agents.module';
import { InvitesController } from './invites.controller';
import { InvitesRepository } from './invites.repository';
import { InvitesService } from './invites.service';
import { InviteSkills } from './invite-skills.port';
import { JoinRequestsController } from './join-requests.controller';
import { JoinRequestsRepository } from './join-requests.repository';
import { JoinRequestsService } from './join-requests.service';
import { MembersController } from './members.controller';
import { MembersService } from './members.service';
import { MembershipChecker } from './membership-checker';
import { MembershipsRepository } from './memberships.repository';
import { MembershipsService } from './memberships.service';
import { StorageModule } from '../storage/storage.module';
import { AuthorizationModule } from '../authorization/authorization.module';

/** Members and grants, invites, join requests; registers the membership checker with the guard. */
@Module({
  imports: [AuthorizationModule, StorageModule, AgentsModule],
  controllers: [MembersController, InvitesController, JoinRequestsController],
  providers: [
    recordCompanies('access'),
    MembershipsService,
    MembersService,
    AccessPermissions,
    InvitesService,
    InviteSkills,
    JoinRequestsService,
    MembershipChecker,
    MembershipsRepository,
    InvitesRepository,
    JoinRequestsRepository,
    AgentMembershipsRepository,
    AgentMembershipsRegistration,
    MembershipCheckerRegistration,
  ],
  exports: [MembershipsService, AccessPermissions, InvitesService, InviteSkills],
})
export class AccessModule {}
