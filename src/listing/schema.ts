// The real estate listing of the Chatbot Service API, as the spec's tables give it: field names and
// casing verbatim. Shared by the client, the emulator, the mapper and the tests.
import { z } from 'zod';

export const SALE_TYPES = ['for_sale', 'for_rent'] as const;
export const STATUSES = ['Active', 'PreOnMarket', 'Sold'] as const;
export const KEY_TYPES = ['NewOaks', 'MLSNumber', 'URL'] as const;
export const AREA_UNITS = ['Square Feet', 'Square Meters'] as const;
export const TOURS = ['OpenHouse', '3D'] as const;
export const SPACE_TYPES = ['Entire place', 'Room'] as const;

export const SaleType = z.enum(SALE_TYPES);
export const Status = z.enum(STATUSES);
export const KeyType = z.enum(KEY_TYPES);
export type KeyType = z.infer<typeof KeyType>;

// What a chatbot may show (issue 9.6): text without control characters (newlines and tabs only in
// long text), links over http(s) only, whole numbers where the field counts things, and plausible
// ranges. The bounds are named here so the fast path in validate.ts checks the very same ones.
export const LIMITS = {
  shortText: 500,
  longText: 20_000,
  url: 2048,
  images: 200,
  extensionEntries: 100,
  rooms: 1000,
  parkingSpots: 10_000,
  daysOnMarket: 36_500,
  area: 1e10,
  price: 1e12,
  yearBuilt: { min: 1000, max: 3000 },
} as const;

/** C0 controls, DEL, C1 controls and the bidirectional overrides/isolates (RLO, LRO, ...). */
const CONTROL_CHARS = /[\u0000-\u001F\u007F-\u009F\u200E\u200F\u202A-\u202E\u2066-\u2069]/;
/** The same, but newline, carriage return and tab are allowed (descriptions, long text). */
const CONTROL_CHARS_LONG =
  /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F\u200E\u200F\u202A-\u202E\u2066-\u2069]/;

export const isShortText = (v: string) => v.length <= LIMITS.shortText && !CONTROL_CHARS.test(v);
export const isLongText = (v: string) => v.length <= LIMITS.longText && !CONTROL_CHARS_LONG.test(v);
/** an absolute http(s) URL without control characters or spaces */
export function isWebUrl(v: string): boolean {
  if (v.length > LIMITS.url) return false;
  // a feed's images are a few URLs a listing, each a URL parse (~1 µs) when parsed: most take the shape below instead
  return PLAIN_WEB_URL.test(v) || parsesAsWebUrl(v);
}

/**
 * The shape nearly every feed URL has, on which WHATWG URL parsing cannot fail: http(s), a host of
 * ASCII letters, digits and hyphens in dot-separated labels (no port, no user, no `xn--` label to
 * decode, a last label starting with a letter so it is never read as an IPv4 number), then
 * printable ASCII only. test/listing/fast-paths.test.ts holds it to parsesAsWebUrl.
 */
