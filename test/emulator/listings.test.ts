// Listings in the emulator: paging with a cap, filters, the list-item serialization of the spec,
// update and delete by each KeyType, duplicates.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ListItem } from '../../src/api/schemas.js';
import { sampleListing, startTestEmulator, type TestEmulator } from '../helpers/emulator.js';

let t: TestEmulator;
beforeAll(async () => {
  t = await startTestEmulator({ maxPageSize: 5 });
});
afterAll(() => t.close());
beforeEach(() => t.reset());

async function createMany(n: number, overrides: (i: number) => Record<string, unknown> = () => ({})) {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    ids.push(
      await t.api.createListing(
        sampleListing({ MLSNumber: `M${i}`, Url: `https://example.com/l/${i}`, ...overrides(i) }),
      ),
    );
  }
  return ids;
}

describe('emulator: list', () => {
  it('pages 20 by default, caps PageSize at maxPageSize and counts every match in VirtualCount', async () => {
    await createMany(12);
    const first = await t.api.listListings({ SerialNumber: 'SN-1', PageSize: 50 });
    expect(first.List).toHaveLength(5); // capped
    expect(first.VirtualCount).toBe(12);
    const pages = [];
    for (let page = 1; page <= 3; page++)
      pages.push(...(await t.api.listListings({ SerialNumber: 'SN-1', PageSize: 5, PageNumber: page })).List);
    expect(pages.map((i) => i.MLSNumber)).toEqual(Array.from({ length: 12 }, (_, i) => `M${i}`));
    expect((await t.api.listListings({ SerialNumber: 'SN-1', PageSize: 5, PageNumber: 4 })).List).toEqual([]);
    // without PageSize: 20, capped to 5
    expect((await t.api.listListings({ SerialNumber: 'SN-1' })).List).toHaveLength(5);
  });

  it('filters by CityName (any case), SaleType and MLSNumber, and keeps chatbots apart', async () => {
    await createMany(6, (i) => ({ City: i % 2 ? 'Austin' : 'Dallas', SaleType: i < 3 ? 'for_sale' : 'for_rent' }));
    await t.api.createListing(sampleListing({ SerialNumber: 'SN-2', MLSNumber: 'other' }));
    const austin = await t.api.listListings({ SerialNumber: 'SN-1', CityName: 'austin' });
    expect(austin.List.map((i) => i.MLSNumber)).toEqual(['M1', 'M3', 'M5']);
    const rent = await t.api.listListings({ SerialNumber: 'SN-1', CityName: 'Austin', SaleType: 'for_rent' });
    expect(rent.List.map((i) => i.MLSNumber)).toEqual(['M3', 'M5']);
    expect((await t.api.listListings({ SerialNumber: 'SN-1', MLSNumber: 'M4' })).VirtualCount).toBe(1);
    expect((await t.api.listListings({ SerialNumber: 'SN-2' })).List.map((i) => i.MLSNumber)).toEqual(['other']);
  });

  it('serializes items as the spec says: numbers as strings, "" for unset, JSON strings, LATITUDE/LONGITUDE', async () => {
    const full = sampleListing({
      SaleType: 'for_rent',
      RentPrice: 2100.5,
      SalePrice: 500000,
      Images: ['https://img/1.jpg', 'https://img/2.jpg'],
      ExtensionColumn: [{ Key: 'Pool', value: 'yes' }],
      Latitude: 30.27,
      Longitude: -97.74,
      Location: 'near the park',
      Tours: '3D',
      HOAMonth: 0,
    });
    await t.api.createListing(full);
    await t.api.createListing(sampleListing({ MLSNumber: 'bare' }));
    const { List } = await t.api.listListings({ SerialNumber: 'SN-1' });
    const [a, b] = List;
    expect(ListItem.strict().safeParse(a).success).toBe(true);
    expect(a).toMatchObject({
      Price: '2100.5',
      RentPrice: '2100.5',
      SalePrice: '500000',
      Bathrooms: '2.5',
      Area: '1850',
      BuildingArea: '1850',
      Images: '["https://img/1.jpg","https://img/2.jpg"]',
      ExtensionColumn: '[{"Key":"Pool","value":"yes"}]',
      LATITUDE: 30.27,
      LONGITUDE: -97.74,
      Tours: '3D',
      HOAMonth: '0',
      ZIP: '',
    });
    expect(a).not.toHaveProperty('Location');
    expect(a).not.toHaveProperty('AreaUnit');
    expect(b).toMatchObject({
      Price: '450000',
      RentPrice: '',
      Images: '',
      ExtensionColumn: '',
      LATITUDE: 0,
      LONGITUDE: 0,
      Tours: '',
      Description: '',
    });
    // the admin view keeps the listing as written, Location and AreaUnit included
    expect((await t.listings('SN-1'))[0]).toMatchObject({
      Location: 'near the park',
      AreaUnit: 'Square Feet',
      ID: a!.ID,
    });
  });
});

