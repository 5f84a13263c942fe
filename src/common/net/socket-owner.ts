import { promises as fsp } from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';

/**
 * The uid of the process that opened the other end of a loopback TCP connection, read from the
 * kernel's socket tables (/proc/net/tcp and /proc/net/tcp6): the client's socket is the row whose
 * local address is the connection's remote end and whose remote address is its local end; its
 * `uid` column is the owner of that socket (the client process's effective uid when it made it).
 * Linux only; null elsewhere, or when no row matches (the client is gone).
 */

/** What is read of a connection: its two ends. */
export interface ConnectionEnds {
  localAddress?: string;
  localPort?: number;
  remoteAddress?: string;
  remotePort?: number;
}

const LITTLE = os.endianness() === 'LE';

/** The address bytes as the kernel prints them: each 32-bit word in host order, upper-case hex. */
function kernelHex(bytes: Buffer): string {
  let out = '';
  for (let i = 0; i < bytes.length; i += 4) {
    const word = bytes.subarray(i, i + 4);
    out += Buffer.from(LITTLE ? [...word].reverse() : word).toString('hex');
  }
  return out.toUpperCase();
}

const hexPort = (port: number) => port.toString(16).toUpperCase().padStart(4, '0');

/** How `addr:port` appears in /proc/net/tcp (IPv4) and /proc/net/tcp6 (IPv6, and IPv4 as ::ffff:a.b.c.d). */
function encodings(addr: string, port: number): { v4: string | null; v6: string | null } {
  const plain = addr.startsWith('::ffff:') && net.isIPv4(addr.slice(7)) ? addr.slice(7) : addr;
  if (net.isIPv4(plain)) {
    const b = Buffer.from(plain.split('.').map(Number));
    const mapped = Buffer.concat([Buffer.alloc(10), Buffer.from([0xff, 0xff]), b]);
    return { v4: `${kernelHex(b)}:${hexPort(port)}`, v6: `${kernelHex(mapped)}:${hexPort(port)}` };
  }
  if (net.isIPv6(plain)) return { v4: null, v6: `${kernelHex(ipv6Bytes(plain))}:${hexPort(port)}` };
  return { v4: null, v6: null };
}

function ipv6Bytes(addr: string): Buffer {
  const [head, tail = ''] = addr.split('::');
  const part = (s: string) => (s ? s.split(':') : []);
  const h = part(head);
  const t = part(tail);
  const groups = addr.includes('::') ? [...h, ...Array(8 - h.length - t.length).fill('0'), ...t] : h;
  const out = Buffer.alloc(16);
  groups.forEach((g, i) => out.writeUInt16BE(parseInt(g || '0', 16), i * 2));
  return out;
}

/** A listening TCP socket on a port: the uid that opened it and its inode (to find its process). */
export interface Listener {
  uid: number;
  inode: string;
}

/** The sockets listening on `port` (any address, IPv4 and IPv6), from the kernel's tables. */
export async function listenersOn(port: number): Promise<Listener[]> {
  const hex = `:${hexPort(port)}`;
  const out: Listener[] = [];
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let table: string;
    try {
      table = await fsp.readFile(file, 'latin1');
    } catch {
      continue;
    }
    for (const line of table.split('\n')) {
      const f = line.trim().split(/\s+/);
      // local address, remote address, state 0A = LISTEN, ..., uid, timeout, inode
      if (f.length > 9 && f[3] === '0A' && f[1].endsWith(hex)) out.push({ uid: Number(f[7]), inode: f[9] });
    }
  }
  return out;
}

/** The uid column of the row whose local and remote addresses are these, in one table's text. */
function findUid(table: string, local: string, remote: string): number | null {
  for (const line of table.split('\n')) {
    const f = line.trim().split(/\s+/);
    if (f.length > 7 && f[1] === local && f[2] === remote) {
      const uid = Number(f[7]);
      return Number.isInteger(uid) ? uid : null;
    }
  }
  return null;
}

/** Whether the kernel's socket tables can be read here (Linux). */
export async function socketTablesAvailable(): Promise<boolean> {
  try {
    await fsp.access('/proc/net/tcp');
    return true;
  } catch {
    return false;
  }
}

/** The uid owning the client end of this (loopback) connection, or null when it cannot be told. */
export async function peerUid(c: ConnectionEnds): Promise<number | null> {
  if (!c.localAddress || !c.remoteAddress || !c.localPort || !c.remotePort) return null;
  const client = encodings(c.remoteAddress, c.remotePort);
  const server = encodings(c.localAddress, c.localPort);
  for (const [file, local, remote] of [
    ['/proc/net/tcp', client.v4, server.v4],
    ['/proc/net/tcp6', client.v6, server.v6],
  ] as const) {
    if (!local || !remote) continue;
    let table: string;
    try {
      table = await fsp.readFile(file, 'latin1');
    } catch {
      continue;
    }
    const uid = findUid(table, local, remote);
    if (uid !== null) return uid;
  }
  return null;
}
