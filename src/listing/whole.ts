// A whole listing as the change log keeps it, so that `feedsync undo` can put it back: the listing
// as the run's paging read it from the service (a RealEstateList item, every field the list returns,
// as the service holds it) plus the fields the list does not return (Location, AreaUnit), which only the last
// write knows. Packed as deflated JSON in base64: a listing of ~1 KB takes a few hundred bytes.
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import type { ListingCreate, ListItem } from './schema.js';

/** The fields the list does not return, as the last write sent them (kept beside the fingerprint). */
export type UnlistedValues = Partial<Pick<ListingCreate, 'Location' | 'AreaUnit'>>;

export function unlistedOf(listing: ListingCreate): UnlistedValues {
  return {
    ...(listing.Location !== undefined && { Location: listing.Location }),
    ...(listing.AreaUnit !== undefined && { AreaUnit: listing.AreaUnit }),
  };
}

/**
 * The unlisted fields of listings as the sync state keeps them (JSON of unlistedOf), one string for
 * each value met again: most listings of a feed have the same (`{"AreaUnit":"Square Feet"}`), and a
 * first sync of a million keeps one each until its commit (about 47 MB as a million copies).
 * Bounded: past SAME_TEXTS distinct values, new ones are kept as they come.
 */
export function unlistedTexts(): (listing: ListingCreate) => string {
  const seen = new Map<string, string>();
  return (listing) => {
    const text = JSON.stringify(unlistedOf(listing));
    const known = seen.get(text);
    if (known !== undefined) return known;
    if (seen.size < SAME_TEXTS) seen.set(text, text);
    return text;
  };
}
const SAME_TEXTS = 1000;

const TEXT = [
  'PropertyType',
  'SaleType',
  'Status',
  'CurrencySymbol',
  'State',
  'City',
  'Address',
  'ZIP',
  'Url',
  'Tours',
  'MLSNumber',
  'Description',
  'SpaceType',
] as const satisfies ReadonlyArray<keyof ListItem>;
const NUMBER = [
  'Bathrooms',
  'Bedrooms',
  'YearBuilt',
  'DaysOnMarket',
  'LotArea',
  'BuildingArea',
  'ParkingSpots',
  'RentPrice',
  'DepositFee',
  'SalePrice',
  'UnitAreaPrice',
  'ZestimatePrice',
  'HOAMonth',
] as const satisfies ReadonlyArray<keyof ListItem>;

/**
 * The listing a list item and the remembered unlisted values stand for: the body a create (or an
 * update) must send for the service to hold it again. Text as the service holds it (not tidied),
 * numbers parsed, "" and a 0 coordinate as unset, Images and ExtensionColumn from their JSON.
 * Not validated here: the caller sends it, and the service (or the emulator) judges it.
 */
export function listingFromListItem(item: ListItem, serialNumber: string, unlisted: UnlistedValues): ListingCreate {
  const out: Record<string, unknown> = { SerialNumber: serialNumber };
  for (const f of TEXT) if (item[f] !== '') out[f] = item[f];
  for (const f of NUMBER) {
    const n = numberOf(item[f]);
    if (n !== undefined) out[f] = n;
  }
  // the price that applies to the SaleType, when the service answered only Price
  const price = item.SaleType === 'for_rent' ? 'RentPrice' : item.SaleType === 'for_sale' ? 'SalePrice' : undefined;
  if (price && out[price] === undefined) {
    const n = numberOf(item.Price);
    if (n !== undefined) out[price] = n;
  }
  if (item.LATITUDE) out.Latitude = item.LATITUDE;
  if (item.LONGITUDE) out.Longitude = item.LONGITUDE;
  const images = jsonArray(item.Images);
  if (images?.length) out.Images = images;
  const extension = jsonArray(item.ExtensionColumn);
  if (extension?.length) out.ExtensionColumn = extension;
  Object.assign(out, unlisted);
  return out as ListingCreate;
}

/** A number as the list gives one: a number, or a string that is one ("" and junk: none). */
function numberOf(v: unknown): number | undefined {
  if (typeof v === 'number') return v;
  return typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v)) ? Number(v) : undefined;
}

function jsonArray(s: string): unknown[] | undefined {
  if (!s.trim().startsWith('[')) return undefined;
  try {
    const v: unknown = JSON.parse(s);
    return Array.isArray(v) ? v : undefined;
  } catch {
    return undefined; // not the JSON form: left out (the undo names what it could not restore)
  }
}

/** A listing packed for the change log: deflated JSON, base64. */
export function packListing(listing: ListingCreate): string {
  return deflateRawSync(Buffer.from(JSON.stringify(listing), 'utf8')).toString('base64');
}

/** A listing packed by packListing; undefined when the text is not one (a torn or foreign entry). */
export function unpackListing(packed: string): ListingCreate | undefined {
  try {
    const v: unknown = JSON.parse(
      inflateRawSync(Buffer.from(packed, 'base64'), { maxOutputLength: 4 << 20 }).toString('utf8'),
    );
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as ListingCreate) : undefined;
  } catch {
    return undefined; // (not base64 deflated JSON: a torn or foreign entry, as said above)
  }
}
