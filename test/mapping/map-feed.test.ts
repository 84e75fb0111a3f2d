import { describe, expect, it } from 'vitest';
import { RecordParseError } from '../../src/errors.js';
import type { FeedItem } from '../../src/feeds/index.js';
import { compileMapping, mapFeed, MappingConfig, type MappedItem } from '../../src/mapping/index.js';

const base = {
  MLS: 'A-1',
  Type: 'Condo',
  Sale: 'S',
  State: 'Active',
  Beds: '3',
  Baths: '2.5',
  Year: '1999',
  Dom: '12',
  Lot: '500',
  Area: '120',
  Park: '1',
  Pics: 'https://p.test/a.jpg;https://p.test/b.jpg',
  Price: '$350,000',
  Zip: '01234',
  City: ' Austin ',
};

const mapping = MappingConfig.parse({
  fields: {
    MLSNumber: 'MLS',
    Url: { template: 'https://broker.test/l/{MLS}' },
    PropertyType: 'Type',
    SaleType: { from: 'Sale', map: { S: 'for_sale', L: 'for_rent' } },
    Status: { from: 'State', map: { Active: 'Active', Closed: 'Sold' }, skip: ['Expired'] },
    Bedrooms: { from: 'Beds', transform: 'integer' },
    Bathrooms: 'Baths',
    YearBuilt: 'Year',
    DaysOnMarket: 'Dom',
    LotArea: { from: 'Lot', unit: { from: 'sqm', to: 'sqft' } },
    BuildingArea: { from: ['LivingArea', 'Area'] },
    ParkingSpots: 'Park',
    Images: { from: 'Pics', transform: { name: 'split', separator: ';' } },
    SalePrice: { from: 'Price', transform: 'money' },
    ZIP: 'Zip',
    City: 'City',
  },
  defaults: { CurrencySymbol: '$', AreaUnit: 'Square Feet' },
  extension: { SourceType: 'Type', Missing: 'Nope' },
});

async function mapOne(
  data: Record<string, unknown>,
  m: MappingConfig = mapping,
  keyBy: 'MLSNumber' | 'URL' = 'MLSNumber',
): Promise<MappedItem> {
  const items = mapFeed(one({ kind: 'record', position: { file: 'f.csv', line: 2, index: 0 }, data }), m, {
    serialNumber: 'SN-1',
    keyBy,
  });
  for await (const i of items) return i;
  throw new Error('no item');
}

async function* one(item: FeedItem) {
  yield item;
}

