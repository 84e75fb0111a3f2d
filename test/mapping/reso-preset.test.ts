// The reso preset against records as real servers spell them: lookups as display names and as OData
// enum member names, units as fields, leases, and Media that is more than photos.
import { describe, expect, it } from 'vitest';
import { FeedConfig } from '../../src/config/schema.js';
import { compileMapping, MappingConfig, type CompiledMapping } from '../../src/mapping/index.js';
import { mapItem } from '../../src/mapping/map-feed.js';
import type { MappedItem } from '../../src/mapping/types.js';
import { inSpelling, type Spelling } from '../helpers/reso-spelling.js';

const mapping = MappingConfig.parse({
  preset: 'reso',
  fields: { Url: { template: 'https://broker.test/l/{ListingId}' } },
});

function record(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    ListingKey: 'K1',
    ListingId: 'M1',
    ModificationTimestamp: '2025-03-01T10:00:00.000Z',
    StandardStatus: 'Active',
    PropertyType: 'Residential',
    PropertySubType: 'Single Family Residence',
    ListPrice: 450000,
    BedroomsTotal: 3,
    BathroomsTotalDecimal: 2,
    LivingArea: 1850,
    LotSizeSquareFeet: 6000,
    YearBuilt: 1999,
    DaysOnMarket: 12,
    ParkingTotal: 2,
    City: 'Austin',
    ...extra,
  };
}

function map(
  data: Record<string, unknown>,
  spelling: Spelling = 'display',
  compiled: CompiledMapping = compileMapping(mapping),
): MappedItem {
  return mapItem({ kind: 'record', position: { file: 'reso', index: 0 }, data: inSpelling(data, spelling) }, compiled, {
    serialNumber: 'SN-1',
    keyBy: 'MLSNumber',
  });
}

function listing(item: MappedItem): Record<string, unknown> {
  if (item.kind !== 'listing') throw new Error(`expected a listing, got ${JSON.stringify(item)}`);
  return item.listing;
}

