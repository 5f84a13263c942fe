import * as fs from 'node:fs';
import * as path from 'node:path';
import type { SpawnOptions } from 'node:child_process';
import { runningAsRoot } from '../../config/process-users';
import { ensureSystemUser } from './agent-user';

/**
 * The OS identity plugin workers run as.
 *
 * When the service runs as root, every plugin worker runs as a dedicated system user of its own
 * (`SERVICE_PLUGIN_USER`, default `service-plugin`, created on demand with a 0700 home), never as
 * root and never as an agent's uid: an agent cannot signal, trace or read a worker, and a worker
 * cannot read an agent's environment or files. The installed plugin code is owned by root and
 * group-readable by this user's group only (see common/packages/sealed-code). When the service is
 * not root, workers run as the service's user (there is nothing to drop to).
 */
export interface WorkerIdentity {
  user: string;
  uid: number;
  gid: number;
  /** the user's private home (its HOME and nothing else) */
  home: string;
}

export class WorkerIdentityError extends Error {
  readonly code = 'plugin_user_unavailable';
}

const cache = new Map<string, WorkerIdentity>();

/**
 * The identity plugin workers run as: null = the service's own user (the service is not root).
 * As root the user is created on first use; throws WorkerIdentityError when that is impossible.
 */
export function resolveWorkerIdentity(user: string): WorkerIdentity | null {
  if (!runningAsRoot()) return null;
  const hit = cache.get(user);
  if (hit) return hit;
  let identity: WorkerIdentity;
  try {
    identity = ensureSystemUser(user);
  } catch (err) {
    throw new WorkerIdentityError(`the plugin worker user "${user}" is not available: ${(err as Error).message}`);
  }
  if (identity.uid === 0) throw new WorkerIdentityError(`the plugin worker user "${user}" is a root account`);
  cache.set(user, identity);
  return identity;
}

/** Whether `identity` (no supplementary groups) may enter every directory of `dir`'s path and the directory itself. */
export function canEnter(dir: string, identity: WorkerIdentity): boolean {
  let cur = path.resolve(dir);
  for (;;) {
    let st: fs.Stats;
    try {
      st = fs.statSync(cur);
    } catch {
      return false;
    }
    const shift = st.uid === identity.uid ? 6 : st.gid === identity.gid ? 3 : 0;
    if (((st.mode >> shift) & 0o1) !== 0o1) return false;
    const parent = path.dirname(cur);
    if (parent === cur) return true;
    cur = parent;
  }
}

/**
 * Spawn options that run the child as `identity` (null = as the service): its uid and gid (Node
 * clears the supplementary groups), HOME/USER/LOGNAME of that user, and PATH without the entries it
 * cannot enter. The environment is exactly `options.env` plus those: nothing of the service's.
 */
export function workerSpawnOptions<T extends SpawnOptions>(identity: WorkerIdentity | null, options: T): T {
  if (!identity) return options;
  const given = options.env ?? {};
  const pathVar =
    typeof given.PATH === 'string'
      ? given.PATH.split(':')
          .filter((d) => d && canEnter(d, identity))
          .join(':')
      : undefined;
  return {
    ...options,
    uid: identity.uid,
    gid: identity.gid,
    env: {
      ...given,
      ...(pathVar !== undefined ? { PATH: pathVar } : {}),
      HOME: identity.home,
      USER: identity.user,
      LOGNAME: identity.user,
    },
  };
}
