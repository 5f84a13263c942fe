import * as path from 'node:path';

/** Who agent processes run as (see common/process/agent-identities.ts). */
export interface IdentitySettings {
  /** as root, run each agent under a uid of its own (SERVICE_AGENT_ISOLATION, default true) */
  isolate: boolean;
  /** host-wide folder of ids, homes and run scratch (SERVICE_AGENT_ROOT) */
  root: string;
  /** inclusive range of uids and gids handed out (SERVICE_AGENT_UID_RANGE) */
  uidRange: [number, number];
  /** PID and mount namespaces around agent processes when available (SERVICE_AGENT_SANDBOX: auto | off) */
  namespaces: 'auto' | 'off';
}

export const DEFAULT_UID_RANGE: [number, number] = [2_000_000, 2_999_999];
export const DEFAULT_AGENT_ROOT = '/var/lib/service-agents';

const BOOL = ['0', 'false', 'no', 'off', '1', 'true', 'yes', 'on'];

/** Settings from the environment, or a message naming the bad variable. */
export function identitySettingsFromEnv(env: NodeJS.ProcessEnv, dataDir: string, asRoot: boolean): IdentitySettings | string {
  const iso = (env.SERVICE_AGENT_ISOLATION ?? '').trim().toLowerCase();
  if (iso && !BOOL.includes(iso)) return `SERVICE_AGENT_ISOLATION must be a boolean (true/false), got "${env.SERVICE_AGENT_ISOLATION}"`;
  const rangeRaw = (env.SERVICE_AGENT_UID_RANGE ?? '').trim();
  let uidRange = DEFAULT_UID_RANGE;
  if (rangeRaw) {
    const m = /^(\d{1,10})-(\d{1,10})$/.exec(rangeRaw);
    const lo = m ? Number(m[1]) : NaN;
    const hi = m ? Number(m[2]) : NaN;
    if (!m || lo < 1000 || hi > 4_294_967_294 || hi - lo < 15) {
      return `SERVICE_AGENT_UID_RANGE must be "<first>-<last>" with first >= 1000, last <= 4294967294 and at least 16 ids, got "${rangeRaw}"`;
    }
    uidRange = [lo, hi];
  }
  const sandbox = (env.SERVICE_AGENT_SANDBOX ?? 'auto').trim().toLowerCase();
  if (sandbox !== 'auto' && sandbox !== 'off') return `SERVICE_AGENT_SANDBOX must be auto or off, got "${env.SERVICE_AGENT_SANDBOX}"`;
  const rootRaw = (env.SERVICE_AGENT_ROOT ?? '').trim();
  if (rootRaw && !path.isAbsolute(rootRaw)) return `SERVICE_AGENT_ROOT must be an absolute path, got "${rootRaw}"`;
  const root = rootRaw || (asRoot ? DEFAULT_AGENT_ROOT : path.join(dataDir, 'agents'));
  const dataAbs = path.resolve(dataDir);
  if (path.resolve(root) === dataAbs || path.resolve(root).startsWith(dataAbs + path.sep)) {
    if (asRoot && rootRaw) return `SERVICE_AGENT_ROOT must not be inside SERVICE_DATA_DIR (agents would need to enter the data directory)`;
  }
  return { isolate: !['0', 'false', 'no', 'off'].includes(iso), root: path.resolve(root), uidRange, namespaces: sandbox };
}
