// A fingerprint of everything a listing write sends, so that a change to a field the list endpoint
// does not return (Location, AreaUnit) is still noticed on the next run. It is the sha1 of the
// canonical form (canonical.ts: whitespace, numbers and empty values normalized) of every field,
// as JSON with sorted keys, so cosmetic differences (2.5 vs 2.50, "a  b" vs "a b") do not count.
// Fields the feed ignores (config `ignore`) are left out: they alone never cause a write.
import { createHash } from 'node:crypto';
import { canonicalFromListing, FIELD_KINDS } from './canonical.js';
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
