import * as dns from 'node:dns';
import type { LookupFunction } from 'node:net';
import * as ipaddr from 'ipaddr.js';
import { Agent, fetch as undiciFetch, type RequestInit, type Response } from 'undici';
import { OutboundSettings, unmapped } from '../../config/outbound-config';

/**
 * The one way the service fetches a URL a user gave it (skill imports, webhook targets of the http
 * and gateway adapters). A destination is refused when any address its host resolves to is
 * loopback, link-local (169.254.169.254 included), private, CGNAT, unique-local, multicast,
 * unspecified or otherwise not global unicast, IPv4-mapped IPv6 forms included. The check runs in
 * the connection's own DNS lookup, so the address checked is the address connected to (no
 * rebinding between check and connect), and again on every redirect hop (followed here, counted).
 * SERVICE_OUTBOUND_ALLOW re-opens chosen hosts and ranges (self-hosted git servers).
 */

export type OutboundRefusalReason =
  'scheme' | 'loopback' | 'private' | 'link_local' | 'unique_local' | 'multicast' | 'unspecified' | 'reserved';

const DESCRIPTION: Record<OutboundRefusalReason, string> = {
  scheme: 'not an allowed URL scheme',
  loopback: 'a loopback address',
  private: 'a private network address',
  link_local: 'a link-local address',
  unique_local: 'a unique-local address',
  multicast: 'a multicast or broadcast address',
  unspecified: 'an unspecified address',
  reserved: 'a reserved or non-global address',
};

/** A destination the policy refuses; routes answer 422 `url_not_allowed` with `reason`. */
export class OutboundRefusedError extends Error {
  readonly code = 'url_not_allowed';
  constructor(
    readonly reason: OutboundRefusalReason,
    host: string,
    viaRedirect = false,
  ) {
    super(
      reason === 'scheme'
        ? `${viaRedirect ? 'A redirect leads to a URL whose' : "The URL's"} scheme is not allowed (http and https only)`
        : `${viaRedirect ? 'A redirect leads to' : 'The URL names'} ${host}, which is ${DESCRIPTION[reason]}; such destinations are refused (an operator may allow chosen hosts with SERVICE_OUTBOUND_ALLOW)`,
    );
  }
}

export interface OutboundOptions {
  /** loopback destinations are allowed (the http adapter's webhook targets in local_trusted mode) */
  allowLoopback?: boolean;
  /** redirects followed before giving up (default 5) */
  maxRedirects?: number;
  /** hosts the operator named in other settings (e.g. SERVICE_GITHUB_API_URL), allowed like SERVICE_OUTBOUND_ALLOW entries */
  trustedHosts?: string[];
}

const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR('2000::/3');
const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/** Why an address may not be connected to, or null for a global unicast address. */
export function classifyAddress(address: string): OutboundRefusalReason | null {
  let a: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    a = ipaddr.process(address);
  } catch {
    return 'reserved';
  }
  switch (a.range()) {
    case 'unicast':
      // IPv6 unicast outside 2000::/3 (e.g. the deprecated IPv4-compatible ::a.b.c.d) is not global
      return a.kind() === 'ipv6' && !a.match(GLOBAL_UNICAST_V6) ? 'reserved' : null;
    case 'loopback':
      return 'loopback';
    case 'private':
    case 'carrierGradeNat':
      return 'private';
    case 'linkLocal':
      return 'link_local';
    case 'uniqueLocal':
      return 'unique_local';
    case 'multicast':
    case 'broadcast':
      return 'multicast';
    case 'unspecified':
      return 'unspecified';
    default:
      return 'reserved';
  }
}

