// A key rule that only copies a column (CompiledMapping.keyColumn) gives, for any text in that
// column, the key keyOf reads from the whole record: the column's text as keyOfText takes it. The
// sync reads a CSV record's key that way without building its data (mapping/item-key.ts).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileMapping, keyOfText } from '../../src/mapping/compile.js';
import { MappingConfig } from '../../src/mapping/config-schema.js';

const text = fc
  .array(
    fc.constantFrom(
      'A',
      'b',
      '1',
      ' ',
      '\t',
      '\r\n',
      '\u00a0',
      '\ufeff',
      '\u2003',
      'é',
      '€',
      '"',
      '\u001f',
      '\u0000',
      '-',
      '',
    ),
    { maxLength: 6 },
  )
  .map((a) => a.join(''));
const column = fc.constantFrom('ListingId', 'MLS Number', 'ns:Id', 'a.b');
const rule = fc.oneof(
  column,
  column.map((from) => ({ from })),
  column.map((from) => ({ from: [from] })),
  column.map((from) => ({ from, onInvalid: 'reject' })),
  column.map((from) => ({ from, transform: 'uppercase' })),
  column.map((from) => ({ from, default: 'X' })),
  column.map((from) => ({ from: [from, 'Other'] })),
  column.map((from) => ({ from, when: { SaleType: 'for_rent' } })),
  column.map((from) => ({ template: `{${from}}` })),
);

describe('keyColumn', () => {
  it('a copied column gives the key keyOf gives, for any text in it', () => {
    let copied = 0;
    fc.assert(
      fc.property(
        rule,
        fc.constantFrom<'MLSNumber' | 'URL'>('MLSNumber', 'URL'),
        fc.boolean(),
        fc.dictionary(column, text),
        text,
        (r, keyBy, withDefaults, others, value) => {
          // (the feed's defaults are not the key's: keyOf reads the rule alone)
          const defaults = withDefaults ? { defaults: { MLSNumber: 'D', Url: 'https://d.test/' } } : {};
          const compiled = compileMapping(
            MappingConfig.parse({ fields: { [keyBy === 'URL' ? 'Url' : 'MLSNumber']: r }, ...defaults }),
          );
          const name = compiled.keyColumn[keyBy];
          if (name === undefined) return;
          copied++;
          const record = { ...others, [name]: value };
          expect(keyOfText(value)).toBe(compiled.keyOf(record, keyBy));
        },
      ),
      { numRuns: 3000 },
    );
    expect(copied).toBeGreaterThan(500);
  });

  it('is given only for a rule that copies one top-level column and does nothing else to it', () => {
    const col = (r: unknown) => compileMapping(MappingConfig.parse({ fields: { MLSNumber: r } })).keyColumn.MLSNumber;
    expect([col('ListingId'), col({ from: ['ListingId'] }), col({ from: 'ListingId', onInvalid: 'reject' })]).toEqual([
      'ListingId',
      'ListingId',
      'ListingId',
    ]);
    for (const r of [
      { from: 'a.b' },
      { from: 'x', transform: 'uppercase' },
      { from: 'x', default: 'X' },
      { from: ['x', 'y'] },
      { template: '{x}' },
      { from: 'x', map: { a: 'b' } },
    ])
      expect(col(r)).toBeUndefined();
  });
});
