import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import { ApiHeader } from '@nestjs/swagger';

/**
 * The header every request of the board UI carries: the path of the UI page that asks. A few list
 * routes answer that UI with the page envelope it reads (e.g. `{ members, access }` instead of
 * the bare list other clients, the conformance suite among them, expect): `@BoardUiPage()`.
 */
export const BOARD_UI_ROUTE_HEADER = 'x-paperclip-route';

/** Whether the request comes from the board UI (it names its page in `X-Paperclip-Route`). */
export const BoardUiPage = createParamDecorator((_: unknown, ctx: ExecutionContext): boolean => {
  const req = ctx.switchToHttp().getRequest<{ headers: Record<string, string | string[] | undefined> }>();
  return typeof req.headers[BOARD_UI_ROUTE_HEADER] === 'string';
});

/** OpenAPI: the header that selects the board UI's page envelope of a list route. */
export const ApiBoardUiPage = (envelope: string) =>
  ApiHeader({
    name: 'X-Paperclip-Route',
    required: false,
    description: `Sent by the board UI (its page path). When present the answer is ${envelope}; without it, the bare list.`,
  });
