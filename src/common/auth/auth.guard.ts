import { CanActivate, ExecutionContext, Injectable, Logger } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { DomainError, forbidden, notFound, unauthorized } from '../errors/domain-error';
import { ActorResolver } from './actor-resolver';
import { isUuid } from '../http/uuid';
import { Actor, RequestWithActor, RUN_ID_HEADER } from './actor';
import { AuthRegistry } from './auth-registry.port';
import { AUTHORIZE_KEY, AuthorizeOptions, PUBLIC_KEY } from './authorize.decorator';
import { CompanyAccessService } from './company-access.service';

/**
 * Deny by default: a route runs only if it declares its callers with @Authorize or is @Public.
 * Order: credentials (401), caller kind (403), run binding, then company access: for routes with a
 * :companyId parameter 404 unknown company (to callers who see every company; 403 to others, as for
 * another company), 403 another company; for routes naming records in their path, 404 for an
 * unknown record and another company's alike.
 */
@Injectable()
export class AuthGuard implements CanActivate {
  private readonly logger = new Logger('AuthGuard');

  constructor(
    private readonly reflector: Reflector,
    private readonly actors: ActorResolver,
    private readonly registry: AuthRegistry,
    private readonly companies: CompanyAccessService,
  ) {}

  async canActivate(ctx: ExecutionContext): Promise<boolean> {
    const targets = [ctx.getHandler(), ctx.getClass()];
    const req = ctx.switchToHttp().getRequest<RequestWithActor>();
    if (this.reflector.getAllAndOverride<boolean>(PUBLIC_KEY, targets)) {
      const actor = await this.resolveActor(req).catch(() => undefined);
      req.actor = actor?.kind === 'agent' && actor.runEnded ? undefined : actor;
      return true;
    }
    const rule = this.reflector.getAllAndOverride<AuthorizeOptions>(AUTHORIZE_KEY, targets);
    if (!rule) {
      this.logger.error(`route ${req.method} ${req.routeOptions?.url} declares no callers; refused`);
      throw forbidden('This route declares no callers');
    }
    const actor = await this.resolveActor(req);
    if (!actor) throw unauthorized();
    req.actor = actor;
    if (!rule.callers.includes(actor.kind)) {
      throw forbidden(actor.kind === 'agent' ? 'Board access required' : 'Agent authentication required', {
        reason: 'deny_unsupported_action',
      });
    }
    if (actor.kind === 'agent' && actor.runEnded && !rule.acceptsEndedRun) throw unauthorized('Run token of a run that is no longer live');
    if (actor.kind === 'agent') await this.bindRun(req, actor, rule.runBound === true);
    if (rule.runBound && (actor.kind !== 'agent' || !actor.runId)) {
      throw forbidden('This route requires an agent credential backed by a live heartbeat run', { code: 'run_required' });
    }
    const params = (req.params ?? {}) as Record<string, string>;
    if (params.companyId !== undefined) await this.companies.assertCompanyAccess(actor, params.companyId);
    else await this.resolveRouteCompany(req, actor, params, rule.answersUnknownRecords === true);
    return true;
  }

  /**
   * A route without `:companyId` that names records in its path (`/api/issues/:issueId`, `:id` of a
   * known collection) belongs to their company, resolved here once: an unknown record and another
   * company's answer the same 404 (no existence oracle); handlers find it as `@RouteCompany()`.
   */
  private async resolveRouteCompany(
    req: RequestWithActor,
    actor: Actor,
    params: Record<string, string>,
    handlerAnswers: boolean,
  ): Promise<void> {
    const found = await this.registry.routeRecords?.resolve(params, req.routeOptions?.url);
    if (!found) return;
    if (!found.companyId || !(await this.companies.canAccess(actor, found.companyId))) {
      if (handlerAnswers) return;
      // the first record's company out of reach: its 404, whatever the records after it are
      if (found.within && !(await this.companies.canAccess(actor, found.within.companyId))) throw notFound(found.within.label);
      throw notFound(found.label);
    }
    req.routeCompanyId = found.companyId;
  }

  private resolveActor(req: RequestWithActor): Promise<Actor | undefined> {
    return this.actors.resolve(req);
  }

  /**
   * X-Service-Run-Id: with a run token it must equal the token's run; with an API key it must name a
   * live run of that agent. Otherwise 403 on run-bound routes (secrets), 422 elsewhere. A verified
   * header makes the call run-bound.
   */
  private async bindRun(req: RequestWithActor, actor: Extract<Actor, { kind: 'agent' }>, runBound: boolean): Promise<void> {
    // on a run-bound route the header is the credential's proof of a live run: a bad one is a refusal (403)
    const status = runBound ? 403 : 422;
    const raw = req.headers[RUN_ID_HEADER];
    const header = Array.isArray(raw) ? raw[0] : raw;
    if (header === undefined || header === '') return;
    if (actor.source === 'run_token') {
      if (header !== actor.runId) {
        throw new DomainError(status, 'run_id_mismatch', 'X-Service-Run-Id does not match the run of the run token');
      }
      return;
    }
    if (!isUuid(header) || !(await this.registry.isLiveRun(actor, header))) {
      throw new DomainError(status, 'run_not_live', 'X-Service-Run-Id does not name a live run of this agent');
    }
    actor.runId = header;
  }
}
