import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { runningAsRoot } from '../../config/process-users';
import { AgentIdentities } from '../../common/process/agent-identities';
import { findCommand, namespacesAvailable } from '../../common/process/agent-sandbox';
import { AppConfig } from '../../config/app-config';
import { migrationClasses } from '../../database/data-source';
import { choosePgDump } from '../../database/pg-dump';
import { CliContext } from '../cli-context';
import { openDatabase, withClient } from '../cli-database';
import { CliRepository } from '../cli.repository';

export type CheckStatus = 'ok' | 'warn' | 'fail' | 'skip';

export interface Check {
  name: string;
  status: CheckStatus;
  message: string;
  /** what --fix does about it (only safe, local changes) */
  fix?: string;
  fixed?: boolean;
  details?: Record<string, unknown>;
}

type Fixer = { describe: string; apply: () => void };

const mode = (p: string) => fs.statSync(p).mode & 0o777;
const octal = (m: number) => `0${m.toString(8)}`;

/** A check with an optional safe fix, applied when `fix` is on (and reported as fixed). */
function checked(
  name: string,
  status: CheckStatus,
  message: string,
  fixer: Fixer | undefined,
  fix: boolean,
  details?: Record<string, unknown>,
): Check {
  if (!fixer || status === 'ok') return { name, status, message, ...(details ? { details } : {}) };
  if (!fix) return { name, status, message, fix: fixer.describe, ...(details ? { details } : {}) };
  try {
    fixer.apply();
    return {
      name,
      status: 'ok',
      message: `${message}; fixed: ${fixer.describe}`,
      fix: fixer.describe,
      fixed: true,
      ...(details ? { details } : {}),
    };
  } catch (err) {
    return { name, status, message: `${message}; the fix failed: ${(err as Error).message}`, fix: fixer.describe, fixed: false };
  }
}

/** The data directory: a directory, owned by this user, writable, 0700, keys 0700 and key files 0600. */
export function checkDataDir(dataDir: string, fix: boolean): Check[] {
  const st = fs.statSync(dataDir, { throwIfNoEntry: false });
  if (!st) {
    return [
      checked(
        'data_dir',
        'warn',
        `${dataDir} does not exist (the service creates it at start)`,
        {
          describe: `create ${dataDir} with mode 0700`,
          apply: () => fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 }),
        },
        fix,
      ),
    ];
  }
  if (!st.isDirectory()) return [{ name: 'data_dir', status: 'fail', message: `${dataDir} is not a directory` }];
  const out: Check[] = [];
  const uid = process.getuid?.();
  if (uid !== undefined && st.uid !== uid)
    out.push({ name: 'data_dir_owner', status: 'warn', message: `${dataDir} belongs to uid ${st.uid}, the CLI runs as uid ${uid}` });
  let writable: string | null = null;
  try {
    fs.accessSync(dataDir, fs.constants.R_OK | fs.constants.W_OK | fs.constants.X_OK);
    const probe = path.join(dataDir, `.doctor-${process.pid}`);
    fs.writeFileSync(probe, '');
    fs.rmSync(probe);
  } catch (err) {
    writable = (err as Error).message;
  }
  if (writable) out.push({ name: 'data_dir_writable', status: 'fail', message: `${dataDir} is not readable and writable: ${writable}` });
  const m = mode(dataDir);
  out.push(
    checked(
      'data_dir_mode',
      m & 0o077 ? 'fail' : 'ok',
      m & 0o077 ? `${dataDir} has mode ${octal(m)}: other users (agent processes) can enter it` : `${dataDir} is ${octal(m)}`,
      { describe: `chmod 0700 ${dataDir}`, apply: () => fs.chmodSync(dataDir, 0o700) },
      fix,
    ),
  );
  const keys = path.join(dataDir, 'keys');
  if (fs.existsSync(keys)) {
    const bad = [keys, ...fs.readdirSync(keys).map((f) => path.join(keys, f))].filter((p) => mode(p) & 0o077);
    out.push(
      checked(
        'keys_mode',
        bad.length ? 'fail' : 'ok',
        bad.length
          ? `readable by others: ${bad.map((p) => `${p} (${octal(mode(p))})`).join(', ')}`
          : `${keys} and its key files are private`,
        {
          describe: 'chmod 0700 the keys folder and 0600 its files',
          apply: () => bad.forEach((p) => fs.chmodSync(p, p === keys ? 0o700 : 0o600)),
        },
        fix,
      ),
    );
  }
  return out;
}

