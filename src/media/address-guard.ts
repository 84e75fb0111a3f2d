// Which addresses a photo download may connect to (docs/media.md, "Where photos may come from"): a
// public unicast address only. Loopback, private (RFC 1918), carrier-grade NAT, link-local,
// unique-local, multicast, broadcast, unspecified (0.0.0.0, ::), documentation, benchmarking and
// every other reserved range are refused, as are the IPv6 forms that carry an IPv4 address inside
// (IPv4-mapped, IPv4-compatible, NAT64, 6to4, Teredo), unless the feed's `media.allowInternal`
// names the host or a range holding the address. A URL's odd IPv4 spellings (2130706434, 0177.0.0.1,
// 0x7f.1, 127.1) are normalized by the URL parser before they get here; ipaddr.js parses the rest.
import ipaddr from 'ipaddr.js';

/** What a feed's `media.allowInternal` allows: host names (exact, any case) and address ranges. */
export interface InternalAllowance {
  hosts: ReadonlySet<string>;
  ranges: ReadonlyArray<[ipaddr.IPv4 | ipaddr.IPv6, number]>;
}

export const NO_INTERNAL: InternalAllowance = { hosts: new Set(), ranges: [] };

/** An allowInternal entry: a CIDR range, one address, or a host name. */
export function parseAllowance(entries: readonly string[]): InternalAllowance {
  const hosts = new Set<string>();
  const ranges: Array<[ipaddr.IPv4 | ipaddr.IPv6, number]> = [];
  for (const entry of entries) {
    const bare = entry.trim().replace(/^\[(.*)\]$/, '$1');
    if (bare.includes('/')) ranges.push(ipaddr.parseCIDR(bare));
    else if (ipaddr.isValid(bare)) {
      const addr = ipaddr.parse(bare);
      ranges.push([addr, addr.kind() === 'ipv4' ? 32 : 128]);
    } else hosts.add(bare.toLowerCase());
  }
  return { hosts, ranges };
}

/** Whether `entry` is something parseAllowance reads (for the config's check). */
export function allowanceEntryError(entry: string): string | undefined {
  const bare = entry.trim().replace(/^\[(.*)\]$/, '$1');
  if (bare.includes('/'))
    return ipaddr.isValidCIDR(bare) ? undefined : `"${entry}" is not a CIDR range (e.g. 10.20.0.0/16 or fd00::/8)`;
  if (ipaddr.isValid(bare) || /^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/i.test(bare))
    return undefined;
  return `"${entry}" is neither a host name, an address nor a CIDR range`;
}

/** IPv6 ranges that hold an IPv4 address or are not global unicast, beyond ipaddr.js's names. */
const IPV6_GLOBAL_UNICAST = ipaddr.parseCIDR('2000::/3');
const IPV6_IPV4_COMPATIBLE = ipaddr.parseCIDR('::/96');

/** Why `address` may not be connected to for `host`, or undefined where it may. */
export function addressRefusal(address: string, host: string, allow: InternalAllowance): string | undefined {
  const bare = address.replace(/^\[(.*)\]$/, '$1');
  if (!ipaddr.isValid(bare)) return `${address} is not an IP address`;
  const parsed = ipaddr.parse(bare);
  // ::ffff:127.0.0.1 is 127.0.0.1: judged, and allowed, as the IPv4 address it is
  const addr =
    parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()
      ? (parsed as ipaddr.IPv6).toIPv4Address()
      : parsed;
  const kind = rangeOf(addr);
  if (kind === 'unicast') return undefined;
  if (allow.hosts.has(host.toLowerCase().replace(/^\[(.*)\]$/, '$1'))) return undefined;
  if (allow.ranges.some(([net, bits]) => net.kind() === addr.kind() && addr.match(net, bits))) return undefined;
  return `${addr.toString()} is a ${kind} address, not a public one (feeds[].media.allowInternal allows an internal photo host)`;
}

function rangeOf(addr: ipaddr.IPv4 | ipaddr.IPv6): string {
  const named = addr.range();
  if (addr.kind() === 'ipv4' || named !== 'unicast') return named;
  if (addr.match(IPV6_IPV4_COMPATIBLE)) return 'IPv4-compatible';
  return addr.match(IPV6_GLOBAL_UNICAST) ? 'unicast' : 'reserved';
}
