// A list page's body as rows, for a page that plainly is a successful one (quickListPage): whatever
// else comes back is undefined, and the client reads it as usual (its errors, its retries). Where
// the page can be cut into its items' bytes (cutListPage), the items are parsed one by one and each
// one's bytes hashed, so the page echo (page-echo.ts) can know them again on the next run; else the
// page is parsed whole. The rows are rowsOf(page's List) either way.
// A page the echo recalls keeps no compared JSON in its rows: it is read from the page's own bytes
// when asked for (comparedOfPageRow), by the same cut and the same toRemote, so it is the string
// decoding gave. Row i is item i on every path that makes a cut page's rows (rowsOf of the items in
// order here; the echo's RowsBuilder loop in item order; a whole answer's rows made from the same bytes).
// A page's identity as an answer (pageSpans) is hashed in spans, not as one run of bytes: the body is
// split at some of the seams between its items (chosen by the next item's ID, so a list shifted by a
// few listings is split at the same seams), each span hashed, and the identity is the hash of those
// hashes. A page the echo does not know whole then finds whole runs of its items by their span's hash
// (ItemChunks) and hashes only the items of the spans it does not find: its bytes are hashed about once,
// not once for the answer and again item by item. The List's edges split too, so its first and last
// items are such spans as well, not spans of the envelope's bytes to hash again item by item.
import { hash } from 'node:crypto';
import { quickListPage } from '../../api/envelope.js';
import { BETWEEN, cutListPage, listBounds, parseListItem, type ListPageCut } from '../../api/list-page-cut.js';
import type { RawBody } from '../../api/types.js';
import type { ListItem } from '../../listing/schema.js';
import { rowsOf, toRemote, type RemoteRows, type RowOptions } from './remote-rows.js';

export interface DecodedPage {
  rows: RemoteRows;
  virtualCount: number;
  /** when the page was cut: the sha1 of each item's bytes (latin1 strings of 20 chars), row by row */
  itemHashes?: string[];
  /** when the page was cut: its identity as an answer (pageSpans), so the page echo can know it again whole */
  pageHash?: string;
  /** when the page was cut: the runs of its items a span of its answer holds (chunksOf), so the page echo can know them again at once */
  chunks?: ItemChunks;
  /**
   * a page recalled from the page echo while compared JSON is kept: its rows have none, it is read
   * from this answer (comparedOfPageRow) where a row is asked for
   */
  raw?: RawBody;
}

export function decodePage(status: number, body: Uint8Array, opts: RowOptions): DecodedPage | undefined {
  const spans = pageSpans(status, body);
  const cut = cutListPage(status, body, spans.seams);
  const items = cut && cutItems(body, cut);
  if (cut && items) {
    return {
      rows: rowsOf(items, opts),
      virtualCount: cut.virtualCount,
      itemHashes: itemHashes(body, cut),
      pageHash: spans.answer,
      chunks: chunksOf(spans, cut),
    };
  }
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
 * An answer's body in spans: span k is bytes [starts[k], ends[k]), with one byte (the `,` of an item
 * seam) between a span and the next, or none at the List's edges (listBounds); digests[k] its sha1
 * (20 chars, latin1).
 */
export interface PageSpans {
  /**
   * the answer's identity: its status and the sha1 of its spans' sha1s and of where the List's edges
   * split. The spans are a function of the body (spanEnds, listBounds), so two answers with the same
   * identity have the same spans, byte for byte, and the same bytes between them, hence the same
   * body: they decode alike (decodePage reads nothing else), and a page seen before can be taken whole.
   */
  answer: string;
  starts: number[];
  ends: number[];
  digests: string[];
  /** where each item seam (BETWEEN) stands in the body, in order (what cutListPage would search for) */
  seams: number[];
}

/**
 * An answer cut into spans at the item seams (`},{"ID":`, the cut's) whose next item's ID ends a span
 * (spanEnds: one ID in eight), wherever they lie in the body (the cut is not needed to know a page
 * whole), and at the List's edges where it has them (listBounds: what the cut would take), each span
 * hashed.
 */
