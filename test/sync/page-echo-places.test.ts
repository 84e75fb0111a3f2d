// The page echo (page-echo.ts) finds each item of a page it cuts among the items it remembers: first
// at the place after the previous item's (a list shifted by a few listings keeps its order), else by
// the map of every item's hash. Whatever the list became since the paging remembered — listings
// deleted, created, changed, moved, held twice, paged in other pages — a page it recalls must give
// the rows the page decodes to (decodePage, the plain rule), without compared JSON.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { toListItem } from '../../src/emulator/list-item.js';
import type { ListItem } from '../../src/listing/schema.js';
import { decodePage } from '../../src/sync/remote/page-decode.js';
import { forgetEchoes, pageEcho } from '../../src/sync/remote/page-echo.js';
import type { RowOptions } from '../../src/sync/remote/remote-rows.js';
import { listing } from './helpers/listings.js';

const item = (id: number, price: number): ListItem =>
  toListItem({ ...listing(`M${id % 40}`, { SalePrice: price }), ID: id });
const envelope = (List: ListItem[], VirtualCount: number) =>
  JSON.stringify({ Data: { List, VirtualCount }, Version: '1.0', Success: true, Code: 200, Message: null });
const pagesOf = (items: ListItem[], size: number) => {
  const out = [];
  for (let at = 0; at < items.length || at === 0; at += size)
    out.push({ status: 200, bytes: new Uint8Array(Buffer.from(envelope(items.slice(at, at + size), items.length))) });
  return out;
};
const opts: RowOptions = { keyBy: 'MLSNumber', keepOtherKey: true };

/** a list's listings: IDs (a few repeated: a listing paged twice) and prices (a few alike) */
const list = fc.array(fc.record({ id: fc.integer({ min: 1, max: 60 }), price: fc.integer({ min: 1, max: 3 }) }), {
  maxLength: 60,
});
/** what became of the list: listings dropped, changed, added, moved */
const edit = fc.record({
  drop: fc.array(fc.nat(), { maxLength: 6 }),
  change: fc.array(fc.nat(), { maxLength: 4 }),
  add: fc.array(
    fc.record({ at: fc.nat(), id: fc.integer({ min: 1, max: 80 }), price: fc.integer({ min: 1, max: 3 }) }),
    { maxLength: 6 },
  ),
  move: fc.array(fc.tuple(fc.nat(), fc.nat()), { maxLength: 3 }),
});

describe('page echo: the place of each item it knows', () => {
  it('a page recalled after any change to the list gives the rows it decodes to', async () => {
    await fc.assert(
      fc.asyncProperty(
        list,
        edit,
        fc.integer({ min: 1, max: 12 }),
        fc.integer({ min: 1, max: 12 }),
        async (before, e, sizeBefore, sizeAfter) => {
          forgetEchoes();
          const first = await pageEcho('SN-PLACES', opts);
          for (const page of pagesOf(
            before.map((l) => item(l.id, l.price)),
            sizeBefore,
          ))
            first.remember(decodePage(page.status, page.bytes, opts)!);
          await first.finish();
          const after = before.map((l) => ({ ...l }));
          for (const i of e.drop) if (after.length) after.splice(i % after.length, 1);
          for (const i of e.change) if (after.length) after[i % after.length]!.price += 10;
          for (const a of e.add) after.splice(a.at % (after.length + 1), 0, { id: a.id, price: a.price });
          for (const [from, to] of e.move)
            if (after.length) after.splice(to % after.length, 0, ...after.splice(from % after.length, 1));
          const second = await pageEcho('SN-PLACES', opts);
          for (const page of pagesOf(
            after.map((l) => item(l.id, l.price)),
            sizeAfter,
          )) {
            const recalled = second.recall(page);
            if (!recalled) continue; // (decoded as before: more than a quarter of it new)
            const { compared: _c, ...decoded } = decodePage(page.status, page.bytes, opts)!.rows;
            expect(recalled.rows).toEqual(decoded);
          }
          await second.finish();
        },
      ),
      { numRuns: 300 },
    );
    forgetEchoes();
  });
});
