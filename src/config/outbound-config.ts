import * as ipaddr from 'ipaddr.js';

/**
 * What server-side fetches of user-supplied URLs may reach beyond the public internet
 * (SERVICE_OUTBOUND_ALLOW): comma-separated host names (`git.internal`, `*.corp.example`), IP
 * addresses and CIDR ranges (`10.20.0.0/16`, `fd00::/8`). Everything else that resolves to a
 * loopback, link-local, private, unique-local, multicast or unspecified address is refused.
 */
export interface OutboundSettings {
  /** host names allowed whatever they resolve to; lower case; `*.x` entries match subdomains of x */
  allowHosts: string[];
  /** address ranges allowed */
  allowRanges: Array<[ipaddr.IPv4 | ipaddr.IPv6, number]>;
}

export function loadOutboundSettings(env: NodeJS.ProcessEnv): OutboundSettings {
  const allowHosts: string[] = [];
  const allowRanges: OutboundSettings['allowRanges'] = [];
  const entries = (env.SERVICE_OUTBOUND_ALLOW ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const raw of entries) {
    const entry = raw.replace(/^\[|\]$/g, '');
    if (entry.includes('/')) {
      try {
        const [addr, bits] = ipaddr.parseCIDR(entry);
        allowRanges.push([unmapped(addr), addr.kind() === 'ipv6' && unmapped(addr).kind() === 'ipv4' ? bits - 96 : bits]);
      } catch {
        throw new Error(`SERVICE_OUTBOUND_ALLOW: "${raw}" is not a valid CIDR range`);
      }
    } else if (ipaddr.isValid(entry)) {
      const addr = ipaddr.process(entry);
      allowRanges.push([addr, addr.kind() === 'ipv4' ? 32 : 128]);
    } else if (/^(\*\.)?[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*\.?$/i.test(entry)) {
      allowHosts.push(entry.toLowerCase().replace(/\.$/, ''));
    } else {
      throw new Error(`SERVICE_OUTBOUND_ALLOW: "${raw}" is neither a host name, an IP address nor a CIDR range`);
    }
  }
  return { allowHosts, allowRanges };
}

/** `::ffff:a.b.c.d` as the IPv4 address it stands for; any other address unchanged. */
export function unmapped(addr: ipaddr.IPv4 | ipaddr.IPv6): ipaddr.IPv4 | ipaddr.IPv6 {
  return addr.kind() === 'ipv6' && (addr as ipaddr.IPv6).isIPv4MappedAddress() ? (addr as ipaddr.IPv6).toIPv4Address() : addr;
}