export function pageSpans(status: number, body: Uint8Array): PageSpans {
  const bytes = Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  const starts = [0];
  const ends: number[] = [];
  const seams: number[] = [];
  // the List's edges split too (no byte between the spans there): its first and last items are then
  // spans of whole items (ItemChunks) like the others, not hashed again one by one on a page not known whole
  const edges = listBounds(bytes);
  const edge = [edges?.first ?? -1, edges && edges.close > edges.first ? edges.close : -1];
  let e = 0;
  const cutAt = (at: number) => {
    for (; e < edge.length && edge[e]! <= at; e++) {
      if (edge[e]! < 0 || edge[e] === starts[starts.length - 1]) continue;
      ends.push(edge[e]!);
      starts.push(edge[e]!);
    }
  };
  for (let at = bytes.indexOf(BETWEEN); at >= 0; at = bytes.indexOf(BETWEEN, at + BETWEEN.length)) {
    seams.push(at);
    if (!spanEnds(bytes, at + 2)) continue;
    cutAt(at);
    ends.push(at + 1);
    starts.push(at + 2);
  }
  cutAt(bytes.length);
  ends.push(bytes.length);
  const digests = new Array<string>(starts.length);
  for (let k = 0; k < starts.length; k++) digests[k] = hash('sha1', bytes.subarray(starts[k], ends[k]), 'binary');
  // (each digest is 20 chars: their concatenation, UTF-8 encoded, and where the List's edges split
  // (the spans without a byte between them), name the sequence and so the body)
  const named = `${digests.join('')}${edge[0]},${edge[1]}`;
  return { answer: `${status}:${hash('sha1', named, 'base64')}`, starts, ends, digests, seams };
}

/**
 * Whether the seam before the item that starts at `at` ends a span: one ID in eight, by a
 * multiplicative hash of the ID its bytes start with (IDs are most often consecutive). Any rule of
 * the body's bytes alone keeps the identity sound; this one splits a list at the same items however
 * it is shifted.
 */
function spanEnds(bytes: Uint8Array, at: number): boolean {
  const id = leadingId(bytes, at);
  return id !== undefined && Math.imul(id >>> 0, 0x9e3779b1) >>> 29 === 0;
}

/**
 * The ID an item's bytes start with (`{"ID":` and up to 15 digits, JSON's form of a whole number,
 * then the next member), as JSON.parse reads it; undefined for any other start (then the item is
 * looked up by its hash alone).
 */
export function leadingId(body: Uint8Array, at: number): number | undefined {
  for (let k = 0; k < ID_START.length; k++) if (body[at + k] !== ID_START[k]) return undefined;
  const from = at + ID_START.length;
  let id = 0;
  let i = from;
  for (; i < body.length && i < from + 15; i++) {
    const digit = body[i]! - 0x30;
    if (digit < 0 || digit > 9) break;
    id = id * 10 + digit;
  }
  // (no digit, a leading zero, more than 15 digits or a fraction/exponent: not read here)
  if (i === from || (body[from] === 0x30 && i > from + 1) || body[i] !== 0x2c) return undefined;
  return id;
}
const ID_START = Buffer.from('{"ID":');

/**
 * The spans of a cut page that hold whole items and nothing else (the spans of the envelope's bytes
 * before and after the List do not; nor one that holds envelope bytes where they hold a seam): each one's
 * sha1, its first row and its rows' count. Equal sha1s are equal bytes, and the cut splits those
 * bytes alike wherever they stand in a List, so they are the same items in the same order.
 */
export interface ItemChunks {
  digests: string[];
  /** chunk c: rows rows[2c] ... rows[2c] + rows[2c + 1] - 1 */
  rows: Uint32Array<ArrayBuffer>;
}

export function chunksOf(spans: PageSpans, cut: ListPageCut): ItemChunks {
  const digests: string[] = [];
  const rows: number[] = [];
  const n = cut.starts.length;
  let i = 0;
  for (let k = 0; k < spans.digests.length; k++) {
    const start = spans.starts[k]!;
    const end = spans.ends[k]!;
    while (i < n && cut.starts[i]! < start) i++;
    if (i >= n || cut.starts[i] !== start) continue;
    let j = i;
    while (j < n && cut.ends[j]! < end) j++;
    if (j >= n || cut.ends[j] !== end) continue;
    digests.push(spans.digests[k]!);
    rows.push(i, j - i + 1);
    i = j + 1;
  }
  return { digests, rows: Uint32Array.from(rows) };
}

/** the sha1 of item `i`'s bytes, as a 20-char binary (latin1) string (a Map key without a Buffer per item) */
export function itemHash(body: Uint8Array, cut: ListPageCut, i: number): string {
  return hash('sha1', body.subarray(cut.starts[i]!, cut.ends[i]!), 'binary');
}