describe('emulator: update and delete', () => {
  it('updates by NewOaks (the ID create returned), MLSNumber and URL, answering the count', async () => {
    const [id0] = await createMany(3);
    const body = (over: Record<string, unknown>) =>
      sampleListing({ MLSNumber: 'M0', Url: 'https://example.com/l/0', ...over });
    expect(await t.api.updateListing({ ...body({ Description: 'by id' }), Key: id0!, KeyType: 'NewOaks' })).toBe(1);
    expect(
      await t.api.updateListing({
        ...sampleListing({ MLSNumber: 'M1', Url: 'https://example.com/l/1', Description: 'by mls' }),
        Key: 'M1',
        KeyType: 'MLSNumber',
      }),
    ).toBe(1);
    expect(
      await t.api.updateListing({
        ...sampleListing({ MLSNumber: 'M2', Url: 'https://example.com/l/2', Description: 'by url' }),
        Key: 'https://example.com/l/2',
        KeyType: 'URL',
      }),
    ).toBe(1);
    expect((await t.listings('SN-1')).map((l) => l.Description)).toEqual(['by id', 'by mls', 'by url']);
    expect(await t.api.updateListing({ ...body({}), Key: '999', KeyType: 'NewOaks' })).toBe(0);
    expect(await t.api.updateListing({ ...body({}), Key: 'not-a-number', KeyType: 'NewOaks' })).toBe(0);
    expect(await t.api.updateListing({ ...body({ SerialNumber: 'SN-2' }), Key: 'M0', KeyType: 'MLSNumber' })).toBe(0);
  });

  it('keeps duplicates of one MLSNumber; update and delete act on every copy', async () => {
    await createMany(2, () => ({ MLSNumber: 'DUP' }));
    await createMany(1, () => ({ MLSNumber: 'SOLO' }));
    expect((await t.api.listListings({ SerialNumber: 'SN-1', MLSNumber: 'DUP' })).VirtualCount).toBe(2);
    expect(
      await t.api.updateListing({
        ...sampleListing({ MLSNumber: 'DUP', Status: 'Sold' }),
        Key: 'DUP',
        KeyType: 'MLSNumber',
      }),
    ).toBe(2);
    expect((await t.listings('SN-1')).filter((l) => l.Status === 'Sold')).toHaveLength(2);
    expect(await t.api.deleteListings({ SerialNumber: 'SN-1', Keys: ['DUP'], KeyType: 'MLSNumber' })).toEqual({
      SuccessCount: 2,
    });
    expect((await t.listings('SN-1')).map((l) => l.MLSNumber)).toEqual(['SOLO']);
  });

  it('deletes by NewOaks and URL; keys that match nothing do not count', async () => {
    const ids = await createMany(4);
    const res = await t.api.deleteListings({
      SerialNumber: 'SN-1',
      Keys: [ids[0]!, ids[1]!, '12345'],
      KeyType: 'NewOaks',
    });
    expect(res.SuccessCount).toBe(2);
    expect(
      (await t.api.deleteListings({ SerialNumber: 'SN-1', Keys: ['https://example.com/l/3'], KeyType: 'URL' }))
        .SuccessCount,
    ).toBe(1);
    expect((await t.listings('SN-1')).map((l) => l.MLSNumber)).toEqual(['M2']);
  });
});