describe.each<Spelling>(['display', 'enum'])('reso preset, lookups spelled as %s', (spelling) => {
  it.each([
    ['Active', 'Active'],
    ['Active Under Contract', 'Active'],
    ['Pending', 'Active'],
    ['Coming Soon', 'PreOnMarket'],
    ['Closed', 'Sold'],
  ])('StandardStatus %s → %s', (status, expected) => {
    expect(listing(map(record({ StandardStatus: status }), spelling)).Status).toBe(expected);
  });

  it('off-market statuses are skipped in either spelling', () => {
    for (const status of ['Expired', 'Withdrawn', 'Canceled', 'Incomplete', 'Hold', 'Delete']) {
      expect(map(record({ StandardStatus: status }), spelling).kind).toBe('skipped');
    }
  });

  it('a lease is for_rent with the rent in RentPrice and the deposit in DepositFee; a sale has SalePrice only', () => {
    const lease = listing(
      map(
        record({
          PropertyType: 'Residential Lease',
          PropertySubType: 'Apartment',
          ListPrice: 2850,
          SecurityDeposit: 3000,
        }),
        spelling,
      ),
    );
    expect(lease).toMatchObject({ SaleType: 'for_rent', RentPrice: 2850, DepositFee: 3000 });
    expect(lease.SalePrice).toBeUndefined();
    const commercial = listing(
      map(record({ PropertyType: 'Commercial Lease', PropertySubType: 'Office', ListPrice: 9000 }), spelling),
    );
    expect(commercial).toMatchObject({ SaleType: 'for_rent', RentPrice: 9000 });
    const sale = listing(map(record({ SecurityDeposit: 500 }), spelling));
    expect(sale).toMatchObject({ SaleType: 'for_sale', SalePrice: 450000 });
    expect(sale.RentPrice).toBeUndefined();
    expect(sale.DepositFee).toBeUndefined();
  });

  it('PropertySubType is shown in its display form', () => {
    expect(listing(map(record(), spelling)).PropertyType).toBe('Single Family Residence');
    expect(listing(map(record({ PropertySubType: 'Stock Cooperative' }), spelling)).PropertyType).toBe(
      'Stock Cooperative',
    );
  });

  it('areas in square meters stay square meters, and the lot comes to the same unit', () => {
    const l = listing(
      map(
        record({
          LivingArea: 120,
          LivingAreaUnits: 'Square Meters',
          LotSizeArea: 0.5,
          LotSizeUnits: 'Acres',
          LotSizeSquareFeet: null,
        }),
        spelling,
      ),
    );
    expect(l).toMatchObject({ AreaUnit: 'Square Meters', BuildingArea: 120, LotArea: 2023.43 });
  });

  it('LotSizeArea is read in LotSizeUnits, square feet and acres alike', () => {
    const acres = listing(map(record({ LotSizeArea: 0.25, LotSizeUnits: 'Acres', LotSizeSquareFeet: null }), spelling));
    expect(acres).toMatchObject({ AreaUnit: 'Square Feet', LotArea: 10890, BuildingArea: 1850 });
    const sqm = listing(
      map(record({ LotSizeArea: 500, LotSizeUnits: 'Square Meters', LotSizeSquareFeet: null }), spelling),
    );
    expect(sqm).toMatchObject({ AreaUnit: 'Square Feet', LotArea: 5381.96 });
    const sqmLiving = listing(
      map(record({ LivingArea: 100, LivingAreaUnits: 'Square Meters', LotSizeSquareFeet: 1076.39 }), spelling),
    );
    expect(sqmLiving).toMatchObject({ AreaUnit: 'Square Meters', BuildingArea: 100, LotArea: 100 });
  });

  it("a LotSizeArea without LotSizeUnits falls back to LotSizeSquareFeet; in an unknown unit with nothing else it is rejected, or replaced by the default with onInvalid: default (the preset's)", () => {
    expect(listing(map(record({ LotSizeArea: 999, LotSizeSquareFeet: 6000 }), spelling)).LotArea).toBe(6000);
    const replaced = map(record({ LotSizeArea: 3, LotSizeUnits: 'Hectares', LotSizeSquareFeet: null }), spelling);
    expect(replaced).toMatchObject({ kind: 'listing', replaced: ['LotArea'], listing: { LotArea: 0 } });
    const strict = compileMapping(
      MappingConfig.parse({
        ...mapping,
        fields: {
          ...mapping.fields,
          LotArea: {
            ...mapping.fields.LotArea,
            from: ['LotSizeArea', 'LotSizeSquareFeet', 'LotSizeAcres'],
            unit: {
              from: { LotSizeArea: 'LotSizeUnits', LotSizeSquareFeet: 'sqft', LotSizeAcres: 'acres' },
              to: 'AreaUnit',
            },
            onInvalid: 'reject',
          },
        },
      }),
    );
    const bad = map(record({ LotSizeArea: 3, LotSizeUnits: 'Hectares', LotSizeSquareFeet: null }), spelling, strict);
    expect(bad.kind).toBe('rejected');
    expect(bad.kind === 'rejected' && bad.issues.map((i) => `${i.field}: ${i.rule}`)).toEqual([
      'LotArea: LotSizeUnits "Hectares" is not an area unit (Square Feet, Square Meters, Acres)',
    ]);
  });

  it('a junk LotSizeArea gives way to LotSizeSquareFeet, converted to the AreaUnit like every other source (issue 54)', () => {
    const item = map(
      record({
        LivingArea: 100,
        LivingAreaUnits: 'Square Meters',
        LotSizeArea: 1e15,
        LotSizeUnits: 'Square Feet',
        LotSizeSquareFeet: 10763.91,
      }),
      spelling,
    );
    expect(item).toMatchObject({ kind: 'listing', listing: { AreaUnit: 'Square Meters', LotArea: 1000 } });
    expect(item.kind === 'listing' && item.replaced).toBeUndefined();
    // the acres fallback alike
    const acres = map(
      record({
        LivingAreaUnits: 'Square Meters',
        LotSizeArea: 1e15,
        LotSizeUnits: 'Square Feet',
        LotSizeSquareFeet: null,
        LotSizeAcres: 0.5,
      }),
      spelling,
    );
    expect(acres).toMatchObject({ kind: 'listing', listing: { AreaUnit: 'Square Meters', LotArea: 2023.43 } });
  });

  it("junk in DaysOnMarket, GarageSpaces and LotSizeArea (the RESO reference server's) is replaced by 0 and named, not the listing lost", () => {
    const junk = map(
      record({
        DaysOnMarket: 72_725,
        ParkingTotal: null,
        GarageSpaces: 510864656077.79,
        LotSizeSquareFeet: null,
        LotSizeArea: 3e15,
        LotSizeUnits: 'Square Feet',
      }),
      spelling,
    );
    expect(junk).toMatchObject({ kind: 'listing', listing: { DaysOnMarket: 0, ParkingSpots: 0, LotArea: 0 } });
    expect(junk.kind === 'listing' && [...junk.replaced!].sort()).toEqual(['DaysOnMarket', 'LotArea', 'ParkingSpots']);
    // the other fields keep today's rule: junk there still rejects the record
    expect(map(record({ BedroomsTotal: 9_999_999 }), spelling).kind).toBe('rejected');
  });

  it('GarageSpaces 2.5 is a legitimate decimal: floored to whole spaces, nothing replaced', () => {
    const item = map(record({ ParkingTotal: null, GarageSpaces: 2.5 }), spelling);
    expect(item).toMatchObject({ kind: 'listing', listing: { ParkingSpots: 2 } });
    expect(item.kind === 'listing' && item.replaced).toBeUndefined();
  });

  // AssociationFee is per AssociationFeeFrequency (RESO Data Dictionary), HOAMonth a monthly fee: a
  // yearly $1,200 is $100 a month, never shown as $1,200 a month
  it.each([
    ['Monthly', 250, 250],
    ['Annually', 1200, 100],
    ['Semi-Annually', 600, 100],
    ['Quarterly', 300, 100],
    ['Bi-Monthly', 200, 100],
    ['Semi-Monthly', 50, 100],
    ['Weekly', 30, 130],
    [undefined, 250, 250],
  ])('AssociationFee per %s %s → HOAMonth %s', (frequency, fee, monthly) => {
    const l = listing(map(record({ AssociationFee: fee, AssociationFeeFrequency: frequency }), spelling));
    expect(l.HOAMonth).toBe(monthly);
  });

  it('a one-time or seasonal AssociationFee is no monthly fee: HOAMonth is left out, the listing kept', () => {
    for (const frequency of ['One Time', 'Seasonal']) {
      const item = map(record({ AssociationFee: 5000, AssociationFeeFrequency: frequency }), spelling);
      expect(listing(item).HOAMonth).toBeUndefined();
    }
    const told: string[] = [];
    const compiled = compileMapping(mapping, { onUnmapped: (u) => told.push(`${u.from}: ${u.value}`) });
    const odd = map(record({ AssociationFee: 90, AssociationFeeFrequency: 'Fortnightly' }), spelling, compiled);
    expect(listing(odd).HOAMonth).toBeUndefined();
    expect(told).toEqual(['AssociationFeeFrequency: Fortnightly']);
  });

  it('Images are the photos of Media, in Order; floor plans, videos, documents and logos are left out', () => {
    const media = [
      { MediaURL: 'https://m.test/video.mp4', MediaCategory: 'Video', MediaType: 'mp4', Order: 0 },
      { MediaURL: 'https://m.test/3.jpg', MediaCategory: 'Photo', MediaType: 'jpeg', Order: 3 },
      { MediaURL: 'https://m.test/plan.jpg', MediaCategory: 'Floor Plan', MediaType: 'jpeg', Order: 1 },
      { MediaURL: 'https://m.test/1.jpg', MediaCategory: 'Photo', MediaType: 'jpeg', Order: 1 },
      { MediaURL: 'https://m.test/doc.pdf', MediaCategory: 'Document', MediaType: 'pdf', Order: 2 },
      { MediaURL: 'https://m.test/logo.png', MediaCategory: 'Office Logo', MediaType: 'png', Order: 2 },
      { MediaURL: 'https://m.test/2.jpg', MediaType: 'image/jpeg', Order: 2 },
      { MediaURL: 'https://m.test/none.jpg', Order: 4 },
    ];
    expect(listing(map(record({ Media: media }), spelling)).Images).toEqual([
      'https://m.test/1.jpg',
      'https://m.test/2.jpg',
      'https://m.test/3.jpg',
    ]);
  });
});

