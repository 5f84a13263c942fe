import { CallHandler, ExecutionContext, Injectable, Logger, NestInterceptor } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { defaultIfEmpty, from, lastValueFrom, Observable } from 'rxjs';
import { Db } from '../../database/db.service';
import type { RequestWithActor } from '../auth/actor';
import { isUuid } from '../http/uuid';
import { ActivityRecorder } from './activity-recorder.service';
import { ActivityContext, INSTANCE_AUDIT_KEY, LOG_ACTIVITY_KEY, LogActivityMeta } from './log-activity.decorator';

const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** Who acted, without credentials. */
function describeActor(actor: RequestWithActor['actor']): Record<string, unknown> | undefined {
  if (!actor) return undefined;
  return actor.kind === 'board'
    ? { kind: 'board', userId: actor.userId, source: actor.source }
    : { kind: 'agent', agentId: actor.agentId, companyId: actor.companyId };
}

/**
 * One transaction per mutation: every mutating route runs inside a transaction, and the activity
 * record it declares with @LogActivity is written in that same transaction, or not at all.
 */
@Injectable()
export class ActivityInterceptor implements NestInterceptor {
  private readonly logger = new Logger('Audit');

  constructor(
    private readonly reflector: Reflector,
    private readonly db: Db,
    private readonly recorder: ActivityRecorder,
  ) {}

  intercept(ctx: ExecutionContext, next: CallHandler): Observable<unknown> {
    const req = ctx.switchToHttp().getRequest<RequestWithActor>();
    if (!MUTATING.has(req.method)) return next.handle();
    const meta = this.reflector.get<LogActivityMeta | undefined>(LOG_ACTIVITY_KEY, ctx.getHandler());
    const audit = this.reflector.get<string | undefined>(INSTANCE_AUDIT_KEY, ctx.getHandler());
    return from(
      this.db.transaction(async () => {
        const result = await lastValueFrom(next.handle().pipe(defaultIfEmpty(undefined)));
        // the record travels with the COMMIT; if it fails, nothing of the mutation is committed
        if (meta && !meta.writtenByService) await this.db.sendWithCommit(() => this.write(meta, req, result));
        if (audit)
          this.db.afterCommit(() =>
            this.logger.log({ audit, actor: describeActor(req.actor), params: req.params }, `instance audit: ${audit}`),
          );
        return result;
      }),
    );
  }

  private async write(meta: LogActivityMeta, req: RequestWithActor, result: unknown): Promise<void> {
    const c: ActivityContext = {
      req,
      params: (req.params ?? {}) as Record<string, string>,
      body: (req.body && typeof req.body === 'object' ? req.body : {}) as Record<string, unknown>,
      result: (result && typeof result === 'object' ? result : {}) as Record<string, unknown>,
    };
    if (meta.skip?.(c)) return;
    const paramValues = Object.values(c.params);
    const entityId = meta.entityId ? meta.entityId(c) : ((c.result.id as string | undefined) ?? paramValues[paramValues.length - 1]);
    const companyId = meta.companyId ? meta.companyId(c) : ((c.result.companyId as string | undefined) ?? c.params.companyId);
    if (!entityId || !isUuid(companyId)) return;
    const action = typeof meta.action === 'function' ? meta.action(c) : meta.action;
    const details = meta.details ? meta.details(c) : c.body;
    // the route's own record leads: an issue's creation is on the live stream before the wake it caused
    await this.recorder.record(
      { companyId, action, entityType: meta.entityType, entityId: String(entityId), actor: req.actor, details },
      { lead: true },
    );
  }
}
