import { ChildProcess, execFileSync, spawn, SpawnOptions } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

/**
 * The unprivileged identity child processes of agents (and plugin workers) run as.
 *
 * When the service runs as root, a process it starts for an agent must not be root: it could read
 * the data directory (database files, secrets master key, JWT secret) and everything else. So, as
 * root, such processes run as a dedicated system user (`SERVICE_AGENT_USER`, default
 * `service-agent`, created on demand, distinct from the `postgres` user of the embedded database)
 * with its own HOME, no supplementary groups, and no access to the 0700 data directory.
 * When the service is not root, they run as the service's user (nothing to drop to).
 * `SERVICE_AGENT_ISOLATION=false` opts out on a single-user machine (logged as a warning at start).
 *
 * Use `agentSpawnOptions` (or `spawnAsAgent`) for every child process an agent controls.
 */
export interface AgentUserSettings {
  /** drop to `user` when running as root (default true) */
  isolate: boolean;
  user: string;
}

import type { ProcessIdentity } from './agent-identities';
export type { ProcessIdentity };

export const DEFAULT_AGENT_USER = 'service-agent';

export class AgentUserError extends Error {
  readonly code = 'agent_user_unavailable';
}

export const runningAsRoot = (): boolean => process.getuid?.() === 0;

/** Settings from the environment (validated by the config loader). */
export function agentUserSettingsFromEnv(env: NodeJS.ProcessEnv): AgentUserSettings {
  const raw = (env.SERVICE_AGENT_ISOLATION ?? '').trim().toLowerCase();
  const isolate = !['0', 'false', 'no', 'off'].includes(raw);
  const user = (env.SERVICE_AGENT_USER ?? '').trim() || DEFAULT_AGENT_USER;
  return { isolate, user };
}

/** A problem with the settings, or null. */
export function validateAgentUserSettings(env: NodeJS.ProcessEnv): string | null {
  const raw = (env.SERVICE_AGENT_ISOLATION ?? '').trim().toLowerCase();
  if (raw && !['0', 'false', 'no', 'off', '1', 'true', 'yes', 'on'].includes(raw)) {
    return `SERVICE_AGENT_ISOLATION must be a boolean (true/false), got "${env.SERVICE_AGENT_ISOLATION}"`;
  }
  const user = (env.SERVICE_AGENT_USER ?? '').trim();
  if (user && !/^[a-z_][a-z0-9_-]{0,30}$/.test(user)) return `SERVICE_AGENT_USER must be a system user name, got "${user}"`;
  if (user === 'root' || user === 'postgres') return `SERVICE_AGENT_USER must not be ${user}: agent processes need a user of their own`;
  return null;
}

/** The warning to log at start, when agent processes will run with the service's own privileges as root. */
export function agentUserWarning(settings: AgentUserSettings): string | null {
  if (!runningAsRoot() || settings.isolate) return null;
  return 'SERVICE_AGENT_ISOLATION=false: agent processes run as root and can read the data directory (database, secrets master key); use this only on a single-user machine';
}

const cache = new Map<string, ProcessIdentity>();

/**
 * The identity agent processes run as: null = the service's own user (not root, or opted out).
 * As root the user is created on first use; throws AgentUserError when that is impossible.
 */
export function resolveAgentIdentity(settings: AgentUserSettings): ProcessIdentity | null {
  if (!runningAsRoot() || !settings.isolate) return null;
  const hit = cache.get(settings.user);
  if (hit) return hit;
  const identity = ensureSystemUser(settings.user);
  cache.set(settings.user, identity);
  return identity;
}

function lookupUser(name: string): ProcessIdentity | undefined {
  try {
    const line = execFileSync('getent', ['passwd', name], { stdio: ['ignore', 'pipe', 'ignore'] })
      .toString()
      .trim();
    const [user, , uid, gid, , home] = line.split(':');
    if (!user || !/^\d+$/.test(uid) || !/^\d+$/.test(gid)) return undefined;
    return { user, uid: Number(uid), gid: Number(gid), home: home && home !== '/' && home !== '/nonexistent' ? home : `/var/lib/${name}` };
  } catch {
    return undefined;
  }
}

function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** The system user `name` (created on demand as root, with a 0700 home under /var/lib); throws AgentUserError. */
export function ensureSystemUser(name: string): ProcessIdentity {
  let found = lookupUser(name);
  for (let attempt = 0; !found && attempt < 20; attempt++) {
    try {
      execFileSync(
        'useradd',
        ['--system', '--user-group', '--home-dir', `/var/lib/${name}`, '--no-create-home', '--shell', '/usr/sbin/nologin', name],
        { stdio: 'pipe' },
      );
    } catch (err) {
      // another process may be creating it right now (passwd lock): look again shortly
      found = lookupUser(name);
      if (!found && attempt === 19) {
        throw new AgentUserError(
          `running as root, and the unprivileged user "${name}" for agent processes could not be created: ${(err as Error).message.split('\n')[0]}`,
        );
      }
      if (!found) sleepSync(50 + attempt * 20);
      continue;
    }
    found = lookupUser(name);
  }
  if (!found) throw new AgentUserError(`user "${name}" not found after useradd`);
  if (found.uid === 0) throw new AgentUserError(`SERVICE_AGENT_USER "${name}" is a root account`);
  ensureHome(found);
  return found;
}

