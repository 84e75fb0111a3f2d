// stampOf lays its input out in a reused buffer; it must hash what the plain concatenation of its
// parts gives (seed, hash, fingerprint length and bytes, text as UTF-8), for any text, short or past
// the buffer, and two inputs that differ must not run together into one.
import { hash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fingerprintBytes } from '../../src/listing/fingerprint.js';
import { recordText, stampOf } from '../../src/sync/plan/record-stamp.js';

function reference(seed: string, text: string, comparedHash: Uint8Array, fingerprint: string): string {
  const fp = fingerprintBytes(fingerprint);
  const len = Buffer.alloc(4);
  len.writeUInt32BE(fp.byteLength);
  return hash(
    'sha1',
    Buffer.concat([Buffer.from(seed, 'latin1'), comparedHash, len, fp, Buffer.from(text, 'utf8')]),
    'base64url',
  );
}

const seed = 'S'.repeat(27);
const text = fc.oneof(
  fc.string(),
  fc.string({ unit: 'binary' }),
  fc.string({ unit: 'binary', minLength: 6000, maxLength: 9000 }),
);
const fp = fc.oneof(fc.constant(`2.${'A'.repeat(27)}`), fc.string(), fc.string({ unit: 'binary' }));

describe('stampOf', () => {
  it('hashes the parts laid end to end, whatever the text', () => {
    fc.assert(
      fc.property(text, fc.uint8Array({ minLength: 20, maxLength: 20 }), fp, (t, h, f) => {
        expect(stampOf(seed, t, h, f)).toBe(reference(seed, t, h, f));
        expect(stampOf(seed, t, h, fingerprintBytes(f))).toBe(stampOf(seed, t, h, f));
      }),
      { numRuns: 500 },
    );
  });

  it('keeps a fingerprint apart from the text after it', () => {
    const h = new Uint8Array(20);
    expect(stampOf(seed, 'bc', h, 'a')).not.toBe(stampOf(seed, 'c', h, 'ab'));
  });

  it("takes a reader's text, else the data as JSON, in a form no reader gives", () => {
    expect(recordText({ data: { a: '1' }, text: 'cXYZ' })).toBe('cXYZ');
    expect(recordText({ data: { a: '1' } })).toBe('{{"a":"1"}');
  });
});
