import { Controller, Get, HttpStatus, Res } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import type { FastifyReply as Response } from 'fastify';
import type { Actor } from '../../common/auth/actor';
import { Authorize, Public } from '../../common/auth/authorize.decorator';
import { CurrentActor } from '../../common/auth/current-actor.decorator';
import { CompanyAccessService } from '../../common/auth/company-access.service';
import { AppConfig } from '../../config/app-config';
import { VERSION } from '../../version';
import { HealthDto, IdentityDto } from './dto/system.dto';
import { SystemRepository } from './system.repository';

@ApiTags('system')
@Controller()
export class SystemController {
  constructor(
    private readonly config: AppConfig,
    private readonly system: SystemRepository,
    private readonly access: CompanyAccessService,
  ) {}

  /** Reachability: status, version, deployment mode, database reachability (503 when the database is down). */
  @Get('health')
  @Public()
  async health(@Res({ passthrough: true }) res: Response): Promise<HealthDto> {
    const started = Date.now();
    let reachable = true;
    try {
      await this.system.ping();
    } catch {
      reachable = false;
    }
    if (!reachable) res.status(HttpStatus.SERVICE_UNAVAILABLE);
    return {
      status: reachable ? 'ok' : 'degraded',
      version: VERSION,
      deploymentMode: this.config.deploymentMode,
      database: { reachable, ...(reachable ? { latencyMs: Date.now() - started } : {}) },
      time: new Date().toISOString(),
    };
  }

  /**
   * Who the credential is: persona, user or agent, scope; and, for the board UI (which decides with it
   * whether the caller may act in a company), `source`, `isInstanceAdmin`, `userId`, `companyIds`, `memberships`.
   */
  @Get('cli-auth/me')
  @Authorize({ callers: ['board', 'agent'] })
  async me(@CurrentActor() actor: Actor): Promise<IdentityDto> {
    const companyIds = (await this.access.accessibleCompanyIds(actor)) ?? [];
    if (actor.kind === 'agent') {
      return {
        source: actor.source,
        isInstanceAdmin: false,
        userId: null,
        companyIds,
        memberships: [],
        persona: 'agent',
        user: null,
        agent: { id: actor.agentId, companyId: actor.companyId },
        scope: 'company',
        companyId: actor.companyId,
        credential: actor.source,
        runId: actor.runId ?? null,
        deploymentMode: this.config.deploymentMode,
      };
    }
    return {
      source: actor.source,
      isInstanceAdmin: actor.isInstanceAdmin,
      userId: actor.userId,
      companyIds,
      memberships: [],
      persona: 'board',
      user: { id: actor.userId, isInstanceAdmin: actor.isInstanceAdmin },
      agent: null,
      scope: 'instance',
      companyId: null,
      credential: actor.source,
      runId: null,
      deploymentMode: this.config.deploymentMode,
    };
  }
}
