// The MITS reader: one record per ILS_Unit (or per Floorplan) with its property's and floorplan's
// fields, on the committed published-sample-shaped file and on generated feeds (fixtures/generate-mits.ts).
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { FeedReadError } from '../../src/errors.js';
import { readMits } from '../../src/feeds/mits/mits-reader.js';
import { decide } from '../../src/feeds/mits/unit.js';
import type { FeedItem } from '../../src/feeds/types.js';
import { isListed, LEASED_STATUSES, mitsModel, renderMits, unitKey } from '../../fixtures/generate-mits.js';
import { chunks, collectUntilError } from './helpers.js';

const SAMPLE = fileURLToPath(new URL('../../fixtures/feeds/mits-sample.xml', import.meta.url));

const read = async (
  input: string | Buffer,
  o: { recordPer?: 'unit' | 'floorplan'; maxPropertyChars?: number; size?: number } = {},
) =>
  collectUntilError(
    readMits(chunks(input, o.size ?? 997), {
      label: 'mits.xml',
      recordPer: o.recordPer ?? 'unit',
      maxPropertyChars: o.maxPropertyChars,
    }),
  );

const records = (items: FeedItem[]) =>
  items.filter((i): i is Extract<FeedItem, { kind: 'record' }> => i.kind === 'record');

describe('readMits on the published-sample-shaped file', () => {
  it('gives each unit its property, floorplan and availability, and says how it joined them', async () => {
    const { items, error } = await read(await readFile(SAMPLE));
    expect(error).toBeUndefined();
    const recs = records(items);
    expect(recs.map((r) => r.data.Key)).toEqual([
      'HV100-101',
      'HV100-102',
      'HV100-103',
      'HV100-104',
      'ELM7-ELM7-1',
      'RV9-L-201',
    ]);
    const [u101, u102, u103, u104, elm, rv] = recs.map((r) => r.data);
    expect(u101).toMatchObject({
      Availability: 'available',
      AvailableDate: '2026-11-15',
      Property: {
        ID: 'HV100',
        MarketingName: 'Harbor View Apartments',
        Phone: '5035550142',
        Latitude: '45.5301',
        YearBuilt: '2004',
        Deposit: '500.00',
      },
      Floorplan: { ID: 'A1', Bedrooms: '1', Bathrooms: '1', SquareFeetMin: '640', MarketRentMin: '1595' },
      Unit: { ID: '101', UnitRent: '1625.00', LeasedStatus: 'available', SquareFeet: '650' },
    });
    expect((u101!.Property as Record<string, unknown>).Address).toEqual({
      Line1: '400 Harbor Way',
      City: 'Portland',
      State: 'OR',
      PostalCode: '97209',
      Country: 'US',
    });
    // the unit's photo, its floorplan's image, the property's active photos in Rank order (the inactive one left out)
    expect(u101!.Photos).toEqual([
      'https://media.harborview.apartments.test/units/101-living.jpg',
      'https://media.harborview.apartments.test/plans/a1.png',
      'https://media.harborview.apartments.test/photos/exterior.jpg',
      'https://media.harborview.apartments.test/photos/rooftop.jpg',
    ]);
    expect(u102).toMatchObject({
      Availability: 'on_notice',
      AvailableDate: '2027-01-31',
      Floorplan: { ID: 'B2', Deposit: '750.00' },
    });
    expect(u103!.Availability).toBe('leased');
    expect(u104).toMatchObject({ Availability: 'available', AvailableDate: '2026-12-01', Floorplan: { ID: 'B2' } });
    expect(u104).not.toHaveProperty('Unit.UnitRent');
    expect(elm).toMatchObject({
      Availability: 'available',
      Floorplan: { ID: 'ELM7-FP', Bathrooms: '2.5' },
      Property: { Type: 'House for Rent' },
    });
    // MITS:-prefixed unit fields (ResMan) read as the plain names
    expect(rv).toMatchObject({
      Floorplan: { ID: 'L1' },
      Unit: { ID: 'L-201', UnitRent: '1475.00', LeasedStatus: 'available', MarketingName: '201' },
    });
    expect(recs.map((r) => r.position.join)).toEqual([
      'property HV100 "Harbor View Apartments", unit 101; floorplan A1 by Unit/FloorplanID; available (UnitLeasedStatus available)',
      'property HV100 "Harbor View Apartments", unit 102; floorplan B2 by Unit/FloorplanID; on_notice (UnitLeasedStatus on_notice)',
      'property HV100 "Harbor View Apartments", unit 103; floorplan A1 by Unit/FloorplanID; leased (UnitLeasedStatus leased)',
      'property HV100 "Harbor View Apartments", unit 104; floorplan "B2 Two Bedroom" by Unit/FloorplanName; available (UnitLeasedStatus not_ready)',
      'property ELM7 "Elm Street Townhome", unit ELM7-1; the property\'s only floorplan (ELM7-FP; the unit names none); available (VacancyClass Unoccupied)',
      'property RV9 "Riverbend Lofts", unit L-201; floorplan L1 by Unit/FloorplanID; available (UnitLeasedStatus available)',
    ]);
    expect(recs[0]!.position).toMatchObject({
      file: 'mits.xml',
      line: 16,
      index: 0,
      ids: { PropertyID: 'HV100', UnitID: '101' },
    });
  });

  it('per floorplan: each floorplan with the count of its available units, the rent range and the earliest date', async () => {
    const { items, error } = await read(await readFile(SAMPLE), { recordPer: 'floorplan' });
    expect(error).toBeUndefined();
    const recs = records(items).map((r) => r.data);
    expect(recs.map((r) => r.Key)).toEqual(['HV100-A1', 'HV100-B2', 'ELM7-ELM7-FP', 'RV9-L1']);
    expect(recs[0]).toMatchObject({
      Availability: 'available',
      AvailableDate: '2026-11-15',
      Floorplan: { UnitsAvailable: '1', RentRange: '1595-1695' },
    });
    expect(recs[1]).toMatchObject({
      Availability: 'available',
      AvailableDate: '2026-12-01',
      Floorplan: { UnitsAvailable: '2', RentRange: '2150-2300' },
    });
    expect(recs[0]).not.toHaveProperty('Unit');
  });
});

