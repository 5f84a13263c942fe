import { createHash, createHmac, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { IdentitySettings } from '../../config/agent-identity-settings';
import { TenantDir, withDir } from '../fs/tenant-dir';
import { realPathOf } from '../paths/path-guard';
import { runningAsRoot } from '../../config/process-users';
import { isDeadLocalOwner } from './process-groups';

/**
 * An OS identity per agent (and a group per company), allocated on this host; plugin workers get
 * uids from the same registry (`forPlugin`).
 *
 * As root, every agent's processes run under a numeric uid of their own, taken from
 * `SERVICE_AGENT_UID_RANGE`, with the company's group (a gid from the same range) as their only
 * group: agents of one company can share a project workspace through the group, agents of
 * different companies share nothing. Numeric ids need no passwd entry.
 *
 * The allocation is host-wide, not per database: `<root>/ids/u<uid>` holds the key the uid was
 * given to (`agent:<id>`), created with O_EXCL, so two instances on one host (same or different
 * databases) never hand one uid to two agents. `<root>/keys/<sha256(key)>` maps the key back to
 * its uid; it is created by link(2), so concurrent first runs of one agent agree on one uid.
 *
 * Each agent has a persistent private HOME (`<root>/homes/<uid>-<tag>`, 0700, owned by its uid; the
 * tag keeps the names unguessable): the coding-agent CLIs keep sessions and logins there. Each run gets private scratch
 * (`<root>/runs/<runId>`, 0700, its `tmp/` is the run's TMPDIR, delivered skills go under it),
 * removed when the run ends; leftovers of a crashed instance are swept at start.
 */

export interface ProcessIdentity {
  /** a display name (no passwd entry needed) */
  user: string;
  uid: number;
  gid: number;
  /** private home directory (0700, owned by uid) */
  home: string;
}

export class AgentIdentityError extends Error {
  readonly code: string = 'agent_identity_unavailable';
}

const sha = (s: string) => createHash('sha256').update(s).digest('hex');

/** Ids listed in /etc/passwd or /etc/group (never handed out, even inside the range). */
function systemIds(file: string): Set<number> {
  try {
    return new Set(
      fs
        .readFileSync(file, 'utf8')
        .split('\n')
        .map((l) => Number(l.split(':')[2]))
        .filter((n) => Number.isInteger(n)),
    );
  } catch {
    return new Set();
  }
}

export interface RunScratch {
  /** the run's private folder (0700, owned by the agent) */
  dir: string;
  /** TMPDIR of the run */
  tmp: string;
}

const OWNER_FILE = '.owner';

export class AgentIdentities {
  private readonly cache = new Map<string, number>();
  private readonly homesReady = new Set<number>();
  private reserved?: { u: Set<number>; g: Set<number> };

  constructor(readonly settings: IdentitySettings) {}

  /** Agents get identities of their own only when the service can switch users (root, not opted out). */
  get enabled(): boolean {
    return this.settings.isolate && runningAsRoot();
  }

  /** The identity an agent's processes run as, or null when agents run as the service's user. */
  forAgent(agentId: string, companyId: string): ProcessIdentity | null {
    return this.identity(`agent:${agentId}`, companyId, `agent-${agentId.slice(0, 8)}`);
  }

  /** The identity of a company's project runtime services (a uid of their own, the company's group). */
  forCompanyServices(companyId: string): ProcessIdentity | null {
    return this.identity(`services:${companyId}`, companyId, `services-${companyId.slice(0, 8)}`);
  }

  /** The identity that runs the adapter form's environment checks (no company, no agent). */
  forRuntimeChecks(): ProcessIdentity | null {
    return this.identity('runtime-checks', 'runtime-checks', 'runtime-checks');
  }

  /**
   * The identity of one plugin's worker: a uid of its own (so no worker can signal, trace or read
   * another's memory, environment or HOME) with `gid`, the plugin workers' group that may read the
   * sealed plugin code. Null when identities are off (workers then share the plugin user).
   */
  forPlugin(pluginId: string, gid: number): ProcessIdentity | null {
    return this.identityWithGid(`plugin:${pluginId}`, gid, `plugin-${pluginId.slice(0, 8)}`);
  }

  /** The company's group id (null when identities are off). */
  companyGid(companyId: string): number | null {
    if (!this.enabled) return null;
    this.prepareRoot();
    return this.allocate('g', `company:${companyId}`);
  }

  private identity(key: string, companyId: string, user: string): ProcessIdentity | null {
    if (!this.enabled) return null;
    this.prepareRoot();
    return this.identityWithGid(key, this.allocate('g', `company:${companyId}`), user);
  }

  private identityWithGid(key: string, gid: number, user: string): ProcessIdentity | null {
    if (!this.enabled) return null;
    this.prepareRoot();
    const uid = this.allocate('u', key);
    const home = this.homeOf(uid);
    if (!this.homesReady.has(uid)) {
      ensurePrivateDir(home, uid, gid);
      this.homesReady.add(uid);
    }
    return { user, uid, gid, home };
  }

  /**
   * `<root>/homes/<uid>-<tag>`: the tag (an HMAC of the uid with a secret of the registry) makes the
   * names unguessable, so that no agent can tell which uids exist by probing `homes/` (0711: it can
   * be entered, not listed). A home made under the earlier name `homes/<uid>` is moved there.
   */
  private homeOf(uid: number): string {
    const homes = path.join(this.settings.root, 'homes');
    const home = path.join(homes, `${uid}-${createHmac('sha256', this.homesSecret()).update(`u${uid}`).digest('hex').slice(0, 16)}`);
    const legacy = path.join(homes, String(uid));
    try {
      if (!fs.existsSync(home) && fs.lstatSync(legacy).isDirectory()) fs.renameSync(legacy, home);
    } catch {
      /* no earlier home */
    }
    return home;
  }

  private secret?: Buffer;

  /** The registry's secret for home names (`keys/homes-secret`, 0600 root), made once per host. */
  private homesSecret(): Buffer {
    if (this.secret) return this.secret;
    const file = path.join(this.settings.root, 'keys', 'homes-secret');
    const read = () => {
      try {
        const b = Buffer.from(fs.readFileSync(file, 'utf8').trim(), 'hex');
        return b.length === 32 ? b : null;
      } catch {
        return null;
      }
    };
    let got = read();
    if (!got) {
      // published by link(2): concurrent instances agree on one secret
      const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
      fs.writeFileSync(tmp, randomBytes(32).toString('hex'), { mode: 0o600 });
      try {
        fs.linkSync(tmp, file);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      } finally {
        fs.rmSync(tmp, { force: true });
      }
      got = read();
    }
    if (!got) throw new AgentIdentityError(`the registry secret ${file} could not be made`);
    this.secret = got;
    return got;
  }

  /**
   * A private scratch folder for one run, owned by `identity` (or by the service when null), with
   * a `tmp/` inside. Marked with this process as its owner, so a crashed instance's folders can be
   * told from a live one's.
   */
  createRunScratch(runId: string, identity: ProcessIdentity | null): RunScratch {
    this.prepareRoot();
    const dir = this.scratchDirOf(runId);
    this.removeScratchDir(path.basename(dir));
    fs.mkdirSync(dir, { mode: 0o700 });
    fs.writeFileSync(path.join(dir, OWNER_FILE), `${os.hostname()}-${process.pid}`, { mode: 0o600 });
    const tmp = path.join(dir, 'tmp');
    fs.mkdirSync(tmp, { mode: 0o700 });
    if (identity) {
      fs.chownSync(tmp, identity.uid, identity.gid);
      fs.chownSync(dir, identity.uid, identity.gid);
    }
    return { dir, tmp };
  }

  removeRunScratch(runId: string): void {
    this.removeScratchDir(path.basename(this.scratchDirOf(runId)));
  }

  /**
   * Removes `runs/<name>` through descriptors (common/fs/tenant-dir): the folder belongs to the
   * agent's uid, whose other processes may swap links into it while it is removed.
   */
  private removeScratchDir(name: string): void {
    withDir(TenantDir.open(realPathOf(path.join(this.settings.root, 'runs')), { rights: null }), (runs) => runs.remove(name));
  }

  /** The owner mark of a run folder (read without following links or blocking on a FIFO). */
  private ownerOf(name: string): string {
    try {
      return withDir(TenantDir.open(realPathOf(path.join(this.settings.root, 'runs', name)), { rights: null }), (d) => {
        const r = d.readFile(OWNER_FILE, 4096);
        return r.kind === 'read' ? r.bytes.toString('utf8').trim() : '';
      });
    } catch {
      return '';
    }
  }

  /** Removes run folders whose instance (on this host) is gone. Returns how many. */
  sweepScratch(): number {
    const runs = path.join(this.settings.root, 'runs');
    let removed = 0;
    let entries: string[];
    try {
      entries = fs.readdirSync(runs);
    } catch {
      return 0;
    }
    for (const name of entries) {
      // no owner file: a half-made folder
      const owner = this.ownerOf(name);
      // another host's folder cannot be here (the root is local); no owner, or a dead one: left behind
      if (owner && !isDeadLocalOwner(owner) && owner.startsWith(`${os.hostname()}-`)) continue;
      try {
        this.removeScratchDir(name);
        removed++;
      } catch {
        /* in use or gone */
      }
    }
    return removed;
  }

  private scratchDirOf(runId: string): string {
    return path.join(this.settings.root, 'runs', runId.replace(/[^a-zA-Z0-9-]/g, ''));
  }

  private rootReady = false;

  /** `<root>` (0711): ids/, keys/ and etc/ only root can read; homes/ and runs/ can be entered, not listed. */
  prepare(): void {
    this.prepareRoot();
  }

  private prepareRoot(): void {
    if (this.rootReady) return;
    const { root } = this.settings;
    try {
      fs.mkdirSync(root, { recursive: true, mode: 0o711 });
      for (const [sub, mode] of [
        ['', 0o711],
        ['ids', 0o700],
        ['keys', 0o700],
        // passwd and group files bind-mounted into sandboxes (read through the mount, never by path)
        ['etc', 0o700],
        ['homes', 0o711],
        ['runs', 0o711],
      ] as const) {
        const p = path.join(root, sub);
        fs.mkdirSync(p, { recursive: true, mode });
        const st = fs.statSync(p);
        if (this.enabled && st.uid !== 0) fs.chownSync(p, 0, 0);
        if ((st.mode & 0o777) !== mode) fs.chmodSync(p, mode);
      }
    } catch (err) {
      throw new AgentIdentityError(`the agent identity folder ${root} could not be prepared: ${(err as Error).message}`);
    }
    this.rootReady = true;
  }

  /** The id (uid when kind 'u', gid when 'g') given to `key` on this host, allocating one on first use. */
  private allocate(kind: 'u' | 'g', key: string): number {
    const cacheKey = `${kind}:${key}`;
    const hit = this.cache.get(cacheKey);
    if (hit !== undefined) return hit;
    const keyFile = path.join(this.settings.root, 'keys', `${kind}-${sha(key)}`);
    const existing = readId(keyFile);
    if (existing !== null) {
      this.cache.set(cacheKey, existing);
      return existing;
    }
    this.reserved ??= { u: systemIds('/etc/passwd'), g: systemIds('/etc/group') };
    const [lo, hi] = this.settings.uidRange;
    const size = hi - lo + 1;
    const first = Number(BigInt(`0x${sha(key).slice(0, 12)}`) % BigInt(size));
    for (let i = 0; i < size; i++) {
      const id = lo + ((first + i) % size);
      if (this.reserved[kind].has(id)) continue;
      const claim = path.join(this.settings.root, 'ids', `${kind}${id}`);
      try {
        fs.writeFileSync(claim, key, { flag: 'wx', mode: 0o600 });
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'EEXIST') continue;
        throw new AgentIdentityError(`could not claim ${kind === 'u' ? 'uid' : 'gid'} ${id}: ${(err as Error).message}`);
      }
      // publish key -> id atomically; a concurrent allocation of the same key may have won
      const tmp = `${keyFile}.${process.pid}.${randomBytes(4).toString('hex')}`;
      fs.writeFileSync(tmp, String(id), { mode: 0o600 });
      try {
        fs.linkSync(tmp, keyFile);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
        fs.rmSync(claim, { force: true });
      } finally {
        fs.rmSync(tmp, { force: true });
      }
      const won = readId(keyFile);
      if (won === null) throw new AgentIdentityError(`the identity of ${key} could not be recorded`);
      this.cache.set(cacheKey, won);
      return won;
    }
    throw new AgentIdentityError(`SERVICE_AGENT_UID_RANGE ${lo}-${hi} has no free id left on this host`);
  }
}

function readId(file: string): number | null {
  try {
    const n = Number(fs.readFileSync(file, 'utf8').trim());
    return Number.isInteger(n) && n > 0 ? n : null;
  } catch {
    return null;
  }
}

/** A directory only `uid` can use (0700), created or corrected. */
function ensurePrivateDir(dir: string, uid: number, gid: number): void {
  try {
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    const st = fs.statSync(dir);
    if (st.uid !== uid || st.gid !== gid) fs.chownSync(dir, uid, gid);
    if ((st.mode & 0o777) !== 0o700) fs.chmodSync(dir, 0o700);
  } catch (err) {
    throw new AgentIdentityError(`the home directory ${dir} could not be prepared: ${(err as Error).message}`);
  }
}
