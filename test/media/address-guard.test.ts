// Which addresses a photo download may connect to (src/media/address-guard.ts, photo-agent.ts):
// every spelling of an internal address a feed's MediaURL can carry is refused, a public one is not,
// and media.allowInternal opens exactly the host or range it names.
import { describe, expect, it } from 'vitest';
import { addressRefusal, allowanceEntryError, NO_INTERNAL, parseAllowance } from '../../src/media/address-guard.js';
import { literalRefusal } from '../../src/media/photo-agent.js';

const refusedUrl = (url: string) => literalRefusal(new URL(url), NO_INTERNAL);

describe('addressRefusal', () => {
  it('refuses every spelling of a loopback, private or otherwise internal address in a URL', () => {
    const internal = [
      'http://127.0.0.2/p.jpg',
      'http://2130706434/p.jpg', // decimal 127.0.0.2
      'http://0177.0.0.2/p.jpg', // octal
      'http://0x7f.0.0.2/p.jpg', // hex
      'http://0x7f000002/p.jpg',
      'http://127.2/p.jpg', // short form
      'http://127.1/p.jpg',
      'http://0/p.jpg',
      'http://0.0.0.0/p.jpg',
      'http://[::1]/p.jpg',
      'http://[::]/p.jpg',
      'http://[::ffff:127.0.0.2]/p.jpg', // IPv4-mapped
      'http://[::ffff:7f00:2]/p.jpg',
      'http://[::127.0.0.2]/p.jpg', // IPv4-compatible
      'http://[64:ff9b::7f00:2]/p.jpg', // NAT64
      'http://[2002:7f00:2::]/p.jpg', // 6to4
      'http://[fd00::1]/p.jpg', // unique local
      'http://[fe80::1]/p.jpg', // link local
      'http://[ff02::1]/p.jpg', // multicast
      'http://[2001:db8::1]/p.jpg', // documentation
      'http://10.1.2.3/p.jpg',
      'http://172.16.0.1/p.jpg',
      'http://192.168.1.1/p.jpg',
      'http://169.254.169.254/latest/meta-data/', // cloud metadata
      'http://100.64.0.1/p.jpg', // carrier-grade NAT
      'http://224.0.0.1/p.jpg',
      'http://255.255.255.255/p.jpg',
      'http://240.0.0.1/p.jpg',
      'http://198.18.0.1/p.jpg',
      'http://192.0.0.1/p.jpg',
    ];
    for (const url of internal) expect(refusedUrl(url), url).toMatch(/not a public one/);
  });

  it('lets a public address through, and a host name to the resolver (checked there)', () => {
    expect(refusedUrl('http://93.184.216.34/p.jpg')).toBeUndefined();
    expect(refusedUrl('http://[2606:2800:220:1:248:1893:25c8:1946]/p.jpg')).toBeUndefined();
    expect(refusedUrl('https://media.mlsgrid.com/p.jpg')).toBeUndefined();
    expect(addressRefusal('8.8.8.8', 'dns.test', NO_INTERNAL)).toBeUndefined();
    expect(addressRefusal('::ffff:8.8.8.8', 'dns.test', NO_INTERNAL)).toBeUndefined();
  });

  it('media.allowInternal opens the host or range it names, nothing else', () => {
    const allow = parseAllowance(['photos.internal', '10.20.0.0/16', '127.0.0.2', 'fd00::/8']);
    expect(addressRefusal('10.9.9.9', 'photos.internal', allow)).toBeUndefined();
    expect(addressRefusal('10.9.9.9', 'PHOTOS.internal', allow)).toBeUndefined();
    expect(addressRefusal('10.9.9.9', 'other.internal', allow)).toMatch(/private/);
    expect(addressRefusal('10.20.3.4', 'x.test', allow)).toBeUndefined();
    expect(addressRefusal('::ffff:10.20.3.4', 'x.test', allow)).toBeUndefined();
    expect(addressRefusal('127.0.0.2', 'x.test', allow)).toBeUndefined();
    expect(addressRefusal('127.0.0.1', 'x.test', allow)).toMatch(/loopback/);
    expect(addressRefusal('fd12::1', 'x.test', allow)).toBeUndefined();
    expect(literalRefusal(new URL('http://2130706434/'), allow)).toBeUndefined();
    expect(literalRefusal(new URL('http://2130706433/'), allow)).toMatch(/127\.0\.0\.1 is a loopback address/);
  });

  it('an allowInternal entry that is no host, address or range is a config error', () => {
    expect(allowanceEntryError('10.0.0.0/8')).toBeUndefined();
    expect(allowanceEntryError('photos.internal')).toBeUndefined();
    expect(allowanceEntryError('[::1]')).toBeUndefined();
    expect(allowanceEntryError('10.0.0.0/99')).toMatch(/not a CIDR range/);
    expect(allowanceEntryError('photos internal')).toMatch(/neither/);
  });
});
