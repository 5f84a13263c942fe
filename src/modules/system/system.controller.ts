import { Controller, Get, HttpStatus, Res } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import type { FastifyReply as Response } from 'fastify';
import type { Actor } from '../../common/auth/actor';
import { Authorize, Public } from '../../common/auth/authorize.decorator';
import { CurrentActor } from '../../common/auth/current-actor.decorator';
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

  /** Who the credential is: persona, user or agent, scope. */
  @Get('cli-auth/me')
  @Authorize({ callers: ['board', 'agent'] })
  me(@CurrentActor() actor: Actor): IdentityDto {
    if (actor.kind === 'agent') {
      return {
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
