import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';

/**
 * Process groups of child processes that must not outlive the instance that started them. Every
 * child runs in its own group (`detached: true`, pgid = its pid); the group id, the host and the
 * leader's start time (`/proc/<pid>/stat`, in clock ticks since boot) are recorded, so a restarted
 * instance can kill what a crashed one left behind without ever signalling a recycled pid.
 */

export const thisHost = (): string => os.hostname();

/** Start time of a process in clock ticks since boot (field 22 of /proc/<pid>/stat), or null. */
export function processStartTicks(pid: number): number | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // the command name (field 2) is in parentheses and may contain spaces: count fields after its ')'
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(rest[19]);
    return Number.isFinite(ticks) ? ticks : null;
  } catch {
    return null;
  }
}

/** Does any live (not zombie) process of group `pgid` exist? */
export function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  // members exist; a group left only with zombies (reparented, not yet reaped) is gone for us
  let entries: string[];
  try {
    entries = fs.readdirSync('/proc');
  } catch {
    return true;
  }
  for (const e of entries) {
    if (!/^\d+$/.test(e)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${e}/stat`, 'utf8');
      const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(rest[2]) === pgid && rest[0] !== 'Z') return true;
    } catch {
      /* exited meanwhile */
    }
  }
  return false;
}

/**
 * Is `pgid` still the group that was recorded? While any member of a group lives, its id cannot be
 * reused; if the leader itself is alive, its start time must match the recorded one.
 */
export function isRecordedGroup(pgid: number, startTicks: number | null): boolean {
  if (!groupAlive(pgid)) return false;
  const leaderTicks = processStartTicks(pgid);
  if (leaderTicks === null) return true; // leader gone, members remain: the id is still ours
  return startTicks === null || leaderTicks === startTicks;
}

const signalGroup = (pgid: number, sig: NodeJS.Signals) => {
  try {
    process.kill(-pgid, sig);
  } catch {
    /* gone */
  }
};

/** SIGTERM to the group, SIGKILL after `graceMs` if any member is left; resolves once it is gone (or after the kill). */
export async function terminateGroup(pgid: number, graceMs: number): Promise<void> {
  signalGroup(pgid, 'SIGTERM');
  const end = Date.now() + graceMs;
  while (Date.now() < end) {
    if (!groupAlive(pgid)) return;
    await new Promise((r) => setTimeout(r, Math.min(100, Math.max(10, end - Date.now()))));
  }
  signalGroup(pgid, 'SIGKILL');
  for (let i = 0; i < 20 && groupAlive(pgid); i++) await new Promise((r) => setTimeout(r, 25));
}

let clockTicks: number | undefined;
let bootTimeMs: number | undefined;

/** When a process started (ms since epoch), or null when unknown. */
export function processStartedAt(pid: number): number | null {
  const ticks = processStartTicks(pid);
  if (ticks === null) return null;
  try {
    clockTicks ??=
      Number(
        execFileSync('getconf', ['CLK_TCK'], { stdio: ['ignore', 'pipe', 'ignore'] })
          .toString()
          .trim(),
      ) || 100;
  } catch {
    clockTicks = 100;
  }
  try {
    bootTimeMs ??= Number(/^btime (\d+)$/m.exec(fs.readFileSync('/proc/stat', 'utf8'))?.[1]) * 1000;
  } catch {
    return null;
  }
  return Number.isFinite(bootTimeMs) ? bootTimeMs + (ticks / clockTicks) * 1000 : null;
}

/**
 * Whether a lease owner id (`host-pid[-suffix]`) names a process of this host that is gone. With
 * `claimedAt`, a live process that started after it is a recycled pid, not the owner.
 */
export function isGoneLocalOwner(owner: string, claimedAt?: Date | null): boolean {
  if (isDeadLocalOwner(owner)) return true;
  const pid = localOwnerPid(owner);
  if (!claimedAt || pid === null || pid === process.pid) return false;
  const started = processStartedAt(pid);
  // one second of slack for clock-tick rounding
  return started !== null && started > new Date(claimedAt).getTime() + 1000;
}

/**
 * The pid in a lease owner id (`host-pid[-suffix]`) of this host, or null for another host's. The
 * host name is matched as a prefix: a suffix of six hex digits may be all decimal digits
 * (`vm-28346-278153`), so the id cannot be split from the right.
 */
export function localOwnerPid(owner: string, host = os.hostname()): number | null {
  if (!owner.startsWith(`${host}-`)) return null;
  const m = /^(\d+)(?:-[0-9a-f]{6})?$/.exec(owner.slice(host.length + 1));
  return m ? Number(m[1]) : null;
}

/** Whether a lease owner id (`host-pid[-suffix]`) names a process of this host that is gone. */
export function isDeadLocalOwner(owner: string): boolean {
  const pid = localOwnerPid(owner);
  if (pid === null || pid === process.pid) return false;
  try {
    process.kill(pid, 0);
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

/** The process `pid` and its descendants (Linux: /proc/<pid>/task/<pid>/children), at most `max`. */
export function processTree(pid: number, max = 256): number[] {
  const out: number[] = [];
  const todo = [pid];
  while (todo.length && out.length < max) {
    const p = todo.shift() as number;
    out.push(p);
    try {
      for (const c of fs.readFileSync(`/proc/${p}/task/${p}/children`, 'utf8').split(/\s+/).filter(Boolean)) todo.push(Number(c));
    } catch {
      /* gone */
    }
  }
  return out;
}

/** Whether a process of the tree under `pid` holds one of the sockets `inodes` (its /proc/<pid>/fd links). */
export function treeHoldsSocket(pid: number, inodes: Set<string>): boolean {
  for (const p of processTree(pid)) {
    let fds: string[];
    try {
      fds = fs.readdirSync(`/proc/${p}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        const m = /^socket:\[(\d+)\]$/.exec(fs.readlinkSync(`/proc/${p}/fd/${fd}`));
        if (m && inodes.has(m[1])) return true;
      } catch {
        /* closed meanwhile */
      }
    }
  }
  return false;
}
