import { SetMetadata } from '@nestjs/common';
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
}

export const LOG_ACTIVITY_KEY = 'service:log-activity';

export interface LogActivityMeta extends LogActivityOptions {
  action: string | ((c: ActivityContext) => string);
}

/** The activity record a mutating route writes, in the same transaction as the mutation. */
export const LogActivity = (action: LogActivityMeta['action'], options: LogActivityOptions) =>
  SetMetadata(LOG_ACTIVITY_KEY, { action, ...options } satisfies LogActivityMeta);
