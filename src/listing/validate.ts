// Checks a mapped candidate against the spec's create schema and keeps every broken rule, each with
// its field and value, so a rejected row can be fixed in one pass.
//
// The zod schema (schema.ts) is the rule. zod costs ~6 µs a listing, as much as reading the CSV row,
// so a candidate that plainly meets every rule is accepted by a hand-written check first (`quickAccept`),
// which gives the same output as zod (same values, same key order). It only ever accepts: anything it
// is not sure of — a blank needing a trim, an unknown key, an undefined value — goes to zod, which
// decides and names the issues. test/listing/validate.test.ts holds the two to the same answers.
import type { z } from 'zod';
import type { ValidationIssue } from '../errors.js';
import { excerpt } from '../errors.js';
import {
  AREA_UNITS,
  isIntactKey,
  isLongText,
  isShortText,
  isWebUrl,
  KEY_TYPES,
  LIMITS,
  LISTING_FIELDS,
  ListingCreate,
  SALE_TYPES,
  SPACE_TYPES,
  STATUSES,
  TOURS,
  type ListingUpdate,
} from './schema.js';

export type ValidationResult = { ok: true; listing: ListingCreate } | { ok: false; issues: ValidationIssue[] };

export function validateListing(candidate: unknown): ValidationResult {
  const quick = quickAccept(candidate);
  if (quick) return { ok: true, listing: quick };
  const r = ListingCreate.safeParse(candidate);
  if (r.success) return { ok: true, listing: r.data };
  return { ok: false, issues: toValidationIssues(r.error, candidate) };
}

type Check = (v: unknown) => boolean;
const checks = (byField: Record<string, Check>) => new Map(Object.entries(byField));

/**
 * A non-empty string that zod's trim (JavaScript's String.prototype.trim) leaves as it is. The
 * one test of "nothing to trim" for every fast path (quickAccept, the mapping's plain-copy rule).
 * ASCII is decided by code; above it, `\s` is exactly the set trim removes (no-break space,
 * U+2000–U+200A, U+3000, U+FEFF, line separators...). Control characters go the slow way.
 */
export function isPlainText(v: unknown): v is string {
  return typeof v === 'string' && v.length > 0 && edgeIsText(v.charCodeAt(0)) && edgeIsText(v.charCodeAt(v.length - 1));
}

const UNICODE_SPACE = /\s/;
function edgeIsText(c: number): boolean {
  if (c <= 32) return false;
  return c < 0x80 || !UNICODE_SPACE.test(String.fromCharCode(c));
}

/** a trimmed, non-empty string: what `text()` accepts without changing it */
const trimmed = isPlainText;
const text: Check = (v) => trimmed(v) && isShortText(v);
const webUrl: Check = (v) => trimmed(v) && isWebUrl(v);
const anyText: Check = (v) => typeof v === 'string' && isShortText(v);
const longText: Check = (v) => typeof v === 'string' && isLongText(v);
const range =
  (min: number, max: number): Check =>
  (v) =>
    typeof v === 'number' && Number.isFinite(v) && v >= min && v <= max;
const count =
  (max: number): Check =>
  (v) =>
    Number.isInteger(v) && (v as number) >= 0 && (v as number) <= max;
const oneOf = (values: readonly string[]): Check => {
  const set = new Set<unknown>(values);
  return (v) => set.has(v);
};
const images: Check = (v) => Array.isArray(v) && v.length <= LIMITS.images && v.every(webUrl);
const extension: Check = (v) =>
  Array.isArray(v) &&
  v.length <= LIMITS.extensionEntries &&
  v.every(
    (e) => e !== null && typeof e === 'object' && anyText(e.Key) && longText(e.value) && Object.keys(e).length === 2,
  );

// (Maps, not objects: a key such as "toString" or "__proto__" in a parsed body must find no check)
const REQUIRED = checks({
  SerialNumber: text,
  SaleType: oneOf(SALE_TYPES),
  Status: oneOf(STATUSES),
  CurrencySymbol: text,
  PropertyType: text,
  Bedrooms: count(LIMITS.rooms),
  Bathrooms: range(0, LIMITS.rooms),
  Url: (v) => webUrl(v) && isIntactKey(v as string),
  MLSNumber: (v) => text(v) && isIntactKey(v as string),
  YearBuilt: (v) =>
    Number.isInteger(v) && (v as number) >= LIMITS.yearBuilt.min && (v as number) <= LIMITS.yearBuilt.max,
  DaysOnMarket: count(LIMITS.daysOnMarket),
  LotArea: range(0, LIMITS.area),
  BuildingArea: range(0, LIMITS.area),
  AreaUnit: oneOf(AREA_UNITS),
  ParkingSpots: count(LIMITS.parkingSpots),
});
const OPTIONAL = checks({
  Images: images,
  Tours: oneOf(TOURS),
  Description: longText,
  ExtensionColumn: extension,
  Location: anyText,
  Address: anyText,
  City: anyText,
  State: anyText,
  ZIP: anyText,
  Latitude: range(-90, 90),
  Longitude: range(-180, 180),
  SalePrice: range(0, LIMITS.price),
  UnitAreaPrice: range(0, LIMITS.price),
  HOAMonth: range(0, LIMITS.price),
  ZestimatePrice: range(0, LIMITS.price),
  RentPrice: range(0, LIMITS.price),
  SpaceType: oneOf(SPACE_TYPES),
  DepositFee: range(0, LIMITS.price),
});
const REQUIRED_COUNT = REQUIRED.size;
const ORDER = new Map<string, number>(LISTING_FIELDS.map((f, i) => [f, i]));

