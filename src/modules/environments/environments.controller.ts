import { Controller, Get, Param } from '@nestjs/common';
import { ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { Authorize } from '../../common/auth/authorize.decorator';

/** What the service offers besides its own host for running agents: nothing (`sandboxProviders` is empty). */
export class EnvironmentCapabilitiesDto {
  /** `local`: runs start on the service's host, each agent under its own OS identity */
  drivers: string[];
  /** none: this service runs no remote sandboxes */
  sandboxProviders: Record<string, never>;
}

/**
 * Execution environments, as the board UI's new-agent form asks for them. This service runs every
 * agent on its own host (under the agent's OS identity, in its project workspace or home) and has no
 * selectable or managed environments: the list is empty, and agents are created with
 * `defaultEnvironmentId` null. (The guard checks the caller's access to :companyId.)
 */
@ApiTags('environments')
@Controller('companies/:companyId/environments')
export class EnvironmentsController {
  /** Always `[]`: runs happen on the service's host; there is nothing to choose. */
  @Get()
  @Authorize({ callers: ['board'] })
  @ApiOkResponse({ description: 'always an empty list', schema: { type: 'array', items: { type: 'object' }, example: [] } })
  list(@Param('companyId') _companyId: string): never[] {
    return [];
  }

  /** `{ drivers: ["local"], sandboxProviders: {} }`. */
  @Get('capabilities')
  @Authorize({ callers: ['board'] })
  capabilities(@Param('companyId') _companyId: string): EnvironmentCapabilitiesDto {
    return { drivers: ['local'], sandboxProviders: {} };
  }
}