describe('mapFeed', () => {
  it('maps a record through paths, templates, maps, transforms, units, defaults and extension', async () => {
    const item = await mapOne(base);
    expect(item).toEqual({
      kind: 'listing',
      position: { file: 'f.csv', line: 2, index: 0 },
      key: 'A-1',
      listing: {
        SerialNumber: 'SN-1',
        SaleType: 'for_sale',
        Status: 'Active',
        CurrencySymbol: '$',
        PropertyType: 'Condo',
        Bedrooms: 3,
        Bathrooms: 2.5,
        Url: 'https://broker.test/l/A-1',
        MLSNumber: 'A-1',
        YearBuilt: 1999,
        DaysOnMarket: 12,
        LotArea: 5381.96,
        BuildingArea: 120,
        AreaUnit: 'Square Feet',
        Images: ['https://p.test/a.jpg', 'https://p.test/b.jpg'],
        ParkingSpots: 1,
        ExtensionColumn: [{ Key: 'SourceType', value: 'Condo' }],
        City: 'Austin',
        ZIP: '01234',
        SalePrice: 350000,
      },
    });
    // the listing's keys come in the spec's order (what zod would give)
    expect(Object.keys((item as { listing: object }).listing)).toEqual(
      Object.keys((item as { listing: object }).listing).sort(
        (a, b) => FIELD_ORDER.indexOf(a) - FIELD_ORDER.indexOf(b),
      ),
    );
  });

  it('keys by URL when asked', async () => {
    const item = await mapOne(base, mapping, 'URL');
    expect(item.kind === 'listing' && item.key).toBe('https://broker.test/l/A-1');
  });

  it('rejects a record with every issue, transform failures and schema rules alike, and keeps the key', async () => {
    const item = await mapOne({ ...base, Beds: 'three', State: 'Under Review', Year: '', Price: 'Call', Baths: '-1' });
    expect(item.kind).toBe('rejected');
    if (item.kind !== 'rejected') return;
    expect(item.key).toBe('A-1');
    expect(item.issues).toEqual([
      { field: 'Bedrooms', value: 'three', rule: 'integer: not a number' },
      { field: 'SalePrice', value: 'Call', rule: 'money: not a number' },
      { field: 'Status', value: 'Under Review', rule: 'must be one of Active, PreOnMarket, Sold' },
      { field: 'Bathrooms', value: -1, rule: 'must be at least 0' },
      { field: 'YearBuilt', value: undefined, rule: 'is required' },
    ]);
  });

  it('rejects without a key when the key cannot be read', async () => {
    const item = await mapOne({ ...base, MLS: '' });
    expect(item.kind).toBe('rejected');
    expect('key' in item).toBe(false);
  });

  it('skips a record whose value is in a skip list, with the reason and the key', async () => {
    const item = await mapOne({ ...base, State: 'expired' });
    expect(item).toEqual({
      kind: 'skipped',
      position: { file: 'f.csv', line: 2, index: 0 },
      key: 'A-1',
      reason: 'State is "expired": off the market',
    });
  });

  it('passes parse errors on and maps removed records to their key', async () => {
    const error = new RecordParseError('bad row', { file: 'f.csv', line: 3 });
    const items: MappedItem[] = [];
    async function* feed(): AsyncIterable<FeedItem> {
      yield { kind: 'error', position: { file: 'f.csv', line: 3, index: 1 }, error };
      yield { kind: 'removed', position: { file: 'f.csv', index: 2, id: 'K9' }, data: { MLS: 'A-9' } };
    }
    for await (const i of mapFeed(feed(), mapping, { serialNumber: 'SN', keyBy: 'MLSNumber' })) items.push(i);
    expect(items).toEqual([
      { kind: 'error', position: { file: 'f.csv', line: 3, index: 1 }, error },
      { kind: 'removed', position: { file: 'f.csv', index: 2, id: 'K9' }, key: 'A-9' },
    ]);
  });

  it('reads nested paths, attribute text and repeated elements', async () => {
    const m = compileMapping(MappingConfig.parse({ preset: 'zillow' }), { now: () => new Date('2025-01-11') });
    const { candidate } = m.map(
      {
        Location: { StreetAddress: '1 Oak', Zip: '00501' },
        ListingDetails: { Price: { '#text': '1,000', '@_currency': 'USD' }, DateListed: '2025-01-01' },
        Pictures: { Picture: [{ PictureUrl: 'p1' }, { PictureUrl: 'p2' }] },
      },
      'SN',
    );
    expect(candidate).toMatchObject({
      Address: '1 Oak',
      ZIP: '00501',
      SalePrice: 1000,
      Images: ['p1', 'p2'],
      DaysOnMarket: 10,
    });
  });

  it('lets user fields override a preset rule, and null remove one', async () => {
    const m = compileMapping(
      MappingConfig.parse({
        preset: 'reso',
        fields: { Url: { template: 'https://x.test/{ListingKey}' }, Description: null },
      }),
    );
    const { candidate } = m.map({ ListingKey: 'K1', PublicRemarks: 'nice' }, 'SN');
    expect(candidate.Url).toBe('https://x.test/K1');
    expect(candidate).not.toHaveProperty('Description');
  });
});

const FIELD_ORDER = [
  'SerialNumber',
  'SaleType',
  'Status',
  'CurrencySymbol',
  'PropertyType',
  'Bedrooms',
  'Bathrooms',
  'Url',
  'MLSNumber',
  'YearBuilt',
  'DaysOnMarket',
  'LotArea',
  'BuildingArea',
  'AreaUnit',
  'Images',
  'Tours',
  'ParkingSpots',
  'Description',
  'ExtensionColumn',
  'Location',
  'Address',
  'City',
  'State',
  'ZIP',
  'Latitude',
  'Longitude',
  'SalePrice',
];
