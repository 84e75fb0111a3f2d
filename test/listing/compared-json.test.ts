// A listing's compared JSON and kept form (fingerprint.ts comparedJson, through listingHashes,
// keptOfListing, comparedOf and comparedOfListItem) are one JSON.stringify of an array each. The
// rule they were first written by, below: each value's JSON joined piece by piece, a value whose
// JSON is longer than KEPT_CHARS kept as its hash and length. The two must give the same text for
// any listing, with any fields ignored: stored fingerprints, stamps and change log entries depend on it.
import { hash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  canonicalFromListItem,
  canonicalValue,
  COMPARED_FIELDS,
  FIELD_KINDS,
  UNLISTED_FIELDS,
  type CanonicalValue,
} from '../../src/listing/canonical.js';
import {
  comparedOf,
  comparedOfListItem,
  FINGERPRINT_PREFIX,
  KEPT_CHARS,
  keptOfListing,
  listingHashes,
} from '../../src/listing/fingerprint.js';
import type { ListingCreate, ListingField, ListItem } from '../../src/listing/schema.js';

/** comparedJson as first written: [name, value, ...] and [mask, value, ...] joined piece by piece */
function pieceByPiece(
  value: (f: ListingField) => CanonicalValue,
  ignore: ReadonlySet<string>,
  kept: 'none' | 'compared' | 'every',
): { json: string; kept?: string } {
  let json = '[';
  let held = '';
  let mask = 0;
  COMPARED_FIELDS.forEach((f, i) => {
    const ignored = ignore.has(f);
    if (ignored && kept !== 'every') return;
    const v = value(f);
    if (v === undefined) return;
    const coordinate = FIELD_KINDS[f] === 'coordinate';
    const piece =
      typeof v === 'number'
        ? JSON.stringify(coordinate ? Math.round(v * 1e6) / 1e6 : Number(v.toPrecision(12)))
        : JSON.stringify(v);
    if (!ignored) json += (json.length === 1 ? '' : ',') + JSON.stringify(f) + ',' + piece;
    if (kept === 'none') return;
    mask |= 1 << i;
    held +=
      ',' +
      (piece.length > KEPT_CHARS ? JSON.stringify({ '~': hash('sha1', piece, 'base64url'), n: piece.length }) : piece);
  });
  json += ']';
  return kept === 'none' ? { json } : { json, kept: `[${mask >>> 0}${held}]` };
}

/** text around the lengths where a value is kept whole or as its hash, with characters JSON escapes */
const text = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc
    .tuple(
      fc.constantFrom('a', '"', '\\', '\n', '\u0001', 'é', '\u2028', '😀'),
      fc.integer({ min: 1, max: 60 }),
      fc.string({ maxLength: 5 }),
    )
    .map(([c, n, tail]) => c.repeat(n) + tail),
  fc.integer({ min: KEPT_CHARS - 8, max: KEPT_CHARS + 4 }).map((n) => 'x'.repeat(n)),
);
const number = fc.oneof(
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.integer(),
  fc.constantFrom(0, -0, 1e12, 123456789012.5, 0.1 + 0.2, 30.5595849999),
);
const fieldValue = (f: ListingField): fc.Arbitrary<unknown> => {
  switch (FIELD_KINDS[f]) {
    case 'number':
    case 'coordinate':
      return fc.oneof(number, number.map(String), fc.constant(''));
    case 'images':
      return fc.array(text, { maxLength: 8 });
    case 'extension':
      return fc.array(fc.record({ Key: text, value: text }), { maxLength: 8 });
    default:
      return text;
  }
};
const listing = fc
  .tuple(...[...COMPARED_FIELDS, ...UNLISTED_FIELDS].map((f) => fc.option(fieldValue(f), { nil: undefined })))
  .map((values) => {
    const out: Record<string, unknown> = {};
    [...COMPARED_FIELDS, ...UNLISTED_FIELDS].forEach((f, i) => {
      if (values[i] !== undefined) out[f] = values[i];
    });
    return out as unknown as ListingCreate;
  });
const ignore = fc.subarray([...COMPARED_FIELDS, ...UNLISTED_FIELDS], { maxLength: 4 }).map((f) => new Set<string>(f));

describe('the compared JSON and the kept form', () => {
  it('are the texts the piece-by-piece rule gives, for any listing and any fields ignored', () => {
    fc.assert(
      fc.property(listing, ignore, (l, ign) => {
        const value = (f: ListingField) => canonicalValue(FIELD_KINDS[f], l[f]);
        const every = pieceByPiece(value, ign, 'every');
        const h = listingHashes(l, ign, true);
        expect(h.compared).toBe(every.json);
        expect(h.kept).toBe(pieceByPiece(value, new Set(), 'every').kept);
        expect(keptOfListing(l)).toBe(pieceByPiece(value, new Set(), 'every').kept);
        let unlisted = '';
        for (const f of UNLISTED_FIELDS) {
          const v = value(f);
          if (!ign.has(f) && v !== undefined) unlisted += ',' + JSON.stringify(f) + ',' + JSON.stringify(v);
        }
        expect(h.fingerprint).toBe(FINGERPRINT_PREFIX + hash('sha1', every.json + unlisted, 'base64url'));
        expect(h.hash.equals(hash('sha1', every.json, 'buffer'))).toBe(true);
        const plain = listingHashes(l, ign);
        expect([plain.fingerprint, plain.compared, plain.kept]).toEqual([h.fingerprint, h.compared, undefined]);
      }),
      { numRuns: 1500 },
    );
  });

  it('of a list item are the texts the rule gives, with and without the kept form', () => {
    fc.assert(
      fc.property(listing, ignore, (l, ign) => {
        // (a list item holds the fields under the list's names; its reader is the one the rule reads through)
        const item = { ...l, LATITUDE: l.Latitude, LONGITUDE: l.Longitude } as unknown as ListItem;
        const canonical = canonicalFromListItem(item);
        const value = (f: ListingField) => canonical[f];
        const rule = pieceByPiece(value, ign, 'compared');
        const got = comparedOfListItem(item, ign, true);
        expect(got.compared).toBe(rule.json);
        expect(got.kept).toBe(rule.kept);
        expect(got.hash.equals(hash('sha1', rule.json, 'buffer'))).toBe(true);
        expect(comparedOfListItem(item, ign).compared).toBe(rule.json);
        expect(comparedOf(canonical, ign).compared).toBe(rule.json);
      }),
      { numRuns: 1000 },
    );
  });
});
