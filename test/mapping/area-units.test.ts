// One unit rule for every source of an area (issue 54): whichever field the reso preset's LotArea
// rule (or any order of its fallbacks) reads, the value is converted from that field's own unit to
// the listing's AreaUnit; BuildingArea likewise from LivingAreaUnits. The expectation is computed
// here from the Data Dictionary's meaning of the fields, not from the mapping's code.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileMapping, MappingConfig } from '../../src/mapping/index.js';
import { mapItem } from '../../src/mapping/map-feed.js';
import { RESO_BASE } from './reso-base.js';

type Unit = 'sqft' | 'sqm' | 'acres';
const SQFT: Record<Unit, number> = { sqft: 1, sqm: 10.76391041671, acres: 43560 };
/** LIMITS.area: a converted value above it breaks the listing's rule, so the rule's next source is tried */
const AREA_LIMIT = 1e10;
/** a value no unit makes valid (the RESO reference server's LotSizeArea 3e15) */
const JUNK = 1e15;

const LOT_FIELDS = ['LotSizeArea', 'LotSizeSquareFeet', 'LotSizeAcres'] as const;
type LotField = (typeof LOT_FIELDS)[number];
const OWN_UNIT: Record<Exclude<LotField, 'LotSizeArea'>, Unit> = { LotSizeSquareFeet: 'sqft', LotSizeAcres: 'acres' };

/** How servers spell a unit (display name, OData member name, abbreviation) → its meaning; undefined: not an area unit. */
const UNIT_SPELLINGS: [string, Unit | undefined][] = [
  ['Square Feet', 'sqft'],
  ['SquareFeet', 'sqft'],
  ['Square Meters', 'sqm'],
  ['SquareMeters', 'sqm'],
  ['Acres', 'acres'],
  ['Hectares', undefined],
  ['', undefined],
];
/** LivingAreaUnits → AreaUnit (an area in acres is stated in square feet); absent: Square Feet. */
const LIVING_UNITS: [string | undefined, Unit, 'Square Feet' | 'Square Meters'][] = [
  [undefined, 'sqft', 'Square Feet'],
  ['Square Feet', 'sqft', 'Square Feet'],
  ['SquareMeters', 'sqm', 'Square Meters'],
  ['Square Meters', 'sqm', 'Square Meters'],
  ['Acres', 'acres', 'Square Feet'],
];

const areaValue = fc.oneof(
  fc.constant(undefined),
  fc.constant(null),
  fc.constant(JUNK),
  fc.integer({ min: 0, max: 10_000_000 }).map((n) => n / 100),
  fc.integer({ min: 0, max: 100_000 }).map(String),
);

const lotRecord = fc.record({
  LotSizeArea: areaValue,
  LotSizeUnits: fc.option(fc.constantFrom(...UNIT_SPELLINGS), { nil: undefined }),
  LotSizeSquareFeet: areaValue,
  LotSizeAcres: areaValue,
  living: fc.constantFrom(...LIVING_UNITS),
  // (BuildingArea is required: the record always has one)
  LivingArea: fc.integer({ min: 1, max: 1_000_000 }).map((n) => n / 100),
});
type LotRecord = typeof lotRecord extends fc.Arbitrary<infer T> ? T : never;

const inFeet = (v: number, unit: Unit, to: Unit) => Math.round(((v * SQFT[unit]) / SQFT[to]) * 100) / 100;

/** The unit a lot field's value is in, undefined when the record does not say. */
function unitOf(field: LotField, r: LotRecord): Unit | undefined {
  if (field !== 'LotSizeArea') return OWN_UNIT[field];
  return r.LotSizeUnits?.[1];
}

/** The first of `order` with a value in a known unit that, in the listing's unit, is a usable area; else the default 0. */
function expectedLot(order: readonly LotField[], r: LotRecord, to: Unit): number {
  for (const field of order) {
    const v = r[field];
    const unit = unitOf(field, r);
    if (v === undefined || v === null || unit === undefined) continue;
    const converted = inFeet(Number(v), unit, to);
    if (converted <= AREA_LIMIT) return converted;
  }
  return 0;
}