describe('value maps', () => {
  it('match case-, space- and underscore-insensitively', () => {
    const m = MappingConfig.parse({ fields: { Status: { from: 'S', map: { 'Active Under Contract': 'Active' } } } });
    const compiled = compileMapping(m);
    for (const s of [
      'ActiveUnderContract',
      'active_under_contract',
      'ACTIVE UNDER CONTRACT',
      ' Active  Under Contract ',
    ]) {
      expect(compiled.map({ S: s }, 'SN').candidate.Status).toBe('Active');
    }
  });

  it('two keys that are one value to a loose map, mapped differently, are a config error naming both', () => {
    const r = MappingConfig.safeParse({
      fields: { Status: { from: 'S', map: { 'Coming Soon': 'PreOnMarket', ComingSoon: 'Active' } } },
    });
    expect(r.success).toBe(false);
    expect(r.error!.issues[0]!.message).toContain('"ComingSoon" and "Coming Soon" are the same value');
  });

  it('tells of each value no map covers, and of none a "*" covers', () => {
    const seen: string[] = [];
    const compiled = compileMapping(mapping, { onUnmapped: (u) => seen.push(`${u.field} ${u.from}=${u.value}`) });
    expect(map(record({ StandardStatus: 'Contingent' }), 'display', compiled).kind).toBe('rejected');
    map(record({ PropertyType: 'Farm' }), 'display', compiled);
    expect(seen).toEqual(['Status StandardStatus=Contingent']);
  });
});

describe('derived fields', () => {
  const feed = (extra: Record<string, unknown>) =>
    FeedConfig.parse({ name: 'f', chatbot: 'SN', source: { kind: 'reso', url: 'https://mls.test/odata' }, ...extra });

  it('the presets ignore DaysOnMarket for change detection unless the feed says otherwise', () => {
    for (const preset of ['reso', 'zillow', 'listhub'])
      expect(feed({ mapping: { preset } }).ignore).toEqual(['DaysOnMarket']);
    expect(feed({ mapping: { preset: 'reso' }, ignore: [] }).ignore).toEqual([]);
    expect(feed({ mapping: { preset: 'reso' }, ignore: ['Description'] }).ignore).toEqual(['Description']);
    expect(feed({}).ignore).toEqual([]);
  });
});