function ensureHome(id: ProcessIdentity): void {
  try {
    fs.mkdirSync(id.home, { recursive: true, mode: 0o700 });
    const st = fs.statSync(id.home);
    if (st.uid !== id.uid) fs.chownSync(id.home, id.uid, id.gid);
  } catch (err) {
    throw new AgentUserError(`the home directory ${id.home} of "${id.user}" could not be prepared: ${(err as Error).message}`);
  }
}

/**
 * Why `identity` cannot use `dir` (enter every parent, read and enter the directory itself), or
 * null when it can. Decided from the modes and owners (the user has no supplementary groups).
 */
export function inaccessibleReason(dir: string, identity: ProcessIdentity | null): string | null {
  if (!identity) return null;
  const abs = path.resolve(dir);
  const allows = (st: fs.Stats, bits: number) => {
    const shift = st.uid === identity.uid ? 6 : st.gid === identity.gid ? 3 : 0;
    return ((st.mode >> shift) & bits) === bits;
  };
  const parts: string[] = [];
  for (let cur = abs; ; cur = path.dirname(cur)) {
    parts.unshift(cur);
    if (path.dirname(cur) === cur) break;
  }
  for (const p of parts) {
    let st: fs.Stats;
    try {
      st = fs.statSync(p);
    } catch {
      return `${p} does not exist`;
    }
    const need = p === abs ? 0o5 : 0o1;
    if (!allows(st, need)) return `${p} is not ${p === abs ? 'readable' : 'enterable'} by the agent user "${identity.user}"`;
  }
  return null;
}

/**
 * Why `identity` cannot read (and, for a program, run) the file `file`, naming the path and the
 * identity, or null when it can. As with inaccessibleReason, decided from modes and owners.
 */
export function unreadableReason(file: string, identity: ProcessIdentity | null): string | null {
  if (!identity) return null;
  const abs = path.resolve(file);
  const dirProblem = inaccessibleReason(path.dirname(abs), identity);
  const who = `the agent identity ${identity.user} (uid ${identity.uid})`;
  if (dirProblem) return `${abs} cannot be read by ${who}: ${dirProblem.replace(/ by the agent user "[^"]*"/, '')}`;
  let st: fs.Stats;
  try {
    st = fs.statSync(abs);
  } catch {
    return null; // missing files are reported by whoever needs them
  }
  const shift = st.uid === identity.uid ? 6 : st.gid === identity.gid ? 3 : 0;
  if (((st.mode >> shift) & 0o4) === 0)
    return `${abs} cannot be read by ${who} (mode ${(st.mode & 0o777).toString(8)}, owner uid ${st.uid})`;
  return null;
}

/**
 * Spawn options that run the child as `identity` (null = as the service): uid/gid (Node clears the
 * supplementary groups), HOME/USER/LOGNAME of that user, and its home as the default working directory.
 */
export function agentSpawnOptions<T extends SpawnOptions>(identity: ProcessIdentity | null, options: T): T {
  if (!identity) return options;
  const given = options.env ?? {};
  // the service's own HOME/USER are replaced; values an agent's config set explicitly stay
  const own = (k: string) => given[k] === undefined || given[k] === process.env[k];
  // PATH entries the user cannot enter only turn "not found" into EACCES: leave them out
  const pathVar =
    typeof given.PATH === 'string'
      ? given.PATH.split(':')
          .filter((d) => d && !inaccessibleReason(d, identity))
          .join(':')
      : undefined;
  const env = {
    ...given,
    ...(pathVar !== undefined ? { PATH: pathVar } : {}),
    ...(own('HOME') ? { HOME: identity.home } : {}),
    ...(own('USER') ? { USER: identity.user } : {}),
    ...(own('LOGNAME') ? { LOGNAME: identity.user } : {}),
  };
  return { ...options, uid: identity.uid, gid: identity.gid, env, cwd: options.cwd ?? identity.home };
}

/** `spawn` as the agent user of `settings` (see `agentSpawnOptions`). Throws AgentUserError when it cannot be set up. */
export function spawnAsAgent(settings: AgentUserSettings, command: string, args: string[], options: SpawnOptions): ChildProcess {
  return spawn(command, args, agentSpawnOptions(resolveAgentIdentity(settings), options));
}
