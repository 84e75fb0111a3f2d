// The page echo (page-echo.ts) over runs that follow one another, as a nightly sync pages: each run
// recalls what it can and decodes (and remembers) the rest, and the next run starts from what it
// remembered, in this process or read back from its file. Between runs the list changes as a service's
// list does — listings deleted (every page after shifted), created, changed, changed behind our back
// to bytes we saw elsewhere — and the service may page it in another order or render a page otherwise
// (spaced JSON, members in another order, an envelope member more). Whatever path recalls a page (taken
// whole, or cut and its items found), it must be the plain rule: a page is recalled exactly when it cuts
// and at most a quarter of its items are new to the last run's generation (or its whole answer was seen),
// and then gives the rows, item hashes and answer identity decodePage gives its bytes, without compared JSON.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { cutListPage } from '../../src/api/list-page-cut.js';
import { toListItem } from '../../src/emulator/list-item.js';
import type { ListItem } from '../../src/listing/schema.js';
import { decodePage } from '../../src/sync/remote/page-decode.js';
import { forgetEchoes, pageEcho, type EchoFiles } from '../../src/sync/remote/page-echo.js';
import type { RowOptions } from '../../src/sync/remote/remote-rows.js';
import { listing } from './helpers/listings.js';

const item = (id: number, price: number): ListItem =>
  toListItem({ ...listing(`M${id % 50}`, { SalePrice: price, Description: `d${id % 7}` }), ID: id });

type Render = 'plain' | 'spaced' | 'reordered' | 'extra';
const render = (List: ListItem[], VirtualCount: number, how: Render): string => {
  const answer = (Data: unknown) => ({ Data, Version: '1.0', Success: true, Code: 200, Message: null });
  if (how === 'spaced') return JSON.stringify(answer({ List, VirtualCount }), null, 1);
  if (how === 'reordered') {
    // the first item's members in another order: the cut cannot be the parse's, the page is parsed whole
    const [first, ...rest] = List;
    const turned = first && Object.fromEntries(Object.entries(first).reverse());
    return JSON.stringify(answer({ List: turned ? [turned, ...rest] : [], VirtualCount }));
  }
  return JSON.stringify(
    how === 'extra'
      ? { Other: [{ ID: 1 }, { ID: 2 }], ...answer({ List, VirtualCount }) }
      : answer({ List, VirtualCount }),
  );
};

interface Listed {
  id: number;
  price: number;
}
const listed = fc.record({
  id: fc.oneof(fc.integer({ min: 1, max: 400 }), fc.integer({ min: 0, max: 12 }), fc.constant(2 ** 53 - 1)),
  price: fc.integer({ min: 1, max: 3 }),
});
/** what became of the list before a run: listings dropped, changed, added, moved; pages asked in another order */
const change = fc.record({
  drop: fc.array(fc.nat(), { maxLength: 8 }),
  change: fc.array(fc.nat(), { maxLength: 5 }),
  add: fc.array(fc.record({ at: fc.nat(), l: listed }), { maxLength: 6 }),
  move: fc.array(fc.tuple(fc.nat(), fc.nat()), { maxLength: 2 }),
  size: fc.integer({ min: 1, max: 30 }),
  renders: fc.array(fc.constantFrom<Render>('plain', 'plain', 'plain', 'plain', 'spaced', 'reordered', 'extra'), {
    maxLength: 8,
  }),
  shuffle: fc.nat(),
  fromFile: fc.boolean(),
  /** the list paged in ID order (as the service pages it), or as it stands */
  byId: fc.boolean(),
});

type Change = typeof change extends fc.Arbitrary<infer T> ? T : never;

function changed(list: Listed[], c: Change): Listed[] {
  const after = list.map((l) => ({ ...l }));
  for (const i of c.drop) if (after.length) after.splice(i % after.length, 1);
  for (const i of c.change) if (after.length) after[i % after.length]!.price += 1;
  for (const a of c.add) after.splice(a.at % (after.length + 1), 0, { ...a.l });
  for (const [from, to] of c.move)
    if (after.length) after.splice(to % after.length, 0, ...after.splice(from % after.length, 1));
  return after;
}

