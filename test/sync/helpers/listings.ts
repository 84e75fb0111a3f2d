// Listings, list items and feed/remote sides for unit tests of the sync.
import { canonicalFromListItem } from '../../../src/listing/canonical.js';
import type { ListingCreate, ListItem } from '../../../src/listing/schema.js';
import type { DesiredSide, RemoteListing, RemoteSide } from '../../../src/sync/plan-types.js';

export function listing(mls: string, patch: Partial<ListingCreate> = {}): ListingCreate {
  return {
    SerialNumber: 'SN-1',
    SaleType: 'for_sale',
    Status: 'Active',
    CurrencySymbol: '$',
    PropertyType: 'House',
    Bedrooms: 3,
    Bathrooms: 2.5,
    Url: `https://example.com/${mls}`,
    MLSNumber: mls,
    YearBuilt: 1999,
    DaysOnMarket: 4,
    LotArea: 5000,
    BuildingArea: 1800,
    AreaUnit: 'Square Feet',
    ParkingSpots: 2,
    City: 'Austin',
    SalePrice: 350000,
    ...patch,
  };
}

/** The list item the service would answer for `l` (numbers as strings, "" for unset). */
export function listItem(id: number, l: ListingCreate, patch: Partial<ListItem> = {}): ListItem {
  const s = (v: unknown) => (v === undefined ? '' : String(v));
  return {
    ID: id,
    PropertyType: l.PropertyType,
    SaleType: l.SaleType,
    Status: l.Status,
    Images: l.Images ? JSON.stringify(l.Images) : '',
    CurrencySymbol: l.CurrencySymbol,
    Price: s(l.SaleType === 'for_rent' ? l.RentPrice : l.SalePrice),
    State: s(l.State),
    City: s(l.City),
    Address: s(l.Address),
    ZIP: s(l.ZIP),
    Area: s(l.BuildingArea),
    Bathrooms: s(l.Bathrooms),
    Bedrooms: s(l.Bedrooms),
    Url: l.Url,
    Tours: s(l.Tours),
    YearBuilt: s(l.YearBuilt),
    MLSNumber: l.MLSNumber,
    DaysOnMarket: s(l.DaysOnMarket),
    LotArea: s(l.LotArea),
    BuildingArea: s(l.BuildingArea),
    ParkingSpots: s(l.ParkingSpots),
    Description: s(l.Description),
    LATITUDE: l.Latitude ?? 0,
    LONGITUDE: l.Longitude ?? 0,
    ExtensionColumn: l.ExtensionColumn ? JSON.stringify(l.ExtensionColumn) : '',
    RentPrice: s(l.RentPrice),
    SpaceType: s(l.SpaceType),
    DepositFee: s(l.DepositFee),
    SalePrice: s(l.SalePrice),
    UnitAreaPrice: s(l.UnitAreaPrice),
    ZestimatePrice: s(l.ZestimatePrice),
    HOAMonth: s(l.HOAMonth),
    ...patch,
  };
}

export function desiredSide(listings: ListingCreate[], patch: Partial<DesiredSide> = {}): DesiredSide {
  const map = new Map(listings.map((l, index) => [l.MLSNumber, { key: l.MLSNumber, listing: l, position: { file: 'feed.csv', line: index + 2, index } }]));
  return {
    listings: map,
    protectedKeys: new Set(),
    goneKeys: new Map(),
    rejected: [],
    feedDuplicates: [],
    mode: 'full',
    complete: true,
    counts: { records: listings.length, valid: listings.length, rejected: 0, skipped: 0, removed: 0 },
    ...patch,
  };
}

export function remoteSide(items: ListItem[], keyBy: 'MLSNumber' | 'URL' = 'MLSNumber'): RemoteSide {
  const byKey = new Map<string, RemoteListing[]>();
  for (const item of items) {
    const key = keyBy === 'URL' ? item.Url : item.MLSNumber;
    const copies = byKey.get(key) ?? [];
    copies.push({ id: item.ID, key, canonical: canonicalFromListItem(item) });
    byKey.set(key, copies);
  }
  return { byKey, count: items.length, virtualCount: items.length, complete: true, pages: 1, rounds: 1 };
}
