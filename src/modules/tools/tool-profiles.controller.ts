import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { LogActivity } from '../../common/activity/log-activity.decorator';
import type { Actor } from '../../common/auth/actor';
import { Authorize } from '../../common/auth/authorize.decorator';
import { CurrentActor } from '../../common/auth/current-actor.decorator';
import { RouteCompany } from '../../common/auth/route-company.decorator';
import { ApiDomainErrors } from '../../common/errors/api-domain-errors.decorator';
import {
  BindToolProfileDto,
  CreateToolProfileDto,
  EffectiveProfilesDto,
  ProfileEntryDto,
  ProfileEntryInputDto,
  ToolProfileDto,
  ToolProfileListDto,
  UnbindToolProfileDto,
  UpdateProfileEntryDto,
  UpdateToolProfileDto,
} from './dto/tool-profile.dto';
import { ToolProfilesService } from './tool-profiles.service';
import { TOOL_ERRORS } from './tools.errors';

const profileDetails = (c: { result: Record<string, unknown> }) => ({
  name: c.result.name,
  profileKey: c.result.profileKey,
  defaultAction: c.result.defaultAction,
});
const entryDetails = (c: { result: Record<string, unknown> }) => ({
  profileId: c.result.profileId,
  selectorType: c.result.selectorType,
  policy: c.result.policy,
  connectionId: c.result.connectionId,
  toolName: c.result.toolName,
});

@ApiTags('tools')
@ApiDomainErrors(TOOL_ERRORS)
@Controller()
export class ToolProfilesController {
  constructor(private readonly profiles: ToolProfilesService) {}

  /** The company's tool profiles with their entries, bindings and a summary. */
  @Get('companies/:companyId/tools/profiles')
  @Authorize({ callers: ['board'] })
  async list(@Param('companyId') companyId: string): Promise<ToolProfileListDto> {
    return { profiles: await this.profiles.list(companyId) };
  }

  /**
   * A profile: per-tool policies over the company's connections (`entries`: a connection, a tool
   * by name, a catalog entry or an application, each allow, ask or deny) and what a tool no entry
   * names gets (`defaultAction`, deny by default). Bind it to the company or to agents.
   */
  @Post('companies/:companyId/tools/profiles')
  @HttpCode(201)
  @Authorize({ callers: ['board'] })
  @LogActivity('tool_profile.created', { entityType: 'tool_profile', details: profileDetails })
  create(@CurrentActor() actor: Actor, @Param('companyId') companyId: string, @Body() dto: CreateToolProfileDto): Promise<ToolProfileDto> {
    return this.profiles.create(actor, companyId, dto);
  }

  /** Agents and the company it is bound to, its entries, and every remote tool with the policy this agent gets. */
  @Get('companies/:companyId/tools/profiles/effective/agents/:agentId')
  @Authorize({ callers: ['board'] })
  effective(@Param('companyId') companyId: string, @Param('agentId') agentId: string): Promise<EffectiveProfilesDto> {
    return this.profiles.effective(companyId, agentId);
  }

  /** Binds the profile to the company (`targetType: company`, `targetId`: the company id) or to an agent. */
  @Post('companies/:companyId/tools/profiles/:profileId/bind')
  @HttpCode(200)
  @Authorize({ callers: ['board'] })
  @LogActivity('tool_profile.bound', {
    entityType: 'tool_profile',
    details: (c) => ({ targetType: c.body.targetType, targetId: c.body.targetId }),
  })
  bind(
    @CurrentActor() actor: Actor,
    @Param('companyId') companyId: string,
    @Param('profileId') profileId: string,
    @Body() dto: BindToolProfileDto,
  ): Promise<ToolProfileDto> {
    return this.profiles.bind(actor, companyId, profileId, dto);
  }

  @Post('companies/:companyId/tools/profiles/:profileId/unbind')
  @HttpCode(200)
  @Authorize({ callers: ['board'] })
  @LogActivity('tool_profile.unbound', {
    entityType: 'tool_profile',
    details: (c) => ({ targetType: c.body.targetType, targetId: c.body.targetId }),
  })
  unbind(
    @Param('companyId') companyId: string,
    @Param('profileId') profileId: string,
    @Body() dto: UnbindToolProfileDto,
  ): Promise<ToolProfileDto> {
    return this.profiles.unbind(companyId, profileId, dto);
  }

  @Patch('tool-profiles/:profileId')
  @Authorize({ callers: ['board'] })
  @LogActivity('tool_profile.updated', {
    entityType: 'tool_profile',
    details: (c) => ({ ...profileDetails(c), changed: Object.keys(c.body) }),
  })
  update(
    @CurrentActor() actor: Actor,
    @RouteCompany() companyId: string | undefined,
    @Param('profileId') id: string,
    @Body() dto: UpdateToolProfileDto,
  ): Promise<ToolProfileDto> {
    return this.profiles.update(actor, companyId, id, dto);
  }

  /** Deletes the profile with its entries and bindings. */
  @Delete('tool-profiles/:profileId')
  @Authorize({ callers: ['board'] })
  @LogActivity('tool_profile.deleted', { entityType: 'tool_profile', details: profileDetails })
  remove(
    @CurrentActor() actor: Actor,
    @RouteCompany() companyId: string | undefined,
    @Param('profileId') id: string,
  ): Promise<ToolProfileDto> {
    return this.profiles.remove(actor, companyId, id);
  }

  /** One policy: `policy` allow, ask or deny (or the UI's `effect`: include = allow, exclude = deny); "ask" only for remote connections. */
  @Post('tool-profiles/:profileId/entries')
  @HttpCode(201)
  @Authorize({ callers: ['board'] })
  @LogActivity('tool_profile.entry_added', { entityType: 'tool_profile', entityId: (c) => c.params.profileId, details: entryDetails })
  addEntry(
    @CurrentActor() actor: Actor,
    @RouteCompany() companyId: string | undefined,
    @Param('profileId') id: string,
    @Body() dto: ProfileEntryInputDto,
  ): Promise<ProfileEntryDto> {
    return this.profiles.addEntry(actor, companyId, id, dto);
  }

  @Patch('tool-profile-entries/:entryId')
  @Authorize({ callers: ['board'] })
  @LogActivity('tool_profile.entry_updated', {
    entityType: 'tool_profile',
    entityId: (c) => c.result.profileId as string,
    details: entryDetails,
  })
  updateEntry(
    @CurrentActor() actor: Actor,
    @RouteCompany() companyId: string | undefined,
    @Param('entryId') id: string,
    @Body() dto: UpdateProfileEntryDto,
  ): Promise<ProfileEntryDto> {
    return this.profiles.updateEntry(actor, companyId, id, dto);
  }

  @Delete('tool-profile-entries/:entryId')
  @Authorize({ callers: ['board'] })
  @LogActivity('tool_profile.entry_removed', {
    entityType: 'tool_profile',
    entityId: (c) => c.result.profileId as string,
    details: entryDetails,
  })
  removeEntry(
    @CurrentActor() actor: Actor,
    @RouteCompany() companyId: string | undefined,
    @Param('entryId') id: string,
  ): Promise<ProfileEntryDto> {
    return this.profiles.removeEntry(actor, companyId, id);
  }
}
