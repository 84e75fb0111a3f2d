// Who a request comes from, judged by the socket's peer address (never a header a client writes):
// loopback (127.0.0.0/8, ::1, and IPv4 loopback mapped into IPv6), or an address of a configured
// list of addresses and CIDR blocks (worker.allowFrom). Used by the worker's HTTP face
// (server/http-guard.ts) to keep /status, /ui and /metrics to those who may read them.
import { BlockList, isIP } from 'node:net';

export interface PeerRule {
  address: string;
  family: 'ipv4' | 'ipv6';
  /** the CIDR prefix length; none: one address */
  prefix?: number;
}

/** An address or a CIDR block as written in the config, or undefined when it is neither. */
export function peerRule(text: string): PeerRule | undefined {
  const [address = '', prefix, more] = text.trim().split('/');
  if (more !== undefined) return undefined;
  const v = isIP(address);
  if (v === 0) return undefined;
  const family = v === 4 ? 'ipv4' : 'ipv6';
  if (prefix === undefined) return { address, family };
  if (!/^\d{1,3}$/.test(prefix) || Number(prefix) > (v === 4 ? 32 : 128)) return undefined;
  return { address, family, prefix: Number(prefix) };
}

/** Whether a peer address may read: loopback, or one of `allowed` (rules that do not parse are left out: the config refused them). */
export function peerAllowed(allowed: readonly string[]): (peer: string | undefined) => boolean {
  const list = new BlockList();
  list.addSubnet('127.0.0.0', 8, 'ipv4');
  list.addAddress('::1', 'ipv6');
  for (const text of allowed) {
    const rule = peerRule(text);
    if (!rule) continue;
    if (rule.prefix === undefined) list.addAddress(rule.address, rule.family);
    else list.addSubnet(rule.address, rule.prefix, rule.family);
  }
  return (peer) => {
    if (!peer) return false;
    // an IPv4 peer on a dual-stack socket shows as ::ffff:a.b.c.d
    const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(peer);
    if (mapped) return list.check(mapped[1]!, 'ipv4');
    const v = isIP(peer);
    return v !== 0 && list.check(peer, v === 4 ? 'ipv4' : 'ipv6');
  };
}