const PLAIN_WEB_URL = /^https?:\/\/(?:(?!xn--)[a-z0-9-]+\.)*(?!xn--)[a-z][a-z0-9-]*(?:[/?#][\x21-\x7e]*)?$/i;

/** The rule of isWebUrl: no control characters or spaces, and the URL parser reads an http(s) URL with a host. */
export function parsesAsWebUrl(v: string): boolean {
  if (CONTROL_CHARS.test(v) || /\s/.test(v) || !/^https?:\/\//i.test(v)) return false;
  try {
    const u = new URL(v);
    return (u.protocol === 'http:' || u.protocol === 'https:') && u.hostname.length > 0;
  } catch {
    return false; // (the URL parser refuses it: not a web URL)
  }
}

/** U+FFFD: bytes that were not valid in the encoding they were read with. A key with one is not the key that was sent. */
export const isIntactKey = (v: string) => !v.includes('\uFFFD');
const KEY_RULE =
  "contains U+FFFD (bytes invalid in the feed's encoding): the key is not what the feed sent; fix source.encoding or the feed";

const CONTROL_RULE = 'must not contain control or bidirectional-override characters';
const shortText = () =>
  z
    .string()
    .max(LIMITS.shortText, `must be at most ${LIMITS.shortText} characters`)
    .refine((v) => !CONTROL_CHARS.test(v), CONTROL_RULE);
const longText = () =>
  z
    .string()
    .max(LIMITS.longText, `must be at most ${LIMITS.longText} characters`)
    .refine((v) => !CONTROL_CHARS_LONG.test(v), `${CONTROL_RULE} (newlines and tabs are allowed)`);
const text = () => z.string().trim().min(1, 'must not be empty').pipe(shortText());
const webUrl = () =>
  z
    .string()
    .trim()
    .min(1, 'must not be empty')
    .pipe(z.string().refine(isWebUrl, 'must be an http(s) URL (no javascript:, data: or other schemes)'));
const count = (max: number) => z.number().int('must be a whole number').nonnegative().max(max);
const amount = (max: number) => z.number().finite().nonnegative().max(max);

export const ExtensionEntry = z.strictObject({ Key: shortText(), value: longText() });
export type ExtensionEntry = z.infer<typeof ExtensionEntry>;

/** Fields shared by create and update (the create column of the spec's listing table). */
const listingShape = {
  SerialNumber: text(),
  SaleType,
  Status,
  CurrencySymbol: text(),
  PropertyType: text(),
  Bedrooms: count(LIMITS.rooms),
  Bathrooms: amount(LIMITS.rooms),
  Url: webUrl().refine(isIntactKey, KEY_RULE),
  MLSNumber: text().refine(isIntactKey, KEY_RULE),
  YearBuilt: z.number().int('must be a whole number').min(LIMITS.yearBuilt.min).max(LIMITS.yearBuilt.max),
  DaysOnMarket: count(LIMITS.daysOnMarket),
  LotArea: amount(LIMITS.area),
  BuildingArea: amount(LIMITS.area),
  AreaUnit: z.enum(AREA_UNITS),
  Images: z.array(webUrl()).max(LIMITS.images).optional(),
  Tours: z.enum(TOURS).optional(),
  ParkingSpots: count(LIMITS.parkingSpots),
  Description: longText().optional(),
  ExtensionColumn: z.array(ExtensionEntry).max(LIMITS.extensionEntries).optional(),
  Location: shortText().optional(),
  Address: shortText().optional(),
  City: shortText().optional(),
  State: shortText().optional(),
  ZIP: shortText().optional(),
  Latitude: z.number().min(-90).max(90).optional(),
  Longitude: z.number().min(-180).max(180).optional(),
  SalePrice: amount(LIMITS.price).optional(),
  UnitAreaPrice: amount(LIMITS.price).optional(),
  HOAMonth: amount(LIMITS.price).optional(),
  ZestimatePrice: amount(LIMITS.price).optional(),
  RentPrice: amount(LIMITS.price).optional(),
  SpaceType: z.enum(SPACE_TYPES).optional(),
  DepositFee: amount(LIMITS.price).optional(),
} as const;

export const ListingCreate = z.strictObject(listingShape);
export type ListingCreate = z.infer<typeof ListingCreate>;

export const ListingUpdate = z.strictObject({
  ...listingShape,
  Key: text(),
  KeyType,
});
export type ListingUpdate = z.infer<typeof ListingUpdate>;

export type ListingField = keyof typeof listingShape;
export const LISTING_FIELDS = Object.keys(listingShape) as ListingField[];

/** One item of `Data.List` from RealEstateList: most numbers as strings, "" for unset. */
export const ListItem = z.object({
  ID: z.number().int(),
  PropertyType: z.string(),
  SaleType: z.string(),
  Status: z.string(),
  Images: z.string(),
  CurrencySymbol: z.string(),
  Price: z.string(),
  State: z.string(),
  City: z.string(),
  Address: z.string(),
  ZIP: z.string(),
  Area: z.string(),
  Bathrooms: z.string(),
  Bedrooms: z.string(),
  Url: z.string(),
  Tours: z.string(),
  YearBuilt: z.string(),
  MLSNumber: z.string(),
  DaysOnMarket: z.string(),
  LotArea: z.string(),
  BuildingArea: z.string(),
  ParkingSpots: z.string(),
  Description: z.string(),
  LATITUDE: z.number(),
  LONGITUDE: z.number(),
  ExtensionColumn: z.string(),
  RentPrice: z.string(),
  SpaceType: z.string(),
  DepositFee: z.string(),
  SalePrice: z.string(),
  UnitAreaPrice: z.string(),
  ZestimatePrice: z.string(),
  HOAMonth: z.string(),
});
export type ListItem = z.infer<typeof ListItem>;
