import { forbidden } from '../errors/domain-error';
import type { Actor, BoardActor } from './actor';

/** Instance administration: board callers who are instance admins (the local board is one). */
export function assertInstanceAdmin(actor: Actor): asserts actor is BoardActor {
  if (actor.kind !== 'board' || !actor.isInstanceAdmin) {
    throw forbidden('Instance admin required', { reason: 'deny_unsupported_action' });
  }
}
