import { applyDecorators, SetMetadata } from '@nestjs/common';
import { ApiBearerAuth, ApiExtension, ApiForbiddenResponse, ApiHeader, ApiUnauthorizedResponse } from '@nestjs/swagger';
import type { CallerKind } from './actor';

export interface AuthorizeOptions {
  callers: CallerKind[];
  /** only an agent caller backed by a live, verified heartbeat run */
  runBound?: boolean;
  /**
   * also accept the run token of a run that ended within the last ENDED_RUN_GRACE_SEC seconds (cost
   * events only: an agent reports the spend of a run that a hard stop or a timeout just ended)
   */
  acceptsEndedRun?: boolean;
  /**
   * the handler answers unknown records named in the path itself, as the spec says (an empty list):
   * the guard then resolves the route's company but refuses nothing, and another company's record
   * must be answered like an unknown one by the handler
   */
  answersUnknownRecords?: boolean;
}

/**
 * How long after its run ended a run token may still report cost events (the agent's last report
 * races the end of its process): a few seconds are enough, every other write of the token is
 * refused at once (docs/security.md).
 */
export const ENDED_RUN_GRACE_SEC = 30;

/** The header naming the heartbeat run an agent's call belongs to. */
export const RUN_ID_HEADER = 'X-Service-Run-Id';

const RUN_BOUND_HEADER =
  'The live heartbeat run this call belongs to: needed with an agent API key (a run token names its run itself and must match it). ' +
  'Without a live run of the calling agent the call is refused.';
const AGENT_RUN_HEADER =
  'Agent callers: the current heartbeat run. Optional here; when sent it must name a live run of the calling agent ' +
  '(with a run token: its own run), else 422. Board callers do not send it.';

export const AUTHORIZE_KEY = 'service:authorize';
export const PUBLIC_KEY = 'service:public';

/** Declares who may call a route. The global guard refuses routes without a declaration. */
export function Authorize(options: AuthorizeOptions) {
  const who = options.callers.join(', ') + (options.runBound ? ' (run-bound)' : '');
  const runHeader = options.callers.includes('agent')
    ? [ApiHeader({ name: RUN_ID_HEADER, required: false, description: options.runBound ? RUN_BOUND_HEADER : AGENT_RUN_HEADER })]
    : [];
  return applyDecorators(
    SetMetadata(AUTHORIZE_KEY, options),
    ApiBearerAuth(),
    ...runHeader,
    ApiExtension('x-callers', { callers: options.callers, runBound: !!options.runBound }),
    ApiUnauthorizedResponse({ description: 'No valid credentials' }),
    ApiForbiddenResponse({ description: `Caller is not allowed (callers: ${who}) or has no access to the company` }),
  );
}

/** A route anyone may call without credentials. */
export function Public() {
  return applyDecorators(SetMetadata(PUBLIC_KEY, true), ApiExtension('x-callers', { public: true }));
}
