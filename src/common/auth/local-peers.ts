import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Injectable } from '@nestjs/common';
import { AppConfig } from '../../config/app-config';
import { DEFAULT_AGENT_ROOT } from '../../config/agent-identity-settings';
import { ConnectionEnds, peerUid, socketTablesAvailable } from '../net/socket-owner';

/**
 * Who is on the other end of a loopback connection: a person's (or the operator's) process on this
 * host, or an agent or plugin worker of some instance of the service. Local trusted mode makes
 * credential-less callers the board only in the first case, and loopback-only routes (metrics)
 * treat the second as remote.
 *
 * The peer's uid comes from the kernel's socket table (socket-owner.ts). It is an agent's or a
 * plugin worker's when it is in this instance's SERVICE_AGENT_UID_RANGE, is registered in an
 * identity registry on the host (this instance's SERVICE_AGENT_ROOT and the default one: every
 * instance sharing it hands out its uids there), is the plugin worker user, or has no account in
 * /etc/passwd (every instance's agents and workers run under bare numeric ids the allocator keeps
 * clear of the accounts). The service's own uid and root are people: when the service is not root,
 * its agents run as its own user and cannot be told apart (docs/security.md).
 *
 * The answer is cached per connection (a keep-alive connection asks the kernel once): requests that
 * carry a credential never ask at all.
 */
export type PeerKind = 'host_user' | 'agent' | 'unknown';

const PASSWD_TTL_MS = 60_000;
const VOUCHER_TTL_MS = 60_000;

/**
 * The header of an in-process call made for a caller (Fastify `inject`, which has no socket of its
 * own): a one-time voucher that carries the verdict on the caller's own connection.
 */
export const PEER_VOUCHER_HEADER = 'x-service-peer-voucher';

@Injectable()
export class LocalPeers {
  private readonly verdicts = new WeakMap<object, Promise<PeerKind>>();
  private passwd: { at: number; uids: Set<number>; byName: Map<string, number> } | null = null;
  private tables: Promise<boolean> | null = null;

  private readonly vouchers = new Map<string, { kind: Promise<PeerKind>; until: number }>();

  constructor(private readonly config: AppConfig) {}

  /**
   * A one-time voucher (PEER_VOUCHER_HEADER) for an in-process request made on behalf of the peer of
   * `socket`: that request is judged as that peer. Unguessable, single use, kept a minute at most.
   */
  voucherFor(socket: (ConnectionEnds & object) | undefined): string {
    const now = Date.now();
    for (const [k, v] of this.vouchers) if (v.until < now) this.vouchers.delete(k);
    const id = randomBytes(24).toString('base64url');
    this.vouchers.set(id, { kind: this.classify(socket), until: now + VOUCHER_TTL_MS });
    return id;
  }

  /** The verdict for a request: its voucher's when it carries a live one, else its own connection's. */
  classifyRequest(req: { socket?: ConnectionEnds & object; headers?: Record<string, unknown> }): Promise<PeerKind> {
    const raw = req.headers?.[PEER_VOUCHER_HEADER];
    const voucher = typeof raw === 'string' ? this.vouchers.get(raw) : undefined;
    if (voucher && typeof raw === 'string') {
      this.vouchers.delete(raw);
      if (voucher.until >= Date.now()) return voucher.kind;
    }
    return this.classify(req.socket);
  }

  /** What the peer of `socket` is; cached per connection. */
  classify(socket: (ConnectionEnds & object) | undefined): Promise<PeerKind> {
    if (!socket) return Promise.resolve('unknown');
    let v = this.verdicts.get(socket);
    if (!v) {
      v = this.lookup(socket);
      this.verdicts.set(socket, v);
    }
    return v;
  }

  /**
   * Whether a credential-less caller on this connection may be the implicit local board: a person's
   * process on this host. Where the kernel's tables cannot be read (not Linux: agents then run as
   * the service's own user anyway) it may; on Linux a peer that cannot be found may not.
   */
  async isLocalBoard(req: { socket?: ConnectionEnds & object; headers?: Record<string, unknown> }): Promise<boolean> {
    const kind = await this.classifyRequest(req);
    if (kind === 'host_user') return true;
    if (kind === 'agent') return false;
    return !(await this.tablesReadable());
  }

  /** Whether the peer is an agent or plugin worker of any instance on this host (loopback-only routes treat it as remote). */
  async isAgent(socket: (ConnectionEnds & object) | undefined): Promise<boolean> {
    return (await this.classify(socket)) === 'agent';
  }

  private tablesReadable(): Promise<boolean> {
    this.tables ??= socketTablesAvailable();
    return this.tables;
  }

  private async lookup(socket: ConnectionEnds): Promise<PeerKind> {
    const uid = await peerUid(socket);
    return uid === null ? 'unknown' : this.kindOf(uid);
  }

  /** A person's uid, or an agent's or plugin worker's of some instance on this host. */
  kindOf(uid: number): PeerKind {
    if (uid === process.getuid?.() || uid === 0) return 'host_user';
    const { uidRange, root } = this.config.agentIdentity;
    if (uid >= uidRange[0] && uid <= uidRange[1]) return 'agent';
    for (const r of new Set([root, DEFAULT_AGENT_ROOT])) if (fs.existsSync(path.join(r, 'ids', `u${uid}`))) return 'agent';
    const accounts = this.accounts();
    if (accounts.byName.get(this.config.plugins.workerUser) === uid) return 'agent';
    return accounts.uids.has(uid) ? 'host_user' : 'agent';
  }

  private accounts(): { uids: Set<number>; byName: Map<string, number> } {
    if (this.passwd && Date.now() - this.passwd.at < PASSWD_TTL_MS) return this.passwd;
    const uids = new Set<number>();
    const byName = new Map<string, number>();
    try {
      for (const line of fs.readFileSync('/etc/passwd', 'utf8').split('\n')) {
        const [name, , uid] = line.split(':');
        const n = Number(uid);
        if (name && uid && Number.isInteger(n)) {
          uids.add(n);
          byName.set(name, n);
        }
      }
    } catch {
      /* no passwd file: only root and the service's own uid are people */
    }
    this.passwd = { at: Date.now(), uids, byName };
    return this.passwd;
  }
}