/** The OutboundRefusedError behind a fetch failure (undici wraps errors of the connection in `cause`). */
export function refusalIn(err: unknown): OutboundRefusedError | undefined {
  let e: unknown = err;
  for (let i = 0; i < 6 && e; i++) {
    if (e instanceof OutboundRefusedError) return e;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

export class OutboundGuard {
  private readonly agents = new Map<string, Agent>();

  constructor(private readonly settings: OutboundSettings) {}

  /** The host is on the operator's allow-list by name. */
  hostAllowed(hostname: string, opts: OutboundOptions = {}): boolean {
    const h = hostname
      .toLowerCase()
      .replace(/^\[|\]$/g, '')
      .replace(/\.$/, '');
    if (opts.trustedHosts?.some((t) => t.toLowerCase().replace(/^\[|\]$/g, '') === h)) return true;
    return this.settings.allowHosts.some((e) => (e.startsWith('*.') ? h.endsWith(e.slice(1)) : h === e));
  }

  /** Why this address is refused, or null. */
  addressRefusal(address: string, opts: OutboundOptions = {}): OutboundRefusalReason | null {
    const reason = classifyAddress(address);
    if (!reason) return null;
    if (reason === 'loopback' && opts.allowLoopback) return null;
    const a = unmapped(ipaddr.parse(address));
    if (this.settings.allowRanges.some(([net, bits]) => net.kind() === a.kind() && a.match(net, bits))) return null;
    return reason;
  }

  /**
   * What can be said before connecting: the scheme, and the address when the host is an IP literal
   * (connecting to a literal does no lookup). Host names are checked in the connection's lookup.
   */
  checkUrl(url: URL, opts: OutboundOptions = {}, schemes = ['http:', 'https:'], viaRedirect = false): void {
    if (!schemes.includes(url.protocol)) throw new OutboundRefusedError('scheme', url.hostname, viaRedirect);
    const host = url.hostname.replace(/^\[|\]$/g, '');
    if (this.hostAllowed(host, opts)) return;
    if (ipaddr.isValid(host)) {
      const reason = this.addressRefusal(host, opts);
      if (reason) throw new OutboundRefusedError(reason, url.hostname, viaRedirect);
    }
  }

  /**
   * For configuration that is stored and fetched later (webhook targets): what can be refused
   * without DNS, i.e. checkUrl plus the `localhost` names. Returns the refusal, or null. The
   * request itself is checked again when it is made.
   */
  refusalOf(raw: string, opts: OutboundOptions = {}, schemes = ['http:', 'https:']): OutboundRefusedError | null {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      return null; // not a URL: the schema check says so
    }
    try {
      this.checkUrl(url, opts, schemes);
    } catch (err) {
      if (err instanceof OutboundRefusedError) return err;
      throw err;
    }
    const host = url.hostname.toLowerCase().replace(/\.$/, '');
    if (!opts.allowLoopback && !this.hostAllowed(host, opts) && (host === 'localhost' || host.endsWith('.localhost'))) {
      return new OutboundRefusedError('loopback', url.hostname);
    }
    return null;
  }

  /** A `lookup` for net/tls connections that refuses hosts resolving to a refused address (any of them). */
  lookup(opts: OutboundOptions = {}): LookupFunction {
    return (hostname, options, callback) => {
      dns.lookup(hostname, { all: true, family: options.family ?? 0, hints: options.hints }, (err, addresses) => {
        if (err) return callback(err, '', 0);
        if (!this.hostAllowed(hostname, opts)) {
          for (const a of addresses) {
            const reason = this.addressRefusal(a.address, opts);
            if (reason) return callback(new OutboundRefusedError(reason, hostname), '', 0);
          }
        }
        if (!addresses.length) return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), '', 0);
        if (options.all) return (callback as (e: null, a: dns.LookupAddress[]) => void)(null, addresses);
        callback(null, addresses[0].address, addresses[0].family);
      });
    };
  }

  private agent(opts: OutboundOptions): Agent {
    const key = `${opts.allowLoopback === true}|${(opts.trustedHosts ?? []).join(',')}`;
    let agent = this.agents.get(key);
    if (!agent) {
      agent = new Agent({ connect: { lookup: this.lookup(opts) } });
      this.agents.set(key, agent);
    }
    return agent;
  }

  /**
   * fetch() with the destination policy on the first request and on every redirect (followed here:
   * 303, and 301/302 after a POST, continue as GET; credentials are not carried to another origin).
   * Throws OutboundRefusedError for a refused destination; other failures as fetch does.
   */
  async fetch(input: string | URL, init: RequestInit = {}, opts: OutboundOptions = {}): Promise<Response> {
    const maxRedirects = opts.maxRedirects ?? 5;
    let url = new URL(input);
    let method = (init.method ?? 'GET').toUpperCase();
    let body = init.body;
    const headers = new Headers(init.headers as HeadersInit | undefined);
    for (let hop = 0; ; hop++) {
      this.checkUrl(url, opts, undefined, hop > 0);
      let res: Response;
      try {
        res = await undiciFetch(url, { ...init, method, body, headers, redirect: 'manual', dispatcher: this.agent(opts) });
      } catch (err) {
        const refusal = refusalIn(err);
        if (refusal) throw hop > 0 ? new OutboundRefusedError(refusal.reason, url.hostname, true) : refusal;
        throw err;
      }
      const location = res.headers.get('location');
      if (!REDIRECTS.has(res.status) || !location || init.redirect === 'manual') return res;
      await res.body?.cancel().catch(() => undefined);
      if (hop >= maxRedirects) throw new Error(`more than ${maxRedirects} redirects`);
      const next = new URL(location, url);
      if (res.status === 303 || ((res.status === 301 || res.status === 302) && method === 'POST')) {
        method = 'GET';
        body = undefined;
        headers.delete('content-type');
        headers.delete('content-length');
      }
      if (next.origin !== url.origin) {
        headers.delete('authorization');
        headers.delete('cookie');
      }
      url = next;
    }
  }

  async close(): Promise<void> {
    await Promise.all([...this.agents.values()].map((a) => a.close().catch(() => undefined)));
    this.agents.clear();
  }
}

const guards = new WeakMap<OutboundSettings, OutboundGuard>();

/** The guard of these settings (one connection pool per configuration). */
export function outboundGuard(settings: OutboundSettings): OutboundGuard {
  let g = guards.get(settings);
  if (!g) {
    g = new OutboundGuard(settings);
    guards.set(settings, g);
  }
  return g;
}

/** A guard with the options its requests are made with. */
export interface OutboundTarget {
  guard: OutboundGuard;
  options: OutboundOptions;
}

/**
 * The guard and options for endpoints the service's users name for it to call (the http and
 * gateway adapters' webhook targets, plugins' `http.fetch`): loopback is allowed in `local_trusted`
 * mode only (the service is bound to loopback and used by one local operator, whose own local
 * endpoints are legitimate targets); never private, link-local or other non-public destinations
 * unless SERVICE_OUTBOUND_ALLOW names them.
 */
export function endpointOutbound(config: { outbound: OutboundSettings; deploymentMode: string }): OutboundTarget {
  return { guard: outboundGuard(config.outbound), options: { allowLoopback: config.deploymentMode === 'local_trusted' } };
}
