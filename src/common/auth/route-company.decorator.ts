import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import type { RequestWithActor } from './actor';

/**
 * The company of the route: its `:companyId`, or for a route naming records in its path
 * (`/api/issues/:issueId`) the company the guard resolved from them (already checked: the caller
 * may reach it). Undefined for routes of neither kind.
 */
export const RouteCompany = createParamDecorator((_: unknown, ctx: ExecutionContext): string | undefined => {
  const req = ctx.switchToHttp().getRequest<RequestWithActor>();
  return req.routeCompanyId ?? (req.params as Record<string, string> | undefined)?.companyId;
});
