// A fingerprint of everything a listing write sends, so that a change to a field the list endpoint
// does not return (Location, AreaUnit) is still noticed on the next run. It is the sha1 of the
// canonical form (canonical.ts: whitespace, numbers and empty values normalized) of every field,
// as JSON with sorted keys, so cosmetic differences (2.5 vs 2.50, "a  b" vs "a b") do not count.
// Fields the feed ignores (config `ignore`) are left out: they alone never cause a write.
import { createHash } from 'node:crypto';
import { canonicalFromListing, COMPARED_FIELDS, FIELD_KINDS, type CanonicalListing } from './canonical.js';
import type { ListingCreate, ListingField } from './schema.js';

const ALL_FIELDS = Object.keys(FIELD_KINDS) as ListingField[];

export function fingerprintListing(listing: ListingCreate, ignore: ReadonlySet<string> = new Set()): string {
  const fields = ignore.size ? ALL_FIELDS.filter((f) => !ignore.has(f)) : ALL_FIELDS;
  const canonical = canonicalFromListing(listing, fields);
  const sorted = Object.keys(canonical)
    .sort()
    .map((k) => [k, canonical[k as ListingField]]);
  return createHash('sha1').update(JSON.stringify(sorted)).digest('base64url');
}

/**
 * A hash of the compared fields of a canonical listing (`ignore`d ones aside): equal hashes mean
 * no listed field differs. The sync keeps this instead of each remote listing's canonical form, so
 * 100k remote listings fit in a few tens of MB. Numbers are rounded first (coordinates to 1e-6,
 * others to 12 significant digits), so the tolerance of diffCanonical holds here too, bar a value
 * right at a rounding edge (which costs one update, not a wrong result).
 */
export function comparedHash(canonical: CanonicalListing, ignore: ReadonlySet<string> = new Set()): string {
  const parts: unknown[] = [];
  for (const f of COMPARED_FIELDS) {
    const v = canonical[f];
    if (v === undefined || ignore.has(f)) continue;
    parts.push(f, typeof v === 'number' ? (FIELD_KINDS[f] === 'coordinate' ? Math.round(v * 1e6) / 1e6 : Number(v.toPrecision(12))) : v);
  }
  return createHash('sha1').update(JSON.stringify(parts)).digest('base64url');
}