describe('readMits on generated feeds', () => {
  it('one record per unit, whatever the chunking; availability as the statuses say', async () => {
    const model = mitsModel({ properties: 5, unitsPerProperty: 22 });
    const text = [...renderMits(model)].join('');
    for (const size of [7, 4096]) {
      const { items, error } = await read(text, { size });
      expect(error).toBeUndefined();
      const recs = records(items);
      expect(recs.map((r) => r.data.Key)).toEqual(model.flatMap((p) => p.units.map((u) => unitKey(p, u))));
      const listed = recs.filter((r) => r.data.Availability !== 'leased').map((r) => r.data.Key);
      expect(listed).toEqual(model.flatMap((p) => p.units.filter(isListed).map((u) => unitKey(p, u))));
    }
  });

  it('a unit naming a floorplan its property lacks keeps its own fields and says so', async () => {
    const model = mitsModel({ properties: 1, unitsPerProperty: 12 });
    const { items } = await read([...renderMits(model)].join(''));
    const u = records(items).find((r) => r.data.Key === 'P100-U112')!;
    expect(u.data.Floorplan).toBeUndefined();
    expect(u.position.join).toContain(
      "floorplan FP9 (Unit/FloorplanID) is not among the property's 4 floorplan(s): no floorplan fields",
    );
  });

  it('every UnitLeasedStatus of the schema, and the fallbacks without one', () => {
    const out = Object.fromEntries(
      LEASED_STATUSES.map((s) => [s, decide(s, undefined, undefined, undefined).availability]),
    );
    expect(out).toEqual({
      available: 'available',
      on_notice: 'on_notice',
      leased: 'leased',
      not_ready: 'available',
      approved: 'leased',
      reserved: 'leased',
      leased_on_notice: 'leased',
      leased_reserved: 'leased',
      other: 'available',
    });
    expect(decide('other', undefined, 'occupied', undefined).availability).toBe('leased');
    expect(decide(undefined, 'Occupied', undefined, '2027-04-30')).toEqual({
      availability: 'on_notice',
      decidedBy: 'VacancyClass Occupied with VacateDate 2027-04-30',
    });
    expect(decide(undefined, 'Occupied', undefined, undefined).availability).toBe('leased');
    expect(decide('On Notice', undefined, undefined, undefined).availability).toBe('on_notice');
  });
});

describe('readMits on hostile input', () => {
  it('a malformed property: its readable units come as errors with their data, none standalone, and the next property is read', async () => {
    const model = mitsModel({ properties: 2, unitsPerProperty: 3 });
    const text = [...renderMits(model)]
      .join('')
      .replace('<MarketingName>102</MarketingName>', '<MarketingName>102</MarketingNam>');
    const { items, error } = await read(text);
    expect(error).toBeUndefined();
    const errors = items.filter((i) => i.kind === 'error');
    expect(errors.map((e) => e.kind === 'error' && [e.data?.Key, e.standalone])).toEqual([
      ['P100-U101', undefined],
      ['P100-U102', undefined],
      ['P100-U103', undefined],
    ]);
    expect(errors[0]!.kind === 'error' && errors[0]!.error.message).toMatch(
      /malformed <Property> record: <\/MarketingNam>/,
    );
    expect(records(items).map((r) => r.data.Key)).toEqual(['P101-U101', 'P101-U102', 'P101-U103']);
  });

  it('a property larger than maxPropertyChars fails the read naming its line', async () => {
    const model = mitsModel({ properties: 2, unitsPerProperty: 40 });
    const { items, error } = await read([...renderMits(model)].join(''), { maxPropertyChars: 4096 });
    expect(items).toHaveLength(0);
    expect(error).toBeInstanceOf(FeedReadError);
    expect(error!.message).toMatch(/the <Property> record starting on line 3 is longer than 4096 characters/);
  });

  it('photos that are not http(s) are left out and counted in the join', async () => {
    const text = [...renderMits(mitsModel({ properties: 1, unitsPerProperty: 1 }))]
      .join('')
      .replace('https://media.mits.test/P100/photos/1.jpg', 'javascript:alert(1)');
    const { items } = await read(text);
    const [u] = records(items);
    expect(u!.data.Photos).not.toContain('javascript:alert(1)');
    expect(u!.position.join).toContain('1 photo(s) without an http(s) Src left out');
  });

  it('a document with no properties yields no records; a truncated one fails the read', async () => {
    expect((await read('<?xml version="1.0"?><PhysicalProperty></PhysicalProperty>')).items).toEqual([]);
    const text = [...renderMits(mitsModel({ properties: 2, unitsPerProperty: 2 }))].join('');
    const cut = await read(text.slice(0, text.length - 200));
    expect(cut.error).toBeInstanceOf(FeedReadError);
  });
});