const onPath = (name: string): string | null => findCommand(name, process.env.PATH ?? '');

function passwdUids(): Map<number, string> {
  const out = new Map<number, string>();
  try {
    for (const line of execFileSync('getent', ['passwd'], { stdio: ['ignore', 'pipe', 'ignore'] })
      .toString()
      .split('\n')) {
      const [user, , uid] = line.split(':');
      if (user && /^\d+$/.test(uid)) out.set(Number(uid), user);
    }
  } catch {
    /* no getent: nothing known */
  }
  return out;
}

/**
 * Who agent processes run as. As root with isolation: setpriv present, PID/mount namespaces
 * available (or not: uid separation only), the identity folder prepared (--fix prepares it), and
 * the uid range free of existing accounts.
 */
export function checkAgentIdentity(config: AppConfig, env: NodeJS.ProcessEnv, fix: boolean): Check[] {
  if (!runningAsRoot()) {
    return [
      {
        name: 'agent_identity',
        status: 'warn',
        message: `not root: every agent process runs as this user (uid ${process.getuid?.()}); agents are not isolated from each other`,
      },
    ];
  }
  const settings = config.agentIdentity;
  if (!settings.isolate) {
    return [
      {
        name: 'agent_identity',
        status: 'warn',
        message: 'SERVICE_AGENT_ISOLATION=false: agent processes run as root and can read the data directory',
      },
    ];
  }
  const out: Check[] = [];
  const setpriv = onPath('setpriv');
  out.push(
    setpriv
      ? { name: 'setpriv', status: 'ok', message: `${setpriv} (drops agent processes to their uid)` }
      : {
          name: 'setpriv',
          status: 'fail',
          message: 'setpriv (util-linux) is not on PATH: agent processes cannot be dropped to their own uid',
        },
  );
  if (setpriv) {
    const ns = namespacesAvailable(settings.namespaces);
    out.push({
      name: 'agent_sandbox',
      status: ns ? 'ok' : 'warn',
      message: ns
        ? 'PID and mount namespaces per run (agents see only their own processes; they die with the instance)'
        : settings.namespaces === 'off'
          ? 'SERVICE_AGENT_SANDBOX=off: uid separation only'
          : 'namespaces are not available here (e.g. a container without CAP_SYS_ADMIN): uid separation only',
    });
  }
  const rootOk = (() => {
    try {
      return (fs.statSync(settings.root).mode & 0o777) === 0o711 && (fs.statSync(path.join(settings.root, 'ids')).mode & 0o777) === 0o700;
    } catch {
      return false;
    }
  })();
  out.push(
    checked(
      'agent_root',
      rootOk ? 'ok' : 'warn',
      rootOk
        ? `identity folder ${settings.root} (ids, homes, run scratch)`
        : `identity folder ${settings.root} is not prepared yet (made at the first run)`,
      { describe: `prepare ${settings.root}`, apply: () => new AgentIdentities(settings).prepare() },
      fix,
    ),
  );
  const [lo, hi] = settings.uidRange;
  const range = `${lo}-${hi}`;
  const taken = [...passwdUids()].filter(([uid]) => uid >= lo && uid <= hi);
  out.push({
    name: 'agent_uid_range',
    status: taken.length ? 'warn' : 'ok',
    message: taken.length
      ? `${taken.length} uids of ${range} belong to existing accounts (${taken
          .slice(0, 5)
          .map(([u, n]) => `${u} ${n}`)
          .join(', ')}): they are not used for agents`
      : `${hi - lo + 1} uids ${range}${env.SERVICE_AGENT_UID_RANGE ? '' : ' (default)'}, none taken by an existing account`,
  });
  return out;
}

