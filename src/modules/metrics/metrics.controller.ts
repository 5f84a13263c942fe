import { Controller, Get, HttpStatus, Req, Res } from '@nestjs/common';
import { ApiExtraModels, ApiOkResponse, ApiProduces, ApiSecurity, ApiTags } from '@nestjs/swagger';
import type { FastifyReply as Response, FastifyRequest as Request } from 'fastify';
import { Public } from '../../common/auth/authorize.decorator';
import { LocalPeers } from '../../common/auth/local-peers';
import { AppConfig } from '../../config/app-config';
import { METRICS_SECURITY } from '../../openapi';
import { LivenessDto, ReadinessDto } from './dto/probe.dto';
import { metricsAccess } from './metrics-access';
import { METRICS_ERRORS, metricsError } from './metrics.errors';
import { ApiDomainErrors } from '../../common/errors/api-domain-errors.decorator';
import { MetricsService } from './metrics.service';

/** Operators' endpoints: Prometheus metrics and the liveness/readiness probes. */
@ApiTags('system')
@ApiExtraModels(LivenessDto, ReadinessDto)
@Controller()
export class MetricsController {
  constructor(
    private readonly metrics: MetricsService,
    private readonly config: AppConfig,
    private readonly peers: LocalPeers,
  ) {}

  /**
   * Prometheus text format: `http_requests_total` and `http_request_duration_seconds` (by route
   * template and status), `heartbeat_runs` (by status), `heartbeat_wakeups` (queued, deferred,
   * claimed), `heartbeat_wake_to_start_seconds`, `heartbeat_run_duration_seconds`,
   * `budget_incidents`, `db_pool_connections`, `nodejs_eventloop_lag_seconds` and the process
   * defaults. With `SERVICE_METRICS_TOKEN` set, `Authorization: Bearer <token>` is required (401);
   * without it only loopback callers are served (403), never an agent or plugin process of the host,
   * unless `SERVICE_METRICS_ALLOW_REMOTE=true`.
   */
  @Get('metrics')
  @Public()
  // the token is optional: required only when SERVICE_METRICS_TOKEN is set
  @ApiSecurity({})
  @ApiSecurity(METRICS_SECURITY)
  @ApiProduces('text/plain')
  @ApiOkResponse({ description: 'Prometheus exposition format', schema: { type: 'string' } })
  @ApiDomainErrors(METRICS_ERRORS)
  async scrape(@Req() req: Request, @Res() res: Response): Promise<void> {
    let access = metricsAccess(this.config.metrics, req.ip, req.headers.authorization);
    // agents and plugin workers on this host are not "local": they count as remote callers
    if (access === 'loopback' && (await this.peers.isAgent(req.socket))) access = 'remote_refused';
    if (access === 'token_required' || access === 'bad_token') {
      throw metricsError(
        'metrics_token_required',
        access === 'bad_token' ? 'Invalid metrics token' : 'A metrics token is required (Authorization: Bearer <SERVICE_METRICS_TOKEN>)',
      );
    }
    if (access === 'remote_refused')
      throw metricsError(
        'metrics_loopback_only',
        'Metrics are served to loopback callers only (set SERVICE_METRICS_TOKEN or SERVICE_METRICS_ALLOW_REMOTE)',
      );
    const body = await this.metrics.text();
    await res.status(200).header('Content-Type', this.metrics.contentType).header('Cache-Control', 'no-store').send(body);
  }

  /** Liveness: the process runs and its event loop answers (no database call). */
  @Get('health/live')
  @Public()
  live(): LivenessDto {
    return { status: 'ok', uptimeSec: Math.round(process.uptime()) };
  }

  /** Readiness: 503 while the database is unreachable, a migration runs, or migrations are pending. */
  @Get('health/ready')
  @Public()
  async ready(@Res({ passthrough: true }) res: Response): Promise<ReadinessDto> {
    const r = await this.metrics.readiness();
    const ready = r.reachable && !r.migrating && !r.pendingMigrations;
    if (!ready) res.status(HttpStatus.SERVICE_UNAVAILABLE);
    return {
      status: ready ? 'ready' : 'not_ready',
      databaseReachable: r.reachable,
      migrating: r.migrating,
      pendingMigrations: r.pendingMigrations,
    };
  }
}
