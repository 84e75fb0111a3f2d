// A CSV row's text (FeedItem.text) stands for its data in the record stamps: rows of equal text must
// have equal data, whatever their fields hold (the unit separator itself, quotes, JSON-looking
// text), and a different header must give a different text for the same fields.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { headerIdentity, readCsv } from '../../src/feeds/csv/csv-reader.js';
import { rowFields, rowText } from '../../src/feeds/csv/csv-record.js';
import type { FeedItem } from '../../src/feeds/index.js';
import { chunks, collectUntilError } from './helpers.js';

const field = fc.oneof(
  fc.string(),
  fc.constantFrom('\u001f', 'a\u001fb', '"', '["x"]', '', 'C', 'c'),
  fc.string({ unit: 'binary' }),
);

describe('rowText', () => {
  it('gives equal text only to equal rows under equal headers', () => {
    fc.assert(
      fc.property(
        fc.array(fc.string(), { minLength: 1, maxLength: 3 }),
        fc.array(field, { maxLength: 4 }),
        fc.array(field, { maxLength: 4 }),
        fc.boolean(),
        (header, a, b, sameHeader) => {
          const id = headerIdentity(header);
          const other = sameHeader ? id : headerIdentity([...header, 'extra']);
          const same = rowText(id, a) === rowText(other, b);
          expect(same).toBe(sameHeader && JSON.stringify(a) === JSON.stringify(b));
        },
      ),
      { numRuns: 3000 },
    );
  });

  it('gives its fields back (rowFields) in the joined form, and says so when it is not', () => {
    fc.assert(
      fc.property(
        fc.array(fc.string(), { minLength: 1, maxLength: 3 }),
        fc.array(field, { maxLength: 5 }),
        (header, fields) => {
          const text = rowText(headerIdentity(header), fields);
          const back = rowFields(text);
          if (text.startsWith('c')) expect(back).toEqual(fields);
          else expect(back).toBeUndefined();
        },
      ),
      { numRuns: 3000 },
    );
  });

  it('is what the reader hands on with each record, the same for a header read in another order', async () => {
    const read = async (csv: string) =>
      (
        await collectUntilError(
          readCsv(chunks(csv, 7), { label: 'f.csv', delimiter: ',', quote: '"', encoding: 'utf8' }),
        )
      ).items;
    const texts = (items: FeedItem[]) => items.map((i) => (i.kind === 'record' ? i.text : undefined));
    const one = await read('MLSNumber, City\nA1,Austin\n"A2","x\u001fy"\n');
    expect(texts(one)).toEqual([
      rowText(headerIdentity(['MLSNumber', 'City']), ['A1', 'Austin']),
      rowText(headerIdentity(['MLSNumber', 'City']), ['A2', 'x\u001fy']),
    ]);
    // the same fields under swapped columns are other data, so another text
    const swapped = await read('City,MLSNumber\nA1,Austin\n');
    expect(texts(swapped)[0]).not.toBe(texts(one)[0]);
  });
});
