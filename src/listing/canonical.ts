// One canonical form for a listing, whether it comes from the feed (a ListingCreate, as it will be
// sent) or from the service (a RealEstateList item, as it comes back), so the two can be compared
// field by field and "unchanged" really means unchanged.
//
// The rules, applied to both sides:
// - Text: trimmed, runs of whitespace collapsed to one space; "" is unset (undefined).
// - Numbers: compared as numbers. The list returns most numbers as strings ("2.50", "350000"),
//   so a numeric string is parsed; "" is unset; a string that is not a number stays text (and so
//   differs from any number). Equal means |a - b| <= 1e-9 × max(1, |a|).
// - Coordinates (Latitude/Longitude vs LATITUDE/LONGITUDE): 0 means "no coordinate" (the list
//   answers 0 for unset); equal within 1e-6 degrees (about 10 cm).
// - Images: a list of URLs, each trimmed, empty ones dropped; an empty list is unset. The list
//   item holds them as one string: a JSON array, or failing that a comma-separated list.
// - ExtensionColumn: a list of { Key, value } in order, each trimmed; an empty list is unset. The
//   list item holds it as a string: a JSON array of { Key, value } (also accepted: a JSON object
//   of key → value, and "Key:value" pairs separated by commas or semicolons).
// - Prices: the list returns SalePrice and RentPrice, and Price (the one that applies to the
//   SaleType). SalePrice/RentPrice are compared directly; when the one that applies is empty the
//   remote Price stands in for it.
// - Fields the list does not return are not compared from the remote side: Location, AreaUnit
//   and SerialNumber (implied by the request). A change to them is caught by the fingerprint of
//   what was last written (fingerprint.ts), not by this comparison.
import type { ExtensionEntry, ListingCreate, ListingField, ListItem } from './schema.js';

export type CanonicalValue = string | number | string[] | ExtensionEntry[] | undefined;
export type CanonicalListing = Partial<Record<ListingField, CanonicalValue>>;

export interface FieldChange {
  field: ListingField;
  old: CanonicalValue;
  new: CanonicalValue;
  /** the old value was long and only its hash was kept (a sync's remote side): `old` is unknown, not unset */
  oldNotKept?: true;
  /** the old value is one the display rules withhold now (the address of a listing whose seller does not allow it shown): `old` is left out, never printed nor stored */
  oldWithheld?: true;
  /** the same of the new value (a change made while the field could be shown, read after the rules withheld it: `feedsync history`) */
  newWithheld?: true;
  /** a side too long for the change log: its value above is an excerpt ("…" at the end); the whole one's sha1 and length */
  cut?: { old?: { sha1: string; length: number }; new?: { sha1: string; length: number } };
}

export type Kind = 'text' | 'number' | 'coordinate' | 'images' | 'extension';

/** Every field of a listing and how it is compared. */
export const FIELD_KINDS: Readonly<Record<ListingField, Kind>> = {
  SerialNumber: 'text',
  SaleType: 'text',
  Status: 'text',
  CurrencySymbol: 'text',
  PropertyType: 'text',
  Bedrooms: 'number',
  Bathrooms: 'number',
  Url: 'text',
  MLSNumber: 'text',
  YearBuilt: 'number',
  DaysOnMarket: 'number',
  LotArea: 'number',
  BuildingArea: 'number',
  AreaUnit: 'text',
  Images: 'images',
  Tours: 'text',
  ParkingSpots: 'number',
  Description: 'text',
  ExtensionColumn: 'extension',
  Location: 'text',
  Address: 'text',
  City: 'text',
  State: 'text',
  ZIP: 'text',
  Latitude: 'coordinate',
  Longitude: 'coordinate',
  SalePrice: 'number',
  UnitAreaPrice: 'number',
  HOAMonth: 'number',
  ZestimatePrice: 'number',
  RentPrice: 'number',
  SpaceType: 'text',
  DepositFee: 'number',
};

/** Fields the list endpoint does not return: only the fingerprint sees changes to them. */
export const UNLISTED_FIELDS: readonly ListingField[] = ['SerialNumber', 'Location', 'AreaUnit'];

/** Every field of a listing, in the spec's order. */
export const ALL_FIELDS: readonly ListingField[] = Object.keys(FIELD_KINDS) as ListingField[];

/** The fields compared between a feed listing and a list item, in the spec's order. */
export const COMPARED_FIELDS: readonly ListingField[] = (Object.keys(FIELD_KINDS) as ListingField[]).filter(
  (f) => !UNLISTED_FIELDS.includes(f),
);

/** The canonical form of a listing as it will be sent (every field, including unlisted ones). */
export function canonicalFromListing(
  listing: ListingCreate,
  fields: readonly ListingField[] = COMPARED_FIELDS,
): CanonicalListing {
  const out: CanonicalListing = {};
  for (const f of fields) {
    const v = canonicalValue(FIELD_KINDS[f], listing[f]);
    if (v !== undefined) out[f] = v;
  }
  return out;
}

const LIST_MEMBER: Partial<Record<ListingField, keyof ListItem>> = { Latitude: 'LATITUDE', Longitude: 'LONGITUDE' };
/** per compared field: where the list item holds it, and its kind (looked up once, not per item) */
const LIST_READS = COMPARED_FIELDS.map((f) => [f, LIST_MEMBER[f] ?? f, FIELD_KINDS[f]] as const);
const LIST_MEMBERS = Object.fromEntries(LIST_READS.map(([f, member]) => [f, member])) as Record<
  ListingField,
  keyof ListItem
