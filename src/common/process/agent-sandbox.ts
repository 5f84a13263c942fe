import { execFileSync, SpawnOptions } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { AgentIdentityError, ProcessIdentity } from './agent-identities';
import { inaccessibleReason } from './agent-user';

/**
 * How an agent's process is started as its own identity (as root):
 *
 *   setpriv --pdeathsig KILL -- unshare --pid --fork --kill-child --mount-proc -- sh -c WRAP …
 *
 * - `setpriv --pdeathsig`: the sandbox dies with the instance, even on kill -9;
 * - `unshare --pid --fork --kill-child --mount-proc`: a PID namespace whose init is WRAP; when it
 *   ends, or the instance dies, every process of the run dies with it, and the run's /proc shows
 *   only its own processes (no other agent's environ, cmdline or signals to aim at);
 * - WRAP (root inside the namespace) bind-mounts a passwd/group with the agent's entry, sets umask
 *   007 (files private to the company's group), then runs the command under the agent's uid and
 *   the company's gid with no supplementary groups and no_new_privs, and waits for it.
 *
 * Where namespaces are not available (a container without CAP_SYS_ADMIN, SERVICE_AGENT_SANDBOX=off)
 * the command runs under `setpriv --reuid --regid --clear-groups --no-new-privs --pdeathsig KILL`:
 * the same uid separation, but grandchildren of a killed instance live until its next start.
 */

const WRAP = [
  'u=$1 g=$2 pw=$3 gr=$4 mt=$5 sp=$6; shift 6',
  '"$mt" --bind "$pw" /etc/passwd 2>/dev/null',
  '"$mt" --bind "$gr" /etc/group 2>/dev/null',
  'umask 007',
  // a background job of a non-interactive shell reads /dev/null unless stdin is given explicitly
  'exec 3<&0',
  '"$sp" --reuid "$u" --regid "$g" --clear-groups --no-new-privs -- "$@" <&3 3<&- &',
  'wait $!',
].join('\n');

const PLAIN = 'umask 007; exec "$@"';

interface Tools {
  setpriv: string;
  unshare: string | null;
  mount: string | null;
  sh: string;
}

let tools: Tools | undefined;
let namespacesWork: boolean | undefined;

/** A system tool: the usual system folders first, then PATH. */
const which = (cmd: string): string | null =>
  findCommand(cmd, ['/usr/bin', '/bin', '/usr/sbin', '/sbin', process.env.PATH ?? ''].join(':'));

function findTools(): Tools {
  if (tools) return tools;
  const setpriv = which('setpriv');
  const sh = which('sh');
  if (!setpriv || !sh)
    throw new AgentIdentityError('setpriv (util-linux) and sh are needed to run agent processes under their own identity');
  tools = { setpriv, sh, unshare: which('unshare'), mount: which('mount') };
  return tools;
}

/** Whether PID and mount namespaces can be made here (tried once). */
export function namespacesAvailable(mode: 'auto' | 'off'): boolean {
  if (mode === 'off') return false;
  if (namespacesWork !== undefined) return namespacesWork;
  const t = findTools();
  try {
    if (!t.unshare || !t.mount) throw new Error('unshare or mount missing');
    execFileSync(t.unshare, ['--pid', '--fork', '--kill-child', '--mount-proc', '--', t.mount, '--bind', '/etc/passwd', '/etc/passwd'], {
      stdio: 'ignore',
      timeout: 5000,
    });
    namespacesWork = true;
  } catch {
    namespacesWork = false;
  }
  return namespacesWork;
}

const accountFiles = new Map<number, { passwd: string; group: string }>();