/** Database reachable, server version, migrations applied (none pending, none unknown), secrets decryptable with the configured key. */
export async function checkDatabase(ctx: CliContext, config: AppConfig): Promise<{ checks: Check[]; serverVersion?: number }> {
  if (!config.databaseUrl && !fs.existsSync(path.join(config.dataDir, 'db', 'PG_VERSION'))) {
    return {
      checks: [
        {
          name: 'database',
          status: 'warn',
          message: `no DATABASE_URL and no embedded cluster in ${config.dataDir}/db yet (created at the first start)`,
        },
      ],
    };
  }
  // the running embedded cluster of the data directory, else one started for the checks (stopped after)
  let db;
  try {
    db = await openDatabase(ctx, config);
  } catch (err) {
    return { checks: [{ name: 'database', status: 'fail', message: `the embedded database does not start: ${(err as Error).message}` }] };
  }
  try {
    return await withClient(db.url, async (c) => {
      const repo = new CliRepository(c);
      const v = await repo.serverVersion();
      const checks: Check[] = [{ name: 'database', status: 'ok', message: `reachable (${db.source}), PostgreSQL ${v.version}` }];
      const applied = await repo.appliedMigrations();
      const known = migrationClasses().map((cls) => {
        const instance = new (cls as unknown as new () => { name?: string })();
        return instance.name ?? (cls as { name: string }).name;
      });
      const pending = known.filter((n) => !applied.includes(n));
      const unknown = applied.filter((n) => !known.includes(n));
      checks.push(
        unknown.length
          ? {
              name: 'migrations',
              status: 'fail',
              message: `the database has ${unknown.length} migrations this build does not know (it is newer): ${unknown.slice(0, 3).join(', ')}`,
            }
          : pending.length
            ? {
                name: 'migrations',
                status: 'fail',
                message: `${pending.length} migrations pending (run \`aos migrate\`, or start the service)`,
                details: { pending },
              }
            : { name: 'migrations', status: 'ok', message: `all ${known.length} migrations applied` },
      );
      if (applied.length) {
        const other = (await repo.secretKeyFingerprints()).filter((f) => f.fingerprint !== config.secretsMasterKeyFingerprint);
        checks.push(
          other.length
            ? {
                name: 'secrets_key',
                status: 'fail',
                message: `${other.reduce((n, f) => n + f.versions, 0)} stored secret versions were encrypted with another master key (${other.map((f) => f.fingerprint).join(', ')}; configured: ${config.secretsMasterKeyFingerprint}): configure the original key`,
              }
            : {
                name: 'secrets_key',
                status: 'ok',
                message: `stored secrets match the configured master key (${config.secretsMasterKeyFingerprint})`,
              },
        );
      }
      return { checks, serverVersion: v.num };
    });
  } catch (err) {
    return { checks: [{ name: 'database', status: 'fail', message: (err as Error).message }] };
  } finally {
    await db.close();
  }
}

/** Node (the engines range), and a pg_dump for the server (else backups use the built-in engine). */
export async function checkVersions(config: AppConfig, serverVersionNum: number | undefined): Promise<Check[]> {
  const major = Number(process.versions.node.split('.')[0]);
  const out: Check[] = [
    major >= 20
      ? { name: 'node', status: 'ok', message: `Node.js ${process.version}` }
      : { name: 'node', status: 'fail', message: `Node.js ${process.version}: 20 or newer is needed` },
  ];
  if (serverVersionNum !== undefined) {
    const pgDump = await choosePgDump(config.backups, serverVersionNum);
    out.push(
      pgDump.path
        ? { name: 'pg_dump', status: 'ok', message: `${pgDump.path} (${pgDump.version})` }
        : { name: 'pg_dump', status: 'ok', message: `backups use the built-in engine: ${pgDump.reason}` },
    );
  }
  return out;
}
