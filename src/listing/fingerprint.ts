// A fingerprint of everything a listing write sends, so that a change to a field the list endpoint
// does not return (Location, AreaUnit) is still noticed on the next run. It is the sha1 of the
// canonical form (canonical.ts: whitespace, numbers and empty values normalized) of every field,
// as JSON with sorted keys, so cosmetic differences (2.5 vs 2.50, "a  b" vs "a b") do not count.
// Fields the feed ignores (config `ignore`) are left out: they alone never cause a write.
//
// Both hashes run twice per listing on every sync (remote side and feed side), so the JSON is
// built by hand, one field at a time, rather than through sorted copies: the bytes are exactly
// those of JSON.stringify of the sorted [key, value] pairs, so stored fingerprints stay valid.
import { hash } from 'node:crypto';
import { ALL_FIELDS, canonicalFromListing, COMPARED_FIELDS, FIELD_KINDS, type CanonicalListing } from './canonical.js';
import type { ListingCreate, ListingField } from './schema.js';

const NO_FIELDS: ReadonlySet<string> = new Set();
/** Object.keys(canonical).sort() order, and each key as JSON */
const SORTED_FIELDS = [...ALL_FIELDS].sort().map((f) => [f, JSON.stringify(f)] as const);
const COMPARED_JSON = COMPARED_FIELDS.map((f) => [f, JSON.stringify(f), FIELD_KINDS[f] === 'coordinate'] as const);

export function fingerprintListing(listing: ListingCreate, ignore: ReadonlySet<string> = NO_FIELDS): string {
  return fingerprintCanonical(canonicalFromListing(listing, ALL_FIELDS), ignore);
}

/** fingerprintListing of a listing whose canonical form of ALL_FIELDS is at hand. */
export function fingerprintCanonical(canonical: CanonicalListing, ignore: ReadonlySet<string> = NO_FIELDS): string {
  const skip = ignore.size > 0;
  let json = '[';
  for (const [f, quoted] of SORTED_FIELDS) {
    const v = canonical[f as ListingField];
    if (v === undefined || (skip && ignore.has(f))) continue;
    json += (json.length === 1 ? '[' : ',[') + quoted + ',' + JSON.stringify(v) + ']';
  }
  return hash('sha1', json + ']', 'base64url');
}

/**
 * A hash of the compared fields of a canonical listing (`ignore`d ones aside): equal hashes mean
 * no listed field differs. The sync keeps this instead of each remote listing's canonical form, so
 * 100k remote listings fit in a few tens of MB. Numbers are rounded first (coordinates to 1e-6,
 * others to 12 significant digits), so the tolerance of diffCanonical holds here too, bar a value
 * right at a rounding edge (which costs one update, not a wrong result).
 */
export function comparedHash(canonical: CanonicalListing, ignore: ReadonlySet<string> = NO_FIELDS): string {
  const skip = ignore.size > 0;
  let json = '[';
  for (const [f, quoted, coordinate] of COMPARED_JSON) {
    const v = canonical[f];
    if (v === undefined || (skip && ignore.has(f))) continue;
    json += (json.length === 1 ? '' : ',') + quoted + ',' + (typeof v === 'number' ? JSON.stringify(rounded(v, coordinate)) : JSON.stringify(v));
  }
  return hash('sha1', json + ']', 'base64url');
}

function rounded(v: number, coordinate: boolean): number {
  if (coordinate) return Math.round(v * 1e6) / 1e6;
  // a whole number of up to 12 digits is its own 12-digit rounding: skip the costly toPrecision
  return Number.isInteger(v) && Math.abs(v) < 1e12 ? v : Number(v.toPrecision(12));
}
