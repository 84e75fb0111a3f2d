// Where a key of a namespace is kept (store-keys.ts slotOf): as it is while the slot's UTF-8 fits
// MAX_SLOT_BYTES and the key is well-formed, else under its hash. A slot short enough that it fits
// whatever its characters is not measured: it must be kept where the measured rule keeps it.
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { rangeOf, slotOf } from '../../src/state/store-keys.js';

/** the rule as first written: every slot measured */
function plainSlot(start: string, key: string): string {
  const plain = start + 'K' + key;
  if (!/[\uD800-\uDFFF]/u.test(key) && Buffer.byteLength(plain) <= 1500) return plain;
  return start + 'H' + createHash('sha256').update(JSON.stringify(key)).digest('base64url');
}

describe('slotOf', () => {
  it('keeps a key where the measured rule keeps it, short or long, of any characters', () => {
    const { start } = rangeOf('fp:feed');
    // (well-formed characters of 1 to 4 UTF-8 bytes: around the limit, a slot's length in characters and in bytes part ways)
    const unit = fc.constantFrom('a', 'ü', '✓', '😀', '\u0000');
    const key = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 40 }),
      fc
        .integer({ min: 300, max: 1600 })
        .chain((n) => fc.array(unit, { minLength: n, maxLength: n }).map((us) => us.join(''))),
      fc.array(unit, { minLength: 300, maxLength: 600 }).map((us) => us.join('') + '\ud800'),
      fc.integer({ min: 480, max: 1500 }).map((n) => 'k'.repeat(n)),
    );
    fc.assert(
      fc.property(key, (k) => {
        expect(slotOf(start, k)).toBe(plainSlot(start, k));
      }),
      { numRuns: 500 },
    );
  });
});
