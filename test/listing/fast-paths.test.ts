// Invariant 9: the fast paths agree with the rule they speed up, on generated input. quickAccept
// must give what zod's ListingCreate gives, and the mapping's plain-copy rule what its general
// rule gives — whitespace included: JavaScript's trim (zod's) removes a no-break space, U+2003,
// U+FEFF..., not only ASCII blanks.
import { hash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  readFingerprintV2,
  readFingerprintV2Reference,
  readSha1Base64url,
  sha1Bytes,
} from '../../src/listing/fingerprint.js';
import { isWebUrl, LIMITS, ListingCreate, parsesAsWebUrl } from '../../src/listing/schema.js';
import { validateListing } from '../../src/listing/validate.js';
import { compileMapping } from '../../src/mapping/compile.js';
import { MappingConfig } from '../../src/mapping/config-schema.js';
import { sampleListing } from '../helpers/emulator.js';

const SPACES = [' ', '\t', '\u00a0', '\u2003', '\u3000', '\ufeff', '\u2028', '\u1680', 'x', 'A', '-', 'é'];
/** strings made mostly of the characters where the two could differ */
const edgy = fc.array(fc.constantFrom(...SPACES), { minLength: 0, maxLength: 6 }).map((cs) => cs.join(''));
const key = fc.tuple(edgy, fc.stringMatching(/^[A-Z0-9]{1,8}$/), edgy).map(([a, b, c]) => a + b + c);

/** URLs made mostly of the pieces where URL parsing fails or changes its mind: ports, users, IPv4 forms, punycode, odd characters */
const SCHEMES = [
  'http://',
  'https://',
  'HTTPS://',
  'hTTp://',
  'http:/',
  'http:',
  'ftp://',
  'javascript:',
  '',
  ' http://',
];
const HOST_PIECES = [
  'a',
  'Z',
  'x',
  '0',
  '9',
  '1',
  '255',
  '256',
  '-',
  '_',
  '.',
  '..',
  'xn--',
  'XN--',
  'xn--nxasmq6b',
  '0x',
  '0X1f',
  'e',
  'é',
  '@',
  ':',
  ':80',
  ':99999',
  '%41',
  '[',
  '::1]',
  ' ',
  '\u0000',
  '\u00a0',
];
const REST_PIECES = [
  '/',
  '?',
  '#',
  '\\',
  'a',
  '1',
  '.jpg',
  '..',
  '%',
  '%zz',
  '@',
  ':',
  ' ',
  '\t',
  '\u0000',
  '\u007f',
  'é',
  '\u202e',
  '\ufffd',
  '"',
  '<',
  '~',
];
const urlLike = fc
  .tuple(
    fc.constantFrom(...SCHEMES),
    fc.array(fc.constantFrom(...HOST_PIECES), { maxLength: 6 }),
    fc.array(fc.constantFrom(...REST_PIECES), { maxLength: 6 }),
  )
  .map(([scheme, host, rest]) => scheme + host.join('') + rest.join(''));

