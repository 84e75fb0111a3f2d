// Listings, list items and feed/remote sides for unit tests of the sync.
import { toListItem } from '../../../src/emulator/list-item.js';
import type { ListingCreate, ListItem } from '../../../src/listing/schema.js';
import type { DesiredSide, RemoteSide } from '../../../src/sync/model/plan-types.js';
import { RemoteIndex } from '../../../src/sync/remote/remote-index.js';
import { toRemote } from '../../../src/sync/remote/remote.js';

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

/** The list item the service would answer for `l` (the emulator's serialization), with overrides. */
export function listItem(id: number, l: ListingCreate, patch: Partial<ListItem> = {}): ListItem {
  return { ...toListItem({ ...l, ID: id }), ...patch };
}

export function desiredSide(listings: ListingCreate[], patch: Partial<DesiredSide> = {}): DesiredSide {
  const map = new Map(
    listings.map((l, index) => [
      l.MLSNumber,
      { key: l.MLSNumber, listing: l, position: { file: 'feed.csv', line: index + 2, index } },
    ]),
  );
  return {
    listings: map,
    protectedKeys: new Set(),
    goneKeys: new Map(),
    rejected: [],
    feedDuplicates: [],
    mode: 'full',
    complete: true,
    counts: { records: listings.length, valid: listings.length, rejected: 0, skipped: 0, removed: 0 },
    display: { hidden: {}, addressWithheld: 0, held: 0 },
    ...patch,
  };
}

/** The remote side of `items`, indexed as a sync does; without `keepCompared` (a run without the change log) changes are not named. */
export function remoteSide(
  items: ListItem[],
  keyBy: 'MLSNumber' | 'URL' = 'MLSNumber',
  keepCompared = true,
  ignore: string[] = [],
): RemoteSide {
  const index = new RemoteIndex({ keepCompared, keepOtherKey: true });
  for (const item of items)
    index.add(toRemote(item, { keyBy, keepCompared, keepOtherKey: true, ignore: new Set(ignore) }), 1);
  index.finish(1);
  return { byKey: index, count: index.count, virtualCount: items.length, complete: true, pages: 1, rounds: 1 };
}
