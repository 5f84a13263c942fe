import type { Actor } from '../../common/auth/actor';
import { forbidden } from '../../common/errors/domain-error';

/** The user these per-user preferences belong to: always the calling board user (`local-board` on a local instance). */
export function boardUserId(actor: Actor): string {
  if (actor.kind !== 'board') throw forbidden('Board access required');
  return actor.userId;
}