function recordOf(r: LotRecord): Record<string, unknown> {
  const data: Record<string, unknown> = { ...RESO_BASE, LivingArea: r.LivingArea };
  for (const f of LOT_FIELDS) if (r[f] !== undefined) data[f] = r[f];
  if (r.LotSizeUnits) data.LotSizeUnits = r.LotSizeUnits[0];
  if (r.living[0] !== undefined) data.LivingAreaUnits = r.living[0];
  return data;
}

function mappingFor(order: readonly LotField[] | undefined) {
  const lot =
    order === undefined
      ? {}
      : {
          LotArea: {
            from: [...order],
            unit: {
              from: { LotSizeArea: 'LotSizeUnits', LotSizeSquareFeet: 'sqft', LotSizeAcres: 'acres' },
              to: 'AreaUnit',
            },
            default: 0,
            onInvalid: 'default',
          },
        };
  const url = { Url: { template: 'https://broker.test/l/{ListingId}' } };
  return compileMapping(MappingConfig.parse({ preset: 'reso', fields: { ...url, ...lot } }));
}

/** every order of every non-empty subset of the preset's lot fields */
function fallbackOrders(): LotField[][] {
  const out: LotField[][] = [];
  const walk = (prefix: LotField[], rest: LotField[]) => {
    if (prefix.length) out.push(prefix);
    rest.forEach((f, i) => walk([...prefix, f], [...rest.slice(0, i), ...rest.slice(i + 1)]));
  };
  walk([], [...LOT_FIELDS]);
  return out;
}

function mapped(compiled: ReturnType<typeof mappingFor>, r: LotRecord): Record<string, unknown> {
  const item = mapItem({ kind: 'record', position: { file: 'reso', index: 0 }, data: recordOf(r) }, compiled, {
    serialNumber: 'SN-1',
    keyBy: 'MLSNumber',
  });
  if (item.kind !== 'listing') throw new Error(`expected a listing, got ${JSON.stringify(item)}`);
  return item.listing;
}

describe('areas: every source in its own unit, brought to AreaUnit (issue 54)', () => {
  it('the stock preset: LotArea and BuildingArea equal the chosen field converted to AreaUnit', () => {
    const compiled = mappingFor(undefined);
    fc.assert(
      fc.property(lotRecord, (r) => {
        const [, livingUnit, areaUnit] = r.living;
        const to: Unit = areaUnit === 'Square Meters' ? 'sqm' : 'sqft';
        const listing = mapped(compiled, r);
        expect(listing.AreaUnit).toBe(areaUnit);
        expect(listing.LotArea).toBeCloseTo(expectedLot(LOT_FIELDS, r, to), 2);
        expect(listing.BuildingArea).toBeCloseTo(inFeet(r.LivingArea, livingUnit, to), 2);
      }),
      { numRuns: 400 },
    );
  });

  it.each(fallbackOrders().map((o) => [o.join(' → '), o] as const))('fallback order %s', (_name, order) => {
    const compiled = mappingFor(order);
    fc.assert(
      fc.property(lotRecord, (r) => {
        const to: Unit = r.living[2] === 'Square Meters' ? 'sqm' : 'sqft';
        expect(mapped(compiled, r).LotArea).toBeCloseTo(expectedLot(order, r, to), 2);
      }),
      { numRuns: 150 },
    );
  });

  it('the record of issue 54: a junk LotSizeArea in square feet gives way to LotSizeSquareFeet, in square meters', () => {
    const r: LotRecord = {
      LotSizeArea: JUNK,
      LotSizeUnits: ['Square Feet', 'sqft'],
      LotSizeSquareFeet: 10763.91,
      LotSizeAcres: undefined,
      living: ['Square Meters', 'sqm', 'Square Meters'],
      LivingArea: 100,
    };
    expect(mapped(mappingFor(undefined), r)).toMatchObject({ AreaUnit: 'Square Meters', LotArea: 1000 });
  });
});