/** stored fingerprints: version-2 ones of random bytes, then with a character changed, added or dropped */
const B64 = [...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_+/=. é'];
const fingerprintLike = fc
  .tuple(
    fc.uint8Array({ minLength: 20, maxLength: 20 }),
    fc.nat(40),
    fc.constantFrom(...B64),
    fc.constantFrom('set', 'insert', 'drop', 'none'),
    fc.constantFrom('2.', '1.', '2', ''),
  )
  .map(([bytes, at, c, how, prefix]) => {
    const s = Buffer.from(bytes).toString('base64url').split('');
    if (how === 'set') s[at % s.length] = c;
    if (how === 'insert') s.splice(at % (s.length + 1), 0, c);
    if (how === 'drop') s.splice(at % s.length, 1);
    return prefix + s.join('');
  });

describe('fast paths agree with the rule', () => {
  it('readFingerprintV2 (the one encoding, decoded by hand) accepts what encoding the bytes back accepts, with the same bytes', () => {
    fc.assert(
      fc.property(fingerprintLike, (fp) => {
        const [a, b] = [new Uint8Array(22).fill(7), new Uint8Array(22).fill(7)];
        const accepted = readFingerprintV2(fp, a, 2);
        expect(accepted).toBe(readFingerprintV2Reference(fp, b, 2));
        if (accepted) expect(a).toEqual(b);
        // (a fingerprint refused leaves the bytes as they were: a caller writes another form there)
        else expect(a).toEqual(new Uint8Array(22).fill(7));
      }),
      { numRuns: 20_000 },
    );
  });

  it('readSha1Base64url (a bare sha1, as a record stamp) accepts what encoding the bytes back accepts, with the same bytes, and only where they fit', () => {
    fc.assert(
      fc.property(fingerprintLike, fc.nat(4), (fp, short) => {
        const text = fp.startsWith('2.') ? fp.slice(2) : fp;
        const size = 22 - (short === 0 ? 1 : 0);
        const out = new Uint8Array(size).fill(7);
        const back = Buffer.from(text, 'base64url');
        const rule = back.byteLength === 20 && back.toString('base64url') === text && size >= 22;
        expect(readSha1Base64url(text, out, 2)).toBe(rule);
        if (rule) expect(Buffer.from(out.subarray(2))).toEqual(back);
        else expect(out).toEqual(new Uint8Array(size).fill(7));
      }),
      { numRuns: 20_000 },
    );
  });

  it('sha1Bytes (the digest as latin1, written into a Buffer) gives the bytes of hash(..., "buffer"), for any text', () => {
    // (any UTF-16: lone surrogates, which UTF-8 encoding replaces, astral characters, NUL)
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 300 }), (text) => {
        const bytes = sha1Bytes(text);
        expect(Buffer.isBuffer(bytes)).toBe(true);
        expect(bytes.equals(hash('sha1', text, 'buffer'))).toBe(true);
      }),
      { numRuns: 2000 },
    );
    // each Buffer its own: one answer is not overwritten by the next
    const a = sha1Bytes('a');
    sha1Bytes('b');
    expect(a.equals(hash('sha1', 'a', 'buffer'))).toBe(true);
  });

  it('quickAccept gives what zod gives, for any text field with any whitespace at its edges', () => {
    fc.assert(
      fc.property(key, fc.constantFrom('MLSNumber', 'Url', 'PropertyType', 'CurrencySymbol'), (value, field) => {
        const candidate = sampleListing({ [field]: value });
        const zod = ListingCreate.safeParse(candidate);
        const ours = validateListing(candidate);
        expect(ours.ok).toBe(zod.success);
        if (ours.ok && zod.success) expect(ours.listing).toEqual(zod.data);
      }),
      { numRuns: 500 },
    );
  });

  it('a key with a leading no-break space is trimmed on both sides (the example from the issue)', () => {
    const ours = validateListing(sampleListing({ MLSNumber: '\u00a0ATX1' }));
    expect(ours.ok && ours.listing.MLSNumber).toBe('ATX1');
  });

  it('isWebUrl gives what the URL parser (parsesAsWebUrl) gives, whether or not the URL has the plain shape', () => {
    let accepted = 0;
    fc.assert(
      fc.property(urlLike, (url) => {
        const rule = url.length <= LIMITS.url && parsesAsWebUrl(url);
        expect(isWebUrl(url)).toBe(rule);
        if (rule) accepted++;
      }),
      { numRuns: 5000 },
    );
    // the generator reaches both answers
    expect(accepted).toBeGreaterThan(200);
    for (const url of [
      'https://photos.broker.test/ATX1/1.jpg',
      'http://a..b/',
      'http://-a-.test/x?y#z',
      'http://xn--nxasmq6b.com/',
    ])
      expect(isWebUrl(url)).toBe(true);
    // outside the plain shape, the running Node's parser decides: `http://xn--a.test/` (a punycode label
    // that decodes to nothing valid) throws on Node 20 and parses on Node 24, and isWebUrl follows it
    for (const url of ['http://xn--a.test/', 'http://a.0x/', 'http://a.09/'])
      expect(isWebUrl(url)).toBe(parsesAsWebUrl(url));
    // what no WHATWG parser accepts: an IPv4 part over 255, a port over 65535
    for (const url of ['http://1.2.3.256/', 'http://a.b:99999/']) expect(isWebUrl(url)).toBe(false);
  });

  it('the plain-copy mapping rule gives what the general rule gives', () => {
    const plain = compileMapping(MappingConfig.parse({ fields: { MLSNumber: 'k' } }));
    // a rule the short path does not take (a default), with the same meaning for a present value
    const general = compileMapping(
      MappingConfig.parse({ fields: { MLSNumber: { from: 'k', default: 'UNUSED-DEFAULT' } } }),
    );
    fc.assert(
      fc.property(key, (value) => {
        const a = plain.map({ k: value }, 'SN-1').candidate.MLSNumber;
        const b = general.map({ k: value }, 'SN-1').candidate.MLSNumber;
        if (b !== 'UNUSED-DEFAULT') expect(a).toEqual(b);
        expect(plain.keyOf({ k: value }, 'MLSNumber')).toEqual(typeof a === 'string' ? a : undefined);
      }),
      { numRuns: 500 },
    );
  });
});
