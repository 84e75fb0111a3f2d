// Invariant 9: the fast paths agree with the rule they speed up, on generated input. quickAccept
// must give what zod's ListingCreate gives, and the mapping's plain-copy rule what its general
// rule gives — whitespace included: JavaScript's trim (zod's) removes a no-break space, U+2003,
// U+FEFF..., not only ASCII blanks.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ListingCreate } from '../../src/listing/schema.js';
import { validateListing } from '../../src/listing/validate.js';
import { compileMapping } from '../../src/mapping/compile.js';
import { MappingConfig } from '../../src/mapping/config-schema.js';
import { sampleListing } from '../helpers/emulator.js';

const SPACES = [' ', '\t', '\u00a0', '\u2003', '\u3000', '\ufeff', '\u2028', '\u1680', 'x', 'A', '-', 'é'];
/** strings made mostly of the characters where the two could differ */
const edgy = fc.array(fc.constantFrom(...SPACES), { minLength: 0, maxLength: 6 }).map((cs) => cs.join(''));
const key = fc.tuple(edgy, fc.stringMatching(/^[A-Z0-9]{1,8}$/), edgy).map(([a, b, c]) => a + b + c);

describe('fast paths agree with the rule', () => {
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

  it('the plain-copy mapping rule gives what the general rule gives', () => {
    const plain = compileMapping(MappingConfig.parse({ fields: { MLSNumber: 'k' } }));
    // a rule the short path does not take (a default), with the same meaning for a present value
    const general = compileMapping(MappingConfig.parse({ fields: { MLSNumber: { from: 'k', default: 'UNUSED-DEFAULT' } } }));
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
