// Reading a key mapping backwards (confirming absences asks the source by the fields a key comes from).
import { describe, expect, it } from 'vitest';
import { FieldRuleObject } from '../../src/mapping/config-schema.js';
import { keySources } from '../../src/mapping/key-sources.js';
import { presetNamed } from '../../src/mapping/presets/registry.js';

const asked = (rule: unknown, key: string) =>
  keySources(FieldRuleObject.parse(rule))?.map((s) => [s.field, s.valueOf(key)]);

describe('keySources', () => {
  it('the RESO preset: ListingId, then ListingKey (the first non-empty wins, so both are asked)', () => {
    expect(keySources(presetNamed('reso').fields.MLSNumber)?.map((s) => [s.field, s.valueOf('ATX1')])).toEqual([
      ['ListingId', 'ATX1'],
      ['ListingKey', 'ATX1'],
    ]);
  });

  it('a one-field template is read backwards; a key it could not have made asks nothing', () => {
    expect(asked({ template: 'https://broker.test/l/{ListingId}' }, 'https://broker.test/l/L-7')).toEqual([
      ['ListingId', 'L-7'],
    ]);
    expect(asked({ template: 'https://broker.test/l/{ListingId}' }, 'https://other.test/x')).toEqual([
      ['ListingId', undefined],
    ]);
  });

  it('rules that cannot be read backwards exactly: none', () => {
    expect(asked({ from: 'ListingId', transform: 'uppercase' }, 'A')).toBeUndefined();
    expect(asked({ from: 'ListingId', map: { a: 'b' } }, 'A')).toBeUndefined();
    expect(asked({ from: 'Listing.Id' }, 'A')).toBeUndefined();
    expect(asked({ template: '{City}-{ListingId}' }, 'A-B')).toBeUndefined();
    expect(asked({ from: 'ListingId', default: 'X' }, 'A')).toBeUndefined();
  });
});
