// The connections of a feed run's photo downloads: an undici Agent whose every connection is opened
// to an address this file resolved and checked (address-guard.ts). Its `connect.lookup` resolves the
// host itself, refuses the host if any address it resolves to is internal, and hands the socket
// only the addresses it checked, so a name that resolves to a public address when checked and to
// an internal one a moment later (DNS rebinding) cannot slip through: there is no second lookup.
// An IP literal in a URL never reaches a lookup (Node connects to it as given); `literalRefusal`
// checks it before the request.
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { isIP } from 'node:net';
import { lazyAgent, type LazyAgent } from '../net/request.js';
import { addressRefusal, type InternalAllowance } from './address-guard.js';

/** A download refused before connecting: the address is not public (nothing was sent, nothing read). */
export class AddressRefused extends Error {
  constructor(
    readonly host: string,
    readonly why: string,
  ) {
    super(`refused: ${host}: ${why}`);
    this.name = 'AddressRefused';
  }
}

export interface PhotoAgent {
  /** (made, and undici loaded, at the first download: net/undici.ts) */
  agent: LazyAgent;
  allow: InternalAllowance;
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** How a host name is resolved: node:dns lookup (the system's resolver), all addresses. */
export type Resolve = (
  hostname: string,
  family: number,
  callback: (err: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
) => void;

const systemResolve: Resolve = (hostname, family, callback) => dnsLookup(hostname, { all: true, family }, callback);

export function photoAgent(
  allow: InternalAllowance,
  connections: number,
  resolve: Resolve = systemResolve,
): PhotoAgent {
  const lookup = (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    const family = options.family === 'IPv4' ? 4 : options.family === 'IPv6' ? 6 : (options.family ?? 0);
    resolve(hostname, family, (err, addresses) => {
      if (err) return callback(err, []);
      if (addresses.length === 0)
        return callback(Object.assign(new Error(`${hostname} resolves to no address`), { code: 'ENOTFOUND' }), []);
      for (const a of addresses) {
        const why = addressRefusal(a.address, hostname, allow);
        if (why) return callback(new AddressRefused(hostname, why), []);
      }
      if (options.all) return callback(null, addresses);
      callback(null, addresses[0]!.address, addresses[0]!.family);
    });
  };
  const agent = lazyAgent({ connections, keepAliveTimeout: 10_000, pipelining: 1, connect: { lookup } });
  return { agent, allow };
}

/** Why a URL's host, if it is an IP literal, may not be connected to. */
export function literalRefusal(url: URL, allow: InternalAllowance): string | undefined {
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  return isIP(host) ? addressRefusal(host, host, allow) : undefined;
}

/** The AddressRefused an undici error came from, if any. */
export function refusalIn(err: unknown): AddressRefused | undefined {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++)
    if (e instanceof AddressRefused) return e;
  return undefined;
}