/** a file store in memory, the bytes copied as a file holds them */
function memoryFiles(): EchoFiles & { files: Map<string, Uint8Array> } {
  const files = new Map<string, Uint8Array>();
  return {
    files,
    read: async (name) => files.get(name),
    write: async (name, bytes) => void files.set(name, Uint8Array.from(bytes)),
  };
}

/** each item's bytes of a page that cuts, else undefined */
function itemsOf(status: number, bytes: Uint8Array): string[] | undefined {
  const cut = cutListPage(status, bytes);
  if (!cut || !decodePage(status, bytes, { keyBy: 'MLSNumber' })?.itemHashes) return undefined;
  return [...cut.starts].map((s, i) => Buffer.from(bytes.subarray(s, cut.ends[i])).toString('latin1'));
}

const opts: RowOptions = { keyBy: 'MLSNumber', keepOtherKey: true };

describe('page echo: runs after runs', () => {
  it('recalls a page exactly when the plain rule does, with the rows, hashes and identity decodePage gives', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(listed, { maxLength: 120 }),
        fc.array(change, { minLength: 2, maxLength: 4 }),
        async (first, runs) => {
          forgetEchoes();
          const files = memoryFiles();
          let list = first;
          /** the item bytes the last run remembered (of its pages that cut), and the answers it saw whole */
          let knownItems = new Set<string>();
          let knownAnswers = new Set<string>();
          for (const [r, c] of runs.entries()) {
            if (r > 0) list = changed(list, c);
            if (c.fromFile) forgetEchoes();
            const paged = c.byId ? list.toSorted((a, b) => a.id - b.id) : list;
            const items = paged.map((l) => item(l.id, l.price));
            const pages: { status: number; bytes: Uint8Array }[] = [];
            for (let at = 0, p = 0; at < items.length || at === 0; at += c.size, p++) {
              const how = c.renders[p % Math.max(1, c.renders.length)] ?? 'plain';
              pages.push({ status: 200, bytes: Buffer.from(render(items.slice(at, at + c.size), items.length, how)) });
            }
            // (the pages answered in another order: a window of pages in flight comes back as it does)
            const order = pages.map((_, i) => (i + c.shuffle) % pages.length);
            const echo = await pageEcho('SN-RUNS', opts, undefined, files);
            const nextItems = new Set<string>();
            const nextAnswers = new Set<string>();
            let recalledRows = 0;
            for (const i of order) {
              const page = pages[i]!;
              const decoded = decodePage(page.status, page.bytes, opts);
              if (!decoded) {
                // (not plainly a list page: the client reads it, the echo neither recalls nor remembers it)
                expect(echo.recall(page)).toBeUndefined();
                continue;
              }
              const cutItems = itemsOf(page.status, page.bytes);
              const unknown = cutItems?.filter((b) => !knownItems.has(b)).length ?? Infinity;
              const whole = decoded.pageHash !== undefined && knownAnswers.has(decoded.pageHash);
              const recalled = echo.recall(page);
              // (no generation before a run that remembered a row)
              const known = knownItems.size > 0 && (whole || unknown * 4 <= (cutItems?.length ?? 0));
              expect(recalled !== undefined).toBe(known);
              if (recalled) {
                const { compared: _c, ...rows } = decoded.rows;
                expect(recalled.rows).toEqual(rows);
                expect(recalled).toMatchObject({
                  virtualCount: decoded.virtualCount,
                  itemHashes: decoded.itemHashes,
                  pageHash: decoded.pageHash,
                });
                recalledRows += whole ? cutItems!.length : cutItems!.length - unknown;
              } else echo.remember(decoded);
              for (const b of cutItems ?? []) nextItems.add(b);
              if (cutItems && decoded.pageHash !== undefined) nextAnswers.add(decoded.pageHash);
            }
            expect(echo.recalled).toBe(recalledRows);
            await echo.finish();
            // (a run that remembered nothing leaves the last generation as it was)
            if (nextItems.size > 0) {
              knownItems = nextItems;
              knownAnswers = nextAnswers;
            }
          }
        },
      ),
      { numRuns: 200 },
    );
    forgetEchoes();
  });
});
