import { applyDecorators, SetMetadata } from '@nestjs/common';
import { ApiExtension } from '@nestjs/swagger';
import type { FastifyRequest as Request } from 'fastify';

export interface ActivityContext {
  req: Request;
  params: Record<string, string>;
  body: Record<string, unknown>;
  result: Record<string, unknown>;
}

export interface LogActivityOptions {
  entityType: string;
  /** default: result.id, else the last path parameter */
  entityId?: (c: ActivityContext) => string | undefined | null;
  /** default: result.companyId, else params.companyId */
  companyId?: (c: ActivityContext) => string | undefined | null;
  /** default: the request body (sanitised) */
  details?: (c: ActivityContext) => Record<string, unknown> | undefined | null;
  /** skip the record, e.g. for a no-op */
  skip?: (c: ActivityContext) => boolean;
  /**
   * The service writes this record itself, before the route returns: it commits the transaction
   * early (Db.commitNow), so the interceptor could not add the record after it.
   */
  writtenByService?: true;
}

export const LOG_ACTIVITY_KEY = 'service:log-activity';

export interface LogActivityMeta extends LogActivityOptions {
  action: string | ((c: ActivityContext) => string);
}

/**
 * The activity record a mutating route writes, in the same transaction as the mutation. Shown in
 * OpenAPI as `x-activity` (`{ action }`, or `{ action: 'varies' }` when the action depends on the call).
 */
export const LogActivity = (action: LogActivityMeta['action'], options: LogActivityOptions) =>
  applyDecorators(
    SetMetadata(LOG_ACTIVITY_KEY, { action, ...options } satisfies LogActivityMeta),
    ApiExtension('x-activity', { action: typeof action === 'string' ? action : 'varies', entityType: options.entityType }),
  );

/**
 * A mutating route that writes no record through the interceptor, and why: the service writes the
 * records itself (it alone knows the entities), or the route changes nothing of a company (a
 * session, a personal preference). Shown in OpenAPI as `x-activity: { none: reason }`.
 */
export const NoActivity = (reason: string) => ApiExtension('x-activity', { none: reason });

export const INSTANCE_AUDIT_KEY = 'service:instance-audit';

/**
 * An instance-level change (no company, so no company activity log): once it succeeds, the
 * interceptor writes an audit line to the service log (`audit`: the action, the actor, the path
 * parameters; never the body). Shown in OpenAPI as `x-activity: { instanceAudit: action }`.
 */
export const InstanceAudit = (action: string) =>
  applyDecorators(SetMetadata(INSTANCE_AUDIT_KEY, action), ApiExtension('x-activity', { instanceAudit: action }));