>;

/** The canonical form of one RealEstateList item (the compared fields only). */
export function canonicalFromListItem(item: ListItem): CanonicalListing {
  const out: CanonicalListing = {};
  const read = listItemReader(item);
  for (const [f, , kind] of LIST_READS) {
    const v = read(f, kind);
    if (v !== undefined) out[f] = v;
  }
  return out;
}

/**
 * The canonical value of each compared field of a list item, read straight from it (the one rule
 * for list items: canonicalFromListItem is built from it, and the comparison hash of a remote
 * listing is taken through it without building the canonical object).
 */
export function listItemReader(item: ListItem): (f: ListingField, kind: Kind) => CanonicalValue {
  // Price stands in for the price that applies to the SaleType when that one is empty
  const priceField =
    item.SaleType === 'for_rent' ? 'RentPrice' : item.SaleType === 'for_sale' ? 'SalePrice' : undefined;
  return (f, kind) => {
    const v = canonicalValue(kind, (item as Record<string, unknown>)[LIST_MEMBERS[f]]);
    return v === undefined && f === priceField ? canonicalValue('number', item.Price) : v;
  };
}

/** The fields whose canonical values differ, except `ignore`d ones. Compares COMPARED_FIELDS only. */
export function diffCanonical(
  desired: CanonicalListing,
  remote: CanonicalListing,
  ignore: ReadonlySet<string> = new Set(),
): FieldChange[] {
  const changes: FieldChange[] = [];
  for (const f of COMPARED_FIELDS) {
    if (ignore.has(f)) continue;
    if (!sameValue(FIELD_KINDS[f], desired[f], remote[f])) changes.push({ field: f, old: remote[f], new: desired[f] });
  }
  return changes;
}

export function canonicalValue(kind: Kind, raw: unknown): CanonicalValue {
  if (raw === undefined || raw === null) return undefined;
  switch (kind) {
    case 'text':
      return text(raw);
    case 'number':
      return number(raw);
    case 'coordinate': {
      const n = number(raw);
      return n === 0 ? undefined : n;
    }
    case 'images':
      return images(raw);
    case 'extension':
      return extension(raw);
  }
}

/** whitespace other than a lone space between words: what `text` has to rewrite */
const UNTIDY = /[^\S ]| {2}/;

function text(raw: unknown): string | undefined {
  const r = typeof raw === 'string' ? raw : String(raw);
  // most values are tidy already: a test, not a replace + trim (two new strings) per field
  if (r !== '' && r.charCodeAt(0) !== 32 && r.charCodeAt(r.length - 1) !== 32 && !UNTIDY.test(r)) return r;
  const s = r.replace(/\s+/g, ' ').trim();
  return s === '' ? undefined : s;
}

function number(raw: unknown): number | string | undefined {
  if (typeof raw === 'number') return Number.isFinite(raw) ? raw : undefined;
  const s = text(raw);
  if (s === undefined) return undefined;
  const n = Number(s.includes(',') ? s.replace(/,(?=\d{3}(\D|$))/g, '') : s);
  return Number.isFinite(n) ? n : s;
}

function images(raw: unknown): string[] | undefined {
  let list: unknown[];
  if (Array.isArray(raw)) list = raw;
  else {
    const s = String(raw).trim();
    const parsed = s.startsWith('[') ? parseJson(s) : undefined;
    list = Array.isArray(parsed) ? parsed : s.split(',');
  }
  const out = list.map((x) => text(x)).filter((x): x is string => x !== undefined);
  return out.length ? out : undefined;
}

function extension(raw: unknown): ExtensionEntry[] | undefined {
  let entries: Array<{ Key: unknown; value: unknown }>;
  if (Array.isArray(raw)) entries = raw as Array<{ Key: unknown; value: unknown }>;
  else {
    const s = String(raw).trim();
    if (s === '') return undefined;
    const parsed = s.startsWith('[') || s.startsWith('{') ? parseJson(s) : undefined;
    if (Array.isArray(parsed)) entries = parsed as Array<{ Key: unknown; value: unknown }>;
    else if (parsed && typeof parsed === 'object')
      entries = Object.entries(parsed).map(([Key, value]) => ({ Key, value }));
    else
      entries = s.split(/[;,]/).map((pair) => {
        const at = pair.indexOf(':');
        return at < 0 ? { Key: pair, value: '' } : { Key: pair.slice(0, at), value: pair.slice(at + 1) };
      });
  }
  const out = entries
    .filter((e) => e && typeof e === 'object')
    .map((e) => ({
      Key: text(e.Key ?? (e as { key?: unknown }).key) ?? '',
      value: text(e.value ?? (e as { Value?: unknown }).Value) ?? '',
    }))
    .filter((e) => e.Key !== '' || e.value !== '');
  return out.length ? out : undefined;
}

function parseJson(s: string): unknown {
  try {
    return JSON.parse(s);
  } catch {
    return undefined; // not JSON: the caller falls back to the plain-text form
  }
}

function sameValue(kind: Kind, a: CanonicalValue, b: CanonicalValue): boolean {
  if (a === undefined || b === undefined) return a === b;
  if (typeof a === 'number' && typeof b === 'number') {
    const tolerance = kind === 'coordinate' ? 1e-6 : 1e-9 * Math.max(1, Math.abs(a));
    return Math.abs(a - b) <= tolerance;
  }
  if (Array.isArray(a) && Array.isArray(b)) return JSON.stringify(a) === JSON.stringify(b);
  return a === b;
}
