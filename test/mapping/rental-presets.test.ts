// The rental presets on the committed samples: mits (fixtures/feeds/mits-sample.xml, read by the
// MITS reader) and hotpads (fixtures/feeds/hotpads-sample.xml, read as XML): what each record becomes.
import { createReadStream } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { readMits } from '../../src/feeds/mits/mits-reader.js';
import { readXml } from '../../src/feeds/xml/xml-reader.js';
import { MappingConfig } from '../../src/mapping/config-schema.js';
import { mapFeed, type MappedItem } from '../../src/mapping/index.js';

const fixture = (name: string) => fileURLToPath(new URL(`../../fixtures/feeds/${name}`, import.meta.url));

async function mapped(items: Parameters<typeof mapFeed>[0], mapping: Record<string, unknown>): Promise<MappedItem[]> {
  const out: MappedItem[] = [];
  for await (const m of mapFeed(items, MappingConfig.parse(mapping), { serialNumber: 'SN', keyBy: 'MLSNumber' }))
    out.push(m);
  return out;
}

describe('preset mits on the sample', () => {
  it('available and on-notice units become rentals, the leased unit is skipped, a property without YearBuilt is rejected naming it', async () => {
    const items = await mapped(
      readMits(createReadStream(fixture('mits-sample.xml')), { label: 'mits-sample.xml', recordPer: 'unit' }),
      { preset: 'mits' },
    );
    expect(items.map((i) => [i.kind, i.key])).toEqual([
      ['listing', 'HV100-101'],
      ['listing', 'HV100-102'],
      ['skipped', 'HV100-103'],
      ['listing', 'HV100-104'],
      ['listing', 'ELM7-ELM7-1'],
      ['rejected', 'RV9-L-201'],
    ]);
    const [u101] = items;
    expect(u101!.kind === 'listing' && u101!.listing).toMatchObject({
      MLSNumber: 'HV100-101',
      SaleType: 'for_rent',
      Status: 'Active',
      PropertyType: 'Apartment',
      RentPrice: 1625,
      DepositFee: 500,
      Bedrooms: 1,
      Bathrooms: 1,
      BuildingArea: 650,
      YearBuilt: 2004,
      Url: 'https://harborview.apartments.test/',
      Address: '400 Harbor Way',
      City: 'Portland',
      State: 'OR',
      ZIP: '97209',
      Latitude: 45.5301,
      Longitude: -122.6802,
      SpaceType: 'Entire place',
    });
    const u104 = items[3]!;
    // no rent of its own: the floorplan's lowest market rent; the floorplan's deposit
    expect(u104.kind === 'listing' && u104.listing).toMatchObject({ RentPrice: 2150, DepositFee: 750, Bedrooms: 2 });
    const rejected = items[5]!;
    expect(rejected.kind === 'rejected' && rejected.issues.map((i) => i.field)).toEqual(['YearBuilt']);
  });

  it('defaults.YearBuilt takes the property the feed gives no year', async () => {
    const items = await mapped(
      readMits(createReadStream(fixture('mits-sample.xml')), { label: 'mits-sample.xml', recordPer: 'unit' }),
      {
        preset: 'mits',
        defaults: { YearBuilt: 2000 },
      },
    );
    expect(items.filter((i) => i.kind === 'listing')).toHaveLength(5);
  });
});

describe('preset hotpads on the sample', () => {
  it('maps rent, deposit, rooms, photos, tours and the room type', async () => {
    const items = await mapped(
      readXml(createReadStream(fixture('hotpads-sample.xml')), {
        label: 'hotpads-sample.xml',
        recordPath: 'hotPadsItems.Listing',
      }),
      {
        preset: 'hotpads',
        defaults: { YearBuilt: 1990 },
      },
    );
    expect(items.map((i) => i.kind)).toEqual(['listing', 'listing']);
    const [condo, room] = items.map((i) => (i.kind === 'listing' ? i.listing : undefined));
    expect(condo).toMatchObject({
      MLSNumber: 'HP-1001',
      SaleType: 'for_rent',
      Status: 'Active',
      SpaceType: 'Entire place',
      PropertyType: 'Condo',
      RentPrice: 2350,
      DepositFee: 1000,
      Bedrooms: 2,
      Bathrooms: 1,
      BuildingArea: 940,
      Address: '1200 NW Lovejoy St',
      ZIP: '97209',
      Tours: '3D',
      Images: [
        'https://media.bayside-residential.test/hp-1001/1.jpg',
        'https://media.bayside-residential.test/hp-1001/2.jpg',
      ],
      Url: 'https://bayside-residential.test/listings/hp-1001',
    });
    expect(condo!.ExtensionColumn).toEqual(
      expect.arrayContaining([
        { Key: 'Unit', value: '5B' },
        { Key: 'HalfBaths', value: '1' },
        { Key: 'AvailableDate', value: '2026-12-15' },
      ]),
    );
    expect(room).toMatchObject({ SpaceType: 'Room', PropertyType: 'House', RentPrice: 875 });
    expect(room!.Tours).toBeUndefined();
  });
});
