import { ApiDomainErrors } from '../../common/errors/api-domain-errors.decorator';
import { PREFERENCES_ERRORS } from './preferences.errors';
import { NoActivity } from '../../common/activity/log-activity.decorator';
import { Body, Controller, Get, HttpCode, Param, Post, Put } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import type { Actor } from '../../common/auth/actor';
import { Authorize } from '../../common/auth/authorize.decorator';
import { CurrentActor } from '../../common/auth/current-actor.decorator';
import {
  CompanySidebarPreferencesDto,
  CompanySidebarPreferencesResponseDto,
  CreateInboxDismissalDto,
  GlobalSidebarPreferencesDto,
  GlobalSidebarPreferencesResponseDto,
  InboxDismissalDto,
  MembershipStateDto,
  ResourceMembershipDto,
  ResourceMembershipsDto,
  SidebarBadgesDto,
} from './dto/preferences.dto';
import { InboxService } from './inbox.service';
import { ResourceMembershipsService } from './resource-memberships.service';
import { SidebarPreferencesService } from './sidebar-preferences.service';

/** Per-user curation of the board UI; always the calling board user's own records. */
@ApiTags('preferences')
@ApiDomainErrors(PREFERENCES_ERRORS)
@Controller()
export class PreferencesController {
  constructor(
    private readonly memberships: ResourceMembershipsService,
    private readonly sidebar: SidebarPreferencesService,
    private readonly inbox: InboxService,
  ) {}

  /** `{ projectMemberships, agentMemberships, updatedAt }`; a resource without a stored row is `joined`; updatedAt null if never changed. */
  @Get('companies/:companyId/resource-memberships/me')
  @Authorize({ callers: ['board'] })
  myMemberships(@CurrentActor() actor: Actor, @Param('companyId') companyId: string): Promise<ResourceMembershipsDto> {
    return this.memberships.mine(actor, companyId);
  }

  /** Join or leave a project of the company (404 otherwise); the same state is a no-op. */
  @Put('companies/:companyId/resource-memberships/me/projects/:projectId')
  @NoActivity('the service records the change only when the membership changes')
  @Authorize({ callers: ['board'] })
  setProject(
    @CurrentActor() actor: Actor,
    @Param('companyId') companyId: string,
    @Param('projectId') projectId: string,
    @Body() dto: MembershipStateDto,
  ): Promise<ResourceMembershipDto> {
    return this.memberships.set(actor, companyId, 'project', projectId, dto.state);
  }

  /** Join or leave an agent of the company (404 otherwise); the same state is a no-op. */
  @Put('companies/:companyId/resource-memberships/me/agents/:agentId')
  @NoActivity('the service records the change only when the membership changes')
  @Authorize({ callers: ['board'] })
  setAgent(
    @CurrentActor() actor: Actor,
    @Param('companyId') companyId: string,
    @Param('agentId') agentId: string,
    @Body() dto: MembershipStateDto,
  ): Promise<ResourceMembershipDto> {
    return this.memberships.set(actor, companyId, 'agent', agentId, dto.state);
  }

  /** Global sidebar preferences `{ collapsed, companyOrder, updatedAt }` (defaults until first PUT). */
  @Get('sidebar-preferences/me')
  @Authorize({ callers: ['board'] })
  getGlobal(@CurrentActor() actor: Actor): Promise<GlobalSidebarPreferencesResponseDto> {
    return this.sidebar.getGlobal(actor);
  }

  /** Replaces the global sidebar preferences (omitted fields reset to their defaults). */
  @Put('sidebar-preferences/me')
  @NoActivity('a personal preference of the caller, not a change to a company')
  @Authorize({ callers: ['board'] })
  putGlobal(@CurrentActor() actor: Actor, @Body() dto: GlobalSidebarPreferencesDto): Promise<GlobalSidebarPreferencesResponseDto> {
    return this.sidebar.putGlobal(actor, dto);
  }

  /** Company sidebar preferences `{ companyId, projectOrder, agentOrder, collapsedSections, updatedAt }`. */
  @Get('companies/:companyId/sidebar-preferences/me')
  @Authorize({ callers: ['board'] })
  getCompany(@CurrentActor() actor: Actor, @Param('companyId') companyId: string): Promise<CompanySidebarPreferencesResponseDto> {
    return this.sidebar.getCompany(actor, companyId);
  }

  /** Replaces the company sidebar preferences; order lists may only name the company's projects and agents (422). */
  @Put('companies/:companyId/sidebar-preferences/me')
  @NoActivity('a personal preference of the caller, not a change to a company')
  @Authorize({ callers: ['board'] })
  putCompany(
    @CurrentActor() actor: Actor,
    @Param('companyId') companyId: string,
    @Body() dto: CompanySidebarPreferencesDto,
  ): Promise<CompanySidebarPreferencesResponseDto> {
    return this.sidebar.putCompany(actor, companyId, dto);
  }

  /** `{ approvals, joinRequests, failedRuns, inbox }`: pending approvals and join requests, runs failed in 24 h, undismissed inbox items. */
  @Get('companies/:companyId/sidebar-badges')
  @Authorize({ callers: ['board'] })
  badges(@CurrentActor() actor: Actor, @Param('companyId') companyId: string): Promise<SidebarBadgesDto> {
    return this.inbox.badges(actor, companyId);
  }

  /** The user's active dismissals (snoozes whose time has passed are no longer listed). */
  @Get('companies/:companyId/inbox-dismissals')
  @Authorize({ callers: ['board'] })
  listDismissals(@CurrentActor() actor: Actor, @Param('companyId') companyId: string): Promise<InboxDismissalDto[]> {
    return this.inbox.listDismissals(actor, companyId);
  }

  /** Dismiss (default) or snooze an inbox item; snooze needs a future `snoozedUntil`, dismiss forbids it. */
  @Post('companies/:companyId/inbox-dismissals')
  @NoActivity('a personal inbox state of the caller, not a change to a company')
  @HttpCode(201)
  @Authorize({ callers: ['board'] })
  dismiss(
    @CurrentActor() actor: Actor,
    @Param('companyId') companyId: string,
    @Body() dto: CreateInboxDismissalDto,
  ): Promise<InboxDismissalDto> {
    return this.inbox.dismiss(actor, companyId, dto);
  }
}
