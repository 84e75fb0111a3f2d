// The cut of a list page into its items' bytes (cutListPage, what the page echo hashes) against the
// parse of the whole page (quickListPage): a cut whose items each parse gives exactly the page's
// List, in order, and its VirtualCount; a page whose text would fool a naive cut (an item holding
// `},{`, `}]` or `"List":[`, whitespace between items, a second List) is either cut right or left
// to the parse. decodePage, which cuts where it can, gives the rows rowsOf gives of the parse.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { quickListPage } from '../../src/api/envelope.js';
import { cutListPage, listBounds, parseListItem } from '../../src/api/list-page-cut.js';
import { toListItem } from '../../src/emulator/list-item.js';
import type { ListItem } from '../../src/listing/schema.js';
import { decodePage, pageSpans } from '../../src/sync/remote/page-decode.js';
import { rowsOf } from '../../src/sync/remote/remote-rows.js';
import { listing } from '../sync/helpers/listings.js';

const item = (id: number, Description: string, ExtensionColumn = ''): ListItem => ({
  ...toListItem({ ...listing(`M${id}`, { Description }), ID: id }),
  ExtensionColumn,
});
const envelope = (Data: unknown) => ({ Data, Version: '1.0', Success: true, Code: 200, Message: null });
const bytes = (text: string) => new Uint8Array(Buffer.from(text, 'utf8'));

/** the items a cut gives, each parsed; undefined when there is no cut or an item does not parse */
function cutItems(text: string): { items: ListItem[]; virtualCount: number } | undefined {
  const body = bytes(text);
  const cut = cutListPage(200, body);
  if (!cut) return undefined;
  const items: ListItem[] = [];
  for (let i = 0; i < cut.starts.length; i++) {
    const parsed = parseListItem(body, cut, i);
    if (!parsed) return undefined;
    items.push(parsed);
  }
  return { items, virtualCount: cut.virtualCount };
}

/** text that a naive cut would trip on */
const tricky = fc.constantFrom(
  '',
  'plain',
  '},{',
  '"},{"',
  '}]',
  '"}]',
  '"List":[',
  '{"List":[{"ID":1}]}',
  '\\',
  '\\"',
  ' ',
  'ü “x” ✓',
  '],"VirtualCount":9}',
);
const description = fc
  .array(fc.oneof(tricky, fc.string({ maxLength: 6 })), { maxLength: 4 })
  .map((parts) => parts.join(''));

/** how a page is written out: as the emulator does, or as other servers might */
const layouts: Record<string, (items: ListItem[], virtualCount: number) => string> = {
  compact: (items, virtualCount) => JSON.stringify(envelope({ List: items, VirtualCount: virtualCount })),
  indented: (items, virtualCount) => JSON.stringify(envelope({ List: items, VirtualCount: virtualCount }), null, 1),
  spaced: (items, virtualCount) =>
    `{"Data":{"List":[${items.map((i) => JSON.stringify(i)).join(', ')}],"VirtualCount":${virtualCount}},"Version":"1.0","Success":true,"Code":200,"Message":null}`,
  'data last': (items, virtualCount) =>
    JSON.stringify({
      Version: '1.0',
      Success: true,
      Code: 200,
      Message: null,
      Data: { List: items, VirtualCount: virtualCount },
    }),
  'two Lists': (items, virtualCount) =>
    `{"Data":{"List":[${items.map((i) => JSON.stringify(i)).join(',')}],"VirtualCount":${virtualCount},"List":[]},"Version":"1.0","Success":true,"Code":200,"Message":null}`,
  'List in Message': (items, virtualCount) =>
    JSON.stringify({
      Message: '"List":[',
      Data: { List: items, VirtualCount: virtualCount },
      Version: '1.0',
      Success: true,
      Code: 200,
    }),
  'Version after, with }]': (items, virtualCount) =>
    JSON.stringify({
      Data: { List: items, VirtualCount: virtualCount },
      Success: true,
      Code: 200,
      Message: null,
      Version: 'x}]',
    }),
};

