import type { Actor, BoardActor } from '../../common/auth/actor';
import { forbidden } from '../../common/errors/domain-error';

/** Instance administration: board callers who are instance admins (the local board is one). */
export function assertInstanceAdmin(actor: Actor): asserts actor is BoardActor {
  if (actor.kind !== 'board' || !actor.isInstanceAdmin) {
    throw forbidden('Instance admin required', { reason: 'deny_unsupported_action' });
  }
}