/** The candidate as zod would return it, when it plainly meets every rule; else undefined. */
export function quickAccept(candidate: unknown): ListingCreate | undefined {
  if (candidate === null || typeof candidate !== 'object' || Array.isArray(candidate)) return undefined;
  const c = candidate as Record<string, unknown>;
  let required = 0;
  let last = -1;
  let ordered = true;
  for (const key in c) {
    const v = c[key];
    const at = ORDER.get(key)!;
    if (at < last) ordered = false;
    last = at;
    const check = REQUIRED.get(key);
    if (check) {
      if (!check(v)) return undefined;
      required++;
      continue;
    }
    const opt = OPTIONAL.get(key);
    if (!opt || v === undefined || !opt(v)) return undefined;
  }
  if (required !== REQUIRED_COUNT) return undefined;
  // zod's output lists the keys in the schema's order: keep it, fingerprints may depend on it
  if (ordered) return c as ListingCreate;
  const out: Record<string, unknown> = {};
  for (const key of LISTING_FIELDS) if (key in c) out[key] = c[key];
  return out as ListingCreate;
}

const KEY_TYPE_SET = new Set<unknown>(KEY_TYPES);

/**
 * An update (a listing, Key and KeyType) as zod's ListingUpdate would return it, when it plainly
 * meets every rule; else undefined. The client's check before sending: a listing the mapping
 * already validated passes here without a second zod parse.
 */
export function quickAcceptUpdate(candidate: unknown): ListingUpdate | undefined {
  if (candidate === null || typeof candidate !== 'object' || Array.isArray(candidate)) return undefined;
  const { Key, KeyType: keyType, ...rest } = candidate as Record<string, unknown>;
  if (!text(Key) || !KEY_TYPE_SET.has(keyType)) return undefined;
  const listing = quickAccept(rest);
  return listing && { ...listing, Key: Key as string, KeyType: keyType as ListingUpdate['KeyType'] };
}

function toValidationIssues(error: z.ZodError, candidate: unknown): ValidationIssue[] {
  const out: ValidationIssue[] = [];
  for (const iss of error.issues) {
    if (iss.code === 'unrecognized_keys') {
      for (const key of iss.keys) {
        out.push({
          field: joinPath([...iss.path, key]),
          value: excerpt(valueAt(candidate, [...iss.path, key])),
          rule: 'is not a field of the spec',
        });
      }
      continue;
    }
    const value = valueAt(candidate, iss.path);
    // a report keeps an excerpt, never a 100 MB value
    out.push({ field: joinPath(iss.path) || '(listing)', value: excerpt(value), rule: ruleText(iss, value) });
  }
  return out;
}

function ruleText(iss: z.core.$ZodIssue, value: unknown): string {
  if (iss.code === 'invalid_type') {
    if (value === undefined) return 'is required';
    return iss.expected === 'int' ? 'must be a whole number' : `must be a ${iss.expected}`;
  }
  if (iss.code === 'invalid_value') return `must be one of ${iss.values.map(String).join(', ')}`;
  if (iss.code === 'too_small' && typeof iss.minimum !== 'bigint' && iss.origin === 'number')
    return `must be at least ${iss.minimum}`;
  if (iss.code === 'too_big' && typeof iss.maximum !== 'bigint' && iss.origin === 'number')
    return `must be at most ${iss.maximum}`;
  if (iss.code === 'too_big' && typeof iss.maximum !== 'bigint' && iss.origin === 'array')
    return `must have at most ${iss.maximum} items`;
  return iss.message;
}

function joinPath(path: ReadonlyArray<PropertyKey>): string {
  return path
    .map((p) => (typeof p === 'number' ? `[${p}]` : String(p)))
    .join('.')
    .replace(/\.\[/g, '[');
}

function valueAt(root: unknown, path: ReadonlyArray<PropertyKey>): unknown {
  let v = root;
  for (const p of path) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<PropertyKey, unknown>)[p];
  }
  return v;
}