describe('cutListPage', () => {
  it('cuts an emulator page into its items, each parsing to the item', () => {
    const items = [item(1, 'a'), item(2, 'b'), item(3, 'c')];
    const got = cutItems(layouts.compact!(items, 40));
    expect(got).toEqual({ items, virtualCount: 40 });
    expect(cutItems(layouts.compact!([], 0))).toEqual({ items: [], virtualCount: 0 });
  });

  it('never gives other items than the parse, whatever the items hold and however the page is laid out', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(description, description), { maxLength: 5 }),
        fc.constantFrom(...Object.keys(layouts)),
        fc.nat(50),
        (texts, layout, extra) => {
          const items = texts.map(([d, e], i) => item(i + 1, d, e));
          const text = layouts[layout]!(items, items.length + extra);
          const whole = quickListPage(200, text);
          const cut = cutItems(text);
          if (cut) expect(cut).toEqual({ items: whole?.List, virtualCount: whole?.VirtualCount });
          // the seams pageSpans found give the cut a search gives
          const body = bytes(text);
          expect(cutListPage(200, body, pageSpans(200, body).seams)).toEqual(cutListPage(200, body));
          // a compact page with tidy items is always cut (else the echo would never apply)
          if (layout === 'compact' && texts.every(([d, e]) => !/[}\]]/.test(d + e))) expect(cut).toBeDefined();
        },
      ),
      { numRuns: 400 },
    );
  });

  it('leaves a failure, a BOM or a body that is not a page to the parse', () => {
    const good = layouts.compact!([item(1, 'a')], 1);
    expect(cutListPage(500, bytes(good))).toBeUndefined();
    expect(cutListPage(200, bytes('\uFEFF' + good))).toBeUndefined();
    expect(cutListPage(200, bytes(good.replace('"Success":true', '"Success":false')))).toBeUndefined();
    expect(cutListPage(200, bytes('<html>"List":[{}]</html>'))).toBeUndefined();
  });
});

describe('pageSpans', () => {
  it('names an answer by its status and bytes alone: its spans, joined by their seams, are the body', () => {
    // (joined by the `,` of a seam, or by nothing at the List's edges: listBounds)
    fc.assert(
      fc.property(
        fc.array(fc.tuple(description, description, fc.integer({ min: 1, max: 10 ** 9 })), { maxLength: 12 }),
        fc.constantFrom(...Object.keys(layouts)),
        fc.nat(12),
        (texts, layout, drop) => {
          const items = texts.map(([d, e, id]) => item(id, d, e));
          const text = layouts[layout]!(items, items.length);
          const spans = pageSpans(200, bytes(text));
          const body = Buffer.from(text);
          const edges = listBounds(body);
          const joined = spans.starts
            .map((s, k) => {
              if (k === 0) return body.subarray(s, spans.ends[k]).toString();
              const gap = body.subarray(spans.ends[k - 1], s).toString();
              expect(gap).toBe(s === edges?.first || s === edges?.close ? '' : ',');
              return gap + body.subarray(s, spans.ends[k]).toString();
            })
            .join('');
          expect(joined).toBe(text);
          // another body (an item less), or another status, is another answer
          const fewer = layouts[layout]!(items.toSpliced(drop % Math.max(1, items.length), 1), items.length);
          if (fewer !== text) expect(pageSpans(200, bytes(fewer)).answer).not.toBe(spans.answer);
          expect(pageSpans(201, bytes(text)).answer).not.toBe(spans.answer);
          expect(pageSpans(200, bytes(text)).answer).toBe(spans.answer);
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('chunksOf', () => {
  it("puts every item of a compact page in a chunk, its first and last too (the spans split at the List's edges)", () => {
    const items = Array.from({ length: 40 }, (_, i) => item(1000 + i, `d${i}`));
    const text = layouts.compact!(items, items.length);
    const page = decodePage(200, bytes(text), { keyBy: 'MLSNumber' });
    const rows = [...(page?.chunks?.rows ?? [])];
    const covered = rows.filter((_, k) => k % 2 === 1).reduce((sum, n) => sum + n, 0);
    expect(covered).toBe(items.length);
    expect(rows[0]).toBe(0);
  });
});

describe('decodePage', () => {
  it('gives the rows of the parse, cut or not, with the hash of each item when cut', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(description, description), { maxLength: 5 }),
        fc.constantFrom(...Object.keys(layouts)),
        fc.boolean(),
        (texts, layout, keepCompared) => {
          const items = texts.map(([d, e], i) => item(i + 1, d, e));
          const text = layouts[layout]!(items, items.length);
          const opts = { keyBy: 'MLSNumber' as const, keepCompared, keepOtherKey: true };
          const page = decodePage(200, bytes(text), opts);
          const whole = quickListPage(200, text);
          expect(page && { rows: page.rows, virtualCount: page.virtualCount }).toEqual(
            whole && { rows: rowsOf(whole.List, opts), virtualCount: whole.VirtualCount },
          );
          if (page?.itemHashes) expect(page.itemHashes).toHaveLength(items.length);
        },
      ),
      { numRuns: 200 },
    );
  });
});
