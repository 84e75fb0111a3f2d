// The compared JSON of a page the page echo recalled, read again from the page's bytes
// (comparedOfPageRow), held to the one decoding keeps: for generated list items and ignore sets,
// row i's derived compared JSON is the one decodePage gives row i, and so is a row read through a
// ComparedStore's raw page (the temp file's round trip).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { COMPARED_FIELDS } from '../../src/listing/canonical.js';
import { toListItem } from '../../src/emulator/list-item.js';
import type { ListItem } from '../../src/listing/schema.js';
import { ComparedStore } from '../../src/sync/remote/compared-store.js';
import { comparedOfPageRow, decodePage } from '../../src/sync/remote/page-decode.js';
import type { RemoteRows, RowOptions } from '../../src/sync/remote/remote-rows.js';
import { listing } from './helpers/listings.js';

const envelope = (List: ListItem[], VirtualCount: number) =>
  JSON.stringify({ Data: { List, VirtualCount }, Version: '1.0', Success: true, Code: 200, Message: null });
const text = fc.oneof(
  fc.constantFrom('', ' ', '},{', '}]', '"List":[', 'ü “x” ✓', 'x'.repeat(300)),
  fc.string({ maxLength: 12 }),
);
const item = fc
  .record({
    id: fc.integer({ min: 1, max: 3_000_000_000 }),
    mls: fc.string({ minLength: 1, maxLength: 8 }),
    Description: fc.option(text, { nil: undefined }),
    City: text,
    SalePrice: fc.option(fc.integer({ min: 0, max: 5_000_000 }), { nil: undefined }),
    Bathrooms: fc.constantFrom(1, 1.5, 2.25, 3),
    pool: fc.boolean(),
  })
  .map(({ id, mls, pool, ...patch }) =>
    toListItem({
      ...listing(mls, { ...patch, ...(pool && { ExtensionColumn: [{ Key: 'pool', value: 'yes' }] }) }),
      ID: id,
    }),
  );
const options = fc.record({
  keyBy: fc.constantFrom<'MLSNumber' | 'URL'>('MLSNumber', 'URL'),
  ignore: fc.subarray([...COMPARED_FIELDS]).map((f) => new Set<string>(f)),
  keepCompared: fc.constant(true),
  keepOtherKey: fc.boolean(),
});

const comparedAt = (rows: RemoteRows, i: number) => {
  const c = rows.compared!;
  const s = Buffer.from(c.utf8.subarray(i === 0 ? 0 : c.ends[i - 1], c.ends[i])).toString('utf8');
  return s === '' ? undefined : s;
};

describe('comparedOfPageRow', () => {
  it("derives each row's compared JSON from the page's bytes as decodePage keeps it, directly and through the store's file", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(item, { minLength: 1, maxLength: 12 }),
        options,
        fc.nat(),
        async (items, opts: RowOptions, extra) => {
          const body = new Uint8Array(Buffer.from(envelope(items, items.length + extra)));
          const decoded = decodePage(200, body, opts)!;
          // a cut page (the only kind the echo remembers)
          expect(decoded.pageHash).toBeDefined();
          const store = new ComparedStore({
            readRaw: (status, bytes, row) => comparedOfPageRow(status, bytes, row, opts),
          });
          const page = store.addRaw(200, body);
          // (read from the file once its write is done: the store lets go of the bytes then)
          store.flush();
          while (store.held > 0) await new Promise((resolve) => setImmediate(resolve));
          for (let i = 0; i < items.length; i++) {
            expect(comparedOfPageRow(200, body, i, opts)).toBe(comparedAt(decoded.rows, i));
            expect(store.read(page, i)).toBe(comparedAt(decoded.rows, i));
          }
          store.close();
        },
      ),
      { numRuns: 150 },
    );
  });

  it('refuses a row its page does not hold, rather than give another row', () => {
    const body = new Uint8Array(Buffer.from(envelope([toListItem({ ...listing('A'), ID: 1 })], 1)));
    expect(() => comparedOfPageRow(200, body, 1, { keyBy: 'MLSNumber', keepCompared: true })).toThrow(/row 1/);
  });
});
