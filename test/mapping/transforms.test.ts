import { describe, expect, it } from 'vitest';
import { TransformSpec } from '../../src/mapping/config-schema.js';
import {
  compileTransform,
  EN_US_SEPARATORS,
  localeSeparators,
  TransformFailure,
  unitConverter,
} from '../../src/mapping/transforms.js';

const now = () => new Date('2025-03-11T00:00:00Z');
const t = (spec: unknown) => compileTransform(TransformSpec.parse(spec), now);

describe('transforms', () => {
  it('number: plain, grouped, with currency around it; fails on words', () => {
    const f = t('number');
    expect(['350000', ' 1,250,000 ', '$1,250,000', '2.5', '-3', 7].map(f)).toEqual([
      350000, 1250000, 1250000, 2.5, -3, 7,
    ]);
    expect(() => f('three')).toThrow(TransformFailure);
    expect(() => f('1.2.3')).toThrow('number: not a number');
  });

  it('money with a locale: "1.250.000,00 €" in de-DE, and fr-FR spaces', () => {
    expect(t({ name: 'money', locale: 'de-DE' })('1.250.000,00 €')).toBe(1250000);
    expect(t({ name: 'money', locale: 'de-DE' })('1.250')).toBe(1250);
    expect(t({ name: 'money', locale: 'fr-FR' })('1\u202f250\u202f000,50 €')).toBe(1250000.5);
    expect(t('money')('$1,250,000.99')).toBe(1250000.99);
    expect(() => t('money')('Call for price')).toThrow('money: not a number');
  });

  it("a number without a locale reads en-US's separators, as Intl gives them", () => {
    expect(EN_US_SEPARATORS).toEqual(localeSeparators('en-US'));
    expect(t({ name: 'number', locale: 'en-US' })('1,250,000.5')).toBe(t('number')('1,250,000.5'));
  });

  it('integer: whole numbers only', () => {
    expect(t('integer')('1984')).toBe(1984);
    expect(t('integer')('3.0')).toBe(3);
    expect(() => t('integer')('2.5')).toThrow('integer: not a whole number');
  });

  it('boolean: yes/no, true/false, 1/0', () => {
    expect(['Yes', 'n', 'TRUE', '0', true].map(t('boolean'))).toEqual([true, false, true, false, true]);
    expect(() => t('boolean')('maybe')).toThrow(TransformFailure);
  });

  it('split: a list with a separator, blanks dropped', () => {
    expect(t({ name: 'split', separator: '|' })('a.jpg| b.jpg ||c.jpg')).toEqual(['a.jpg', 'b.jpg', 'c.jpg']);
    expect(t('split')('a,b')).toEqual(['a', 'b']);
  });

  it('trim, lowercase, uppercase; element by element on lists', () => {
    expect(t('trim')('  x ')).toBe('x');
    expect(t('lowercase')('ABC')).toBe('abc');
    expect(t('uppercase')(['a', 'b'])).toEqual(['A', 'B']);
  });

  it('days-since: whole days from a date to now', () => {
    expect(t('days-since')('2025-03-01')).toBe(10);
    expect(() => t('days-since')('soon')).toThrow('days-since: not a date');
  });

  it('unit conversion between square feet, square metres and acres', () => {
    expect(unitConverter('sqm', 'sqft')(100)).toBe(1076.39);
    expect(unitConverter('sqft', 'sqm')(1076.39)).toBe(100);
    expect(unitConverter('acres', 'sqft')(0.5)).toBe(21780);
    expect(() => unitConverter('sqm', 'sqft')('100')).toThrow(TransformFailure);
  });
});

describe('round, floor, ceil', () => {
  it('make a decimal whole, from numbers and number text', async () => {
    const { compileTransform } = await import('../../src/mapping/transforms.js');
    const now = () => new Date();
    expect(compileTransform({ name: 'round' }, now)(2.5)).toBe(3);
    expect(compileTransform({ name: 'floor' }, now)('2.5')).toBe(2);
    expect(compileTransform({ name: 'ceil' }, now)('1,200.1')).toBe(1201);
    expect(() => compileTransform({ name: 'round' }, now)('two')).toThrow(/round: not a number/);
  });
});

describe('onInvalid in config', () => {
  it('onInvalid: default without a default to put in is a config error naming both keys', async () => {
    const { MappingConfig } = await import('../../src/mapping/config-schema.js');
    const r = MappingConfig.safeParse({ fields: { ParkingSpots: { from: 'Garage', onInvalid: 'default' } } });
    expect(r.success).toBe(false);
    expect(r.error!.issues[0]!.message).toBe(
      'onInvalid: default needs a value to put in: set fields.ParkingSpots.default or defaults.ParkingSpots',
    );
    expect(
      MappingConfig.safeParse({
        fields: { ParkingSpots: { from: 'Garage', onInvalid: 'default' } },
        defaults: { ParkingSpots: 0 },
      }).success,
    ).toBe(true);
  });
});
