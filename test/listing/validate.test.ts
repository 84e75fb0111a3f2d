import { describe, expect, it } from 'vitest';
import { rng } from '../../fixtures/generate.js';
import { ListingCreate, ListingUpdate } from '../../src/listing/schema.js';
import { quickAccept, quickAcceptUpdate, validateListing } from '../../src/listing/validate.js';

const good = {
  SerialNumber: 'SN-1',
  SaleType: 'for_sale',
  Status: 'Active',
  CurrencySymbol: '$',
  PropertyType: 'Condo',
  Bedrooms: 2,
  Bathrooms: 1.5,
  Url: 'https://x.test/1',
  MLSNumber: 'M1',
  YearBuilt: 1990,
  DaysOnMarket: 3,
  LotArea: 0,
  BuildingArea: 900,
  AreaUnit: 'Square Feet',
  Images: ['https://x.test/a.jpg'],
  ParkingSpots: 1,
  Description: ' spaced ',
  ExtensionColumn: [{ Key: 'k', value: 'v' }],
  City: 'Austin',
  Latitude: 30.2,
  Longitude: -97.7,
  SalePrice: 250000,
};

describe('validateListing', () => {
  it('accepts a listing that meets the spec', () => {
    const r = validateListing(good);
    expect(r).toEqual({ ok: true, listing: ListingCreate.parse(good) });
  });

  it('reports every issue with field, value and rule, not only the first', () => {
    const r = validateListing({
      ...good,
      Status: 'Pending',
      Bedrooms: -1,
      YearBuilt: 19.5,
      Url: '  ',
      MLSNumber: undefined,
      Extra: 1,
      Latitude: 91,
      ExtensionColumn: [{ Key: 'k' }],
    });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.issues).toEqual(
      expect.arrayContaining([
        { field: 'Status', value: 'Pending', rule: 'must be one of Active, PreOnMarket, Sold' },
        { field: 'Bedrooms', value: -1, rule: 'must be at least 0' },
        { field: 'YearBuilt', value: 19.5, rule: 'must be a whole number' },
        { field: 'Url', value: '  ', rule: 'must not be empty' },
        { field: 'MLSNumber', value: undefined, rule: 'is required' },
        { field: 'Latitude', value: 91, rule: 'must be at most 90' },
        { field: 'ExtensionColumn[0].value', value: undefined, rule: 'is required' },
        { field: 'Extra', value: 1, rule: 'is not a field of the spec' },
      ]),
    );
    expect(r.issues).toHaveLength(8);
  });

  it("quickAccept (and quickAcceptUpdate) never accept what zod rejects, and give zod's output when they accept", () => {
    const r = rng(42);
    const variants: Array<(c: Record<string, unknown>) => void> = [
      (c) => (c.Status = ['Active', 'Sold', 'Gone', 'active'][Math.floor(r() * 4)]),
      (c) => (c.Bedrooms = [3, -1, NaN, Infinity, '3', 0][Math.floor(r() * 6)]),
      (c) => (c.MLSNumber = ['M1', ' M1', 'M1 ', '', 7][Math.floor(r() * 5)]),
      (c) => (c.YearBuilt = [1990, 999, 3001, 1990.5][Math.floor(r() * 4)]),
      (c) => (c.Images = [['https://x.test/a'], [], [1], 'a', ['a.jpg'], ['javascript:alert(1)']][Math.floor(r() * 6)]),
      (c) => (c.Description = ['ok\nline', 'bell\u0007', 'rlo\u202Eevil', 'x'.repeat(20_001)][Math.floor(r() * 4)]),
      (c) => (c.City = ['Austin', 'esc\u001b[31m', 'tab\there'][Math.floor(r() * 3)]),
      (c) => (c.ParkingSpots = [1, 0.3, 2][Math.floor(r() * 3)]),
      (c) => (c.Url = ['https://x.test/2', 'data:text/html,x', 'http:/x', 'ftp://x.test/'][Math.floor(r() * 4)]),
      (c) =>
        (c.ExtensionColumn = [[{ Key: 'a', value: 'b' }], [{ Key: 'a', value: 'b', x: 1 }], [{ Key: 'a' }]][
          Math.floor(r() * 3)
        ]),
      (c) => delete c[Object.keys(c)[Math.floor(r() * Object.keys(c).length)]!],
      (c) => (c.Tours = ['3D', 'VR', undefined][Math.floor(r() * 3)]),
      (c) => (c.Longitude = [-181, -97, 180][Math.floor(r() * 3)]),
      (c) => (c.Unknown = 'x'),
      (c) => {
        const entries = Object.entries(c).reverse();
        for (const k of Object.keys(c)) delete c[k];
        Object.assign(c, Object.fromEntries(entries));
      },
    ];
    let accepted = 0;
    let updates = 0;
    for (let n = 0; n < 3000; n++) {
      const c: Record<string, unknown> = structuredClone(good);
      for (let k = 0; k < 3; k++) variants[Math.floor(r() * variants.length)]!(c);
      const quick = quickAccept(c);
      const z = ListingCreate.safeParse(c);
      if (quick) {
        accepted++;
        expect(z.success).toBe(true);
        expect(JSON.stringify(quick)).toBe(JSON.stringify(z.data));
      }
      // the client's check of an update: the same listing with a Key and KeyType
      const u = {
        ...c,
        Key: ['M1', ' M1', '', 3][Math.floor(r() * 4)],
        KeyType: ['MLSNumber', 'URL', 'NewOaks', 'mls', undefined][Math.floor(r() * 5)],
      };
      const quickUpdate = quickAcceptUpdate(u);
      const zu = ListingUpdate.safeParse(u);
      if (quickUpdate) {
        updates++;
        expect(zu.success).toBe(true);
        expect(JSON.stringify(quickUpdate)).toBe(JSON.stringify(zu.data));
      }
    }
    expect(accepted).toBeGreaterThan(100);
    expect(updates).toBeGreaterThan(30);
  });

  it("quickAccept takes a key named as Object.prototype's members (toString, __proto__) for the unknown key it is", () => {
    // a body JSON.parse made (the emulator's case): "__proto__" is an own key there, not the prototype
    const { MLSNumber: _left, ...missingOne } = good;
    for (const key of ['toString', 'constructor', 'hasOwnProperty', 'valueOf', '__proto__']) {
      for (const c of [
        JSON.parse(`{${JSON.stringify(good).slice(1, -1)},"${key}":"x"}`),
        JSON.parse(`{${JSON.stringify(missingOne).slice(1, -1)},"${key}":"x"}`),
        JSON.parse(`{"${key}":{},${JSON.stringify(good).slice(1)}`),
      ]) {
        expect(Object.hasOwn(c, key)).toBe(true);
        expect(ListingCreate.safeParse(c).success).toBe(false);
        expect(quickAccept(c)).toBeUndefined();
        expect(quickAcceptUpdate({ ...c, Key: 'M1', KeyType: 'MLSNumber' })).toBeUndefined();
      }
    }
  });
});

