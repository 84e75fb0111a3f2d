// A list page's body as rows, for a page that plainly is a successful one (quickListPage): whatever
// else comes back is undefined, and the client reads it as usual (its errors, its retries). Where
// the page can be cut into its items' bytes (cutListPage), the items are parsed one by one and each
// one's bytes hashed, so the page echo (page-echo.ts) can know them again on the next run; else the
// page is parsed whole. The rows are rowsOf(page's List) either way.
// A page the echo recalls keeps no compared JSON in its rows: it is read from the page's own bytes
// when asked for (comparedOfPageRow), by the same cut and the same toRemote, so it is the string
// decoding gave. Row i is item i on every path that makes a cut page's rows (rowsOf of the items in
// order here; the echo's RowsBuilder loop in item order; a whole answer's rows made from the same bytes).
import { hash } from 'node:crypto';
import { quickListPage } from '../../api/envelope.js';
import { cutListPage, parseListItem, type ListPageCut } from '../../api/list-page-cut.js';
import type { RawBody } from '../../api/types.js';
import type { ListItem } from '../../listing/schema.js';
import { rowsOf, toRemote, type RemoteRows, type RowOptions } from './remote-rows.js';

export interface DecodedPage {
  rows: RemoteRows;
  virtualCount: number;
  /** when the page was cut: the sha1 of each item's bytes (latin1 strings of 20 chars), row by row */
  itemHashes?: string[];
  /** when the page was cut: its identity as an answer (pageHash), so the page echo can know it again whole */
  pageHash?: string;
  /**
   * a page recalled from the page echo while compared JSON is kept: its rows have none, it is read
   * from this answer (comparedOfPageRow) where a row is asked for
   */
  raw?: RawBody;
}

export function decodePage(status: number, body: Uint8Array, opts: RowOptions): DecodedPage | undefined {
  const cut = cutListPage(status, body);
  const items = cut && cutItems(body, cut);
  if (cut && items)
    return {
      rows: rowsOf(items, opts),
      virtualCount: cut.virtualCount,
      itemHashes: itemHashes(body, cut),
      pageHash: pageHash(status, body),
    };
  // Buffer's decoding, as the client's res.text(): a BOM stays and fails the JSON, as it would there
  const list = quickListPage(status, Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8'));
  return list && { rows: rowsOf(list.List, opts), virtualCount: list.VirtualCount };
}

/**
 * Row `row`'s kept compared JSON of a page kept by its answer (a page the page echo recalled, or any
 * page while the whole listings are kept: remote.ts): item `row` read again (listItemOfPageRow),
 * through toRemote as decoding does.
 */
export function comparedOfPageRow(status: number, body: Uint8Array, row: number, opts: RowOptions): string | undefined {
  return toRemote(listItemOfPageRow(status, body, row), { ...opts, keepCompared: true }).compared;
}

/**
 * Item `row` of a page by its answer, every field as the list gave it: from its cut when it cuts (row
 * i is item i there), else from the page parsed whole (row i is List[i] there) — the two ways
 * decodePage makes rows. Throws for a row the page does not hold (only a bug gets here).
 */
export function listItemOfPageRow(status: number, body: Uint8Array, row: number): ListItem {
  const cut = cutListPage(status, body);
  const fromCut = cut && row < cut.starts.length ? parseListItem(body, cut, row) : undefined;
  // (a page that does not cut, or whose cut does not parse, is decoded whole: the same order)
  const item =
    fromCut ??
    quickListPage(status, Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8'))?.List[row];
  // (the same bytes the rows were made from: only a bug gets here)
  if (!item) throw new Error(`row ${row} cannot be read again from its page's bytes: they no longer hold that item`);
  return item;
}

/** every item of a cut page, parsed; undefined if one is not a plain list item (then the cut was wrong) */
function cutItems(body: Uint8Array, cut: ListPageCut): ListItem[] | undefined {
  const items = new Array<ListItem>(cut.starts.length);
  for (let i = 0; i < items.length; i++) {
    const item = parseListItem(body, cut, i);
    if (!item) return undefined;
    items[i] = item;
  }
  return items;
}

/** the sha1 of each item's bytes (itemHash) */
function itemHashes(body: Uint8Array, cut: ListPageCut): string[] {
  const out = new Array<string>(cut.starts.length);
  for (let i = 0; i < out.length; i++) out[i] = itemHash(body, cut, i);
  return out;
}

/**
 * A page's identity as an answer: its status and the sha1 of its body. Two answers with the same
 * one decode alike (decodePage reads nothing else), so a page seen before can be taken whole.
 */
export function pageHash(status: number, body: Uint8Array): string {
  return `${status}:${hash('sha1', body, 'base64')}`;
}

/** the sha1 of item `i`'s bytes, as a 20-char binary (latin1) string (a Map key without a Buffer per item) */
export function itemHash(body: Uint8Array, cut: ListPageCut, i: number): string {
  return hash('sha1', body.subarray(cut.starts[i]!, cut.ends[i]!), 'binary');
}