/** passwd and group files that name the agent (bind-mounted over /etc inside its namespace). */
function accountFilesFor(identity: ProcessIdentity, root: string): { passwd: string; group: string } {
  const hit = accountFiles.get(identity.uid);
  if (hit) return hit;
  // root's alone (0700): the files are read inside the sandbox through their bind mounts, never by path,
  // so no agent can list which uids and gids the host has handed out
  const dir = path.join(root, 'etc');
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  if ((fs.statSync(dir).mode & 0o777) !== 0o700) fs.chmodSync(dir, 0o700);
  const read = (f: string) => {
    try {
      const s = fs.readFileSync(f, 'utf8');
      return s.endsWith('\n') || !s ? s : `${s}\n`;
    } catch {
      return '';
    }
  };
  const passwd = path.join(dir, `passwd-${identity.uid}`);
  const group = path.join(dir, `group-${identity.gid}`);
  fs.writeFileSync(
    `${passwd}.tmp`,
    `${read('/etc/passwd')}${identity.user}:x:${identity.uid}:${identity.gid}::${identity.home}:/bin/sh\n`,
    { mode: 0o644 },
  );
  fs.renameSync(`${passwd}.tmp`, passwd);
  fs.writeFileSync(`${group}.tmp`, `${read('/etc/group')}company-${identity.gid}:x:${identity.gid}:\n`, { mode: 0o644 });
  fs.renameSync(`${group}.tmp`, group);
  const files = { passwd, group };
  accountFiles.set(identity.uid, files);
  return files;
}

/** Is `command` runnable: an existing executable path, or found on PATH. */
export function findCommand(command: string, envPath = process.env.PATH ?? ''): string | null {
  const executable = (p: string) => {
    try {
      fs.accessSync(p, fs.constants.X_OK);
      return fs.statSync(p).isFile();
    } catch {
      return false;
    }
  };
  if (command.includes('/')) return executable(command) ? command : null;
  for (const dir of envPath.split(':').filter(Boolean)) {
    const p = path.join(dir, command);
    if (executable(p)) return p;
  }
  return null;
}

export interface SandboxSpec {
  identity: ProcessIdentity | null;
  /** the identities folder (for the account files) */
  root: string;
  namespaces: 'auto' | 'off';
}

export interface PreparedSpawn {
  command: string;
  args: string[];
  options: SpawnOptions;
  /** the process is the init of a PID namespace: its exit code 128+n means "killed by signal n" */
  namespaced: boolean;
}

/**
 * The spawn of `command args` as the sandboxed identity (as is when identity is null): HOME, USER
 * and LOGNAME of the identity unless the config set them, PATH entries it cannot enter dropped,
 * its home as the default working directory.
 */
export function prepareAgentSpawn(spec: SandboxSpec, command: string, args: string[], options: SpawnOptions): PreparedSpawn {
  const { identity } = spec;
  if (!identity) return { command, args, options, namespaced: false };
  // the wrapper itself always starts: a missing program must still fail the spawn, as it would unwrapped
  if (!findCommand(command, options.env?.PATH ?? process.env.PATH ?? '')) {
    throw Object.assign(new Error(`spawn ${command} ENOENT`), { code: 'ENOENT', errno: -2, syscall: `spawn ${command}`, path: command });
  }
  const t = findTools();
  const given = options.env ?? {};
  const own = (k: string) => given[k] === undefined || given[k] === process.env[k];
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
  const opts: SpawnOptions = { ...options, env, cwd: options.cwd ?? identity.home };
  delete opts.uid;
  delete opts.gid;
  const ids = [String(identity.uid), String(identity.gid)];
  if (namespacesAvailable(spec.namespaces) && t.unshare && t.mount) {
    const files = accountFilesFor(identity, spec.root);
    return {
      command: t.setpriv,
      args: [
        '--pdeathsig',
        'SIGKILL',
        '--',
        t.unshare,
        '--pid',
        '--fork',
        '--kill-child=SIGKILL',
        '--mount-proc',
        '--',
        t.sh,
        '-c',
        WRAP,
        'sandbox',
        ...ids,
        files.passwd,
        files.group,
        t.mount,
        t.setpriv,
        command,
        ...args,
      ],
      options: opts,
      namespaced: true,
    };
  }
  return {
    command: t.setpriv,
    args: [
      '--reuid',
      ids[0],
      '--regid',
      ids[1],
      '--clear-groups',
      '--no-new-privs',
      '--pdeathsig',
      'SIGKILL',
      '--',
      t.sh,
      '-c',
      PLAIN,
      'agent',
      command,
      ...args,
    ],
    options: opts,
    namespaced: false,
  };
}
