import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import type { Actor, RequestWithActor } from './actor';

/** The caller resolved by the global guard. */
export const CurrentActor = createParamDecorator((_: unknown, ctx: ExecutionContext): Actor => {
  const req = ctx.switchToHttp().getRequest<RequestWithActor>();
  return req.actor as Actor;
});
