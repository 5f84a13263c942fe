import type { FastifyRequest as Request } from 'fastify';

export type CallerKind = 'board' | 'agent';

export interface BoardActor {
  kind: 'board';
  /** user id; `local-board` for the implicit board of a local trusted instance */
  userId: string;
  isInstanceAdmin: boolean;
  /** how the board caller was recognised */
  source: 'local_implicit' | 'session' | 'board_token';
  /** board token or session id, when any */
  credentialId?: string;
}

export interface AgentActor {
  kind: 'agent';
  agentId: string;
  companyId: string;
  source: 'api_key' | 'run_token';
  keyId?: string;
  /** the heartbeat run this call belongs to (run token, or a verified X-Service-Run-Id header) */
  runId?: string;
  /** a run token whose run ended within the grace period: accepted only by routes that opt in (cost events) */
  runEnded?: boolean;
}

export type Actor = BoardActor | AgentActor;

export const LOCAL_BOARD_USER_ID = 'local-board';

/** `routeCompanyId`: the company of the records a route's path names, resolved by the guard (routes without `:companyId`). */
export type RequestWithActor = Request & { actor?: Actor; id?: string; routeCompanyId?: string };

export const isBoard = (a: Actor | undefined): a is BoardActor => a?.kind === 'board';
export const isAgent = (a: Actor | undefined): a is AgentActor => a?.kind === 'agent';

export const RUN_ID_HEADER = 'x-service-run-id';