describe('validateListing refuses what a chatbot must never show (issue 9.6)', () => {
  const refused = (patch: Record<string, unknown>) => {
    const r = validateListing({ ...good, ...patch });
    expect(quickAccept({ ...good, ...patch })).toBeUndefined();
    if (r.ok) throw new Error(`accepted ${JSON.stringify(patch).slice(0, 100)}`);
    return r.issues;
  };

  it('links over http(s) only, for Url and every image', () => {
    for (const url of [
      'javascript:alert(1)',
      'data:text/html;base64,PHNjcmlwdD4=',
      'file:///etc/passwd',
      'vbscript:x',
      '//evil.test/x',
      'https://x.test/\u0000a',
    ]) {
      expect(refused({ Url: url })[0]).toMatchObject({ field: 'Url', rule: expect.stringMatching(/http\(s\) URL/) });
      expect(refused({ Images: ['https://x.test/ok.jpg', url] })[0]).toMatchObject({ field: 'Images[1]' });
    }
  });

  it('no control or bidi-override characters in text; newlines and tabs only in long text', () => {
    expect(refused({ MLSNumber: 'M\u00001' })[0]).toMatchObject({
      field: 'MLSNumber',
      rule: expect.stringMatching(/control/),
    });
    expect(refused({ City: 'Aus\u001b[2Jtin' })[0]).toMatchObject({ field: 'City' });
    expect(refused({ Address: '1 Main\u0007 St' })[0]).toMatchObject({ field: 'Address' });
    expect(refused({ PropertyType: 'gpj.\u202Eexe' })[0]).toMatchObject({ field: 'PropertyType' });
    expect(refused({ City: 'two\nlines' })[0]).toMatchObject({ field: 'City' });
    expect(refused({ Description: 'ok\u009b31m' })[0]).toMatchObject({
      field: 'Description',
      rule: expect.stringMatching(/newlines and tabs are allowed/),
    });
    expect(validateListing({ ...good, Description: 'line one\nline two\ttabbed\r\n' }).ok).toBe(true);
  });

  it('whole numbers where fields count things, plausible ranges, a Description cap', () => {
    expect(refused({ Bedrooms: 2.5 })[0]).toMatchObject({ field: 'Bedrooms', rule: 'must be a whole number' });
    expect(refused({ ParkingSpots: 0.3 })[0]).toMatchObject({ field: 'ParkingSpots', rule: 'must be a whole number' });
    expect(refused({ DaysOnMarket: 1.5 })[0]).toMatchObject({ field: 'DaysOnMarket', rule: 'must be a whole number' });
    expect(refused({ Bedrooms: 1e6 })[0]).toMatchObject({ field: 'Bedrooms', rule: 'must be at most 1000' });
    expect(refused({ SalePrice: 1e308 })[0]).toMatchObject({
      field: 'SalePrice',
      rule: 'must be at most 1000000000000',
    });
    const issues = refused({ Description: 'x'.repeat(5_000_000) });
    expect(issues[0]).toMatchObject({ field: 'Description', rule: 'must be at most 20000 characters' });
    // the report keeps an excerpt, not the value
    expect(String(issues[0]!.value).length).toBeLessThan(120);
    expect(issues[0]!.value).toMatch(/… \(5000000 chars\)$/);
  });
});
