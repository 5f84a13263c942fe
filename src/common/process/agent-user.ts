import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { runningAsRoot } from '../../config/process-users';

/**
 * System users of the service's helpers (plugin workers: worker-identity.ts) and the file-access
 * checks for any identity. Agents get identities of their own: agent-identities.ts.
 */
import type { ProcessIdentity } from './agent-identities';
export type { ProcessIdentity };

export class AgentUserError extends Error {
  readonly code = 'agent_user_unavailable';
}

/** The warning to log at start when agent processes will not run under identities of their own. */
export function agentIdentityWarning(isolate: boolean): string | null {
  if (!runningAsRoot()) {
    return "the service is not root: every agent process runs as the service user and agents can read each other's files and environment (see docs/security.md)";
  }
  if (isolate) return null;
  return 'SERVICE_AGENT_ISOLATION=false: agent processes run as root and can read the data directory (database, secrets master key); use this only on a single-user machine';
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
  if (found.uid === 0) throw new AgentUserError(`system user "${name}" is a root account`);
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
 * Why `identity` cannot execute the program `file` (no execute bit for its owner class), or null
 * when it can or the file is missing. The folders above it are unreadableReason's part.
 */
export function unexecutableReason(file: string, identity: ProcessIdentity | null): string | null {
  if (!identity) return null;
  let st: fs.Stats;
  try {
    st = fs.statSync(file);
  } catch {
    return null;
  }
  const shift = st.uid === identity.uid ? 6 : st.gid === identity.gid ? 3 : 0;
  if (((st.mode >> shift) & 0o1) === 0)
    return `${path.resolve(file)} cannot be executed by the agent identity ${identity.user} (uid ${identity.uid}) (mode ${(st.mode & 0o777).toString(8)}, owner uid ${st.uid})`;
  return null;
}
