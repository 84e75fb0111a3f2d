// What a process remembers of a chatbot's listings from its last paging, so the next one (tonight's
// rerun on the same worker) does not parse and hash again the listings that come back unchanged:
// each remote listing's row (remote-rows.ts) by the sha1 of its bytes in the list page. A row is a
// function of those bytes and the row options alone, so a remembered one is the row the listing
// would give (content-addressed: never stale, only missing). A page is cut into its items' bytes
// (cutListPage); when at most a quarter of them are unknown, those are parsed here and the rest
// copied; else the page is decoded as before (a worker thread) and its rows remembered. A page
// whose whole answer was seen before (the same status and body bytes: pageSpans) is taken whole,
// its rows as remembered, without being cut or its items hashed: an unchanged list's rerun.
// A page not known whole (a list shifted by the last run's deletes: every page after the first one
// deleted) is hashed once all the same, in the spans its identity is made of (page-decode.ts
// pageSpans): a span that holds only whole items and was seen before (ItemChunks) is those items,
// found at once; only the items of the other spans (a page's first and last, the ones changed) are
// hashed one by one and looked up: after the item before them, else by their ID where the last
// generation's rows are in ID order (a binary search), else by a map of every item hash. On a 100k
// list shifted by a 1% rerun's deletes (0.2% deleted, 1% changed), recalling every page took about
// 165 ms of CPU against 280 ms when each page was hashed whole and again item by item and every
// item looked up in that map (a microbenchmark of the pages alone, Node 24, load 4-8); the chunks
// make the generation's file about 6% larger.
// A row remembered is the listing's ID, key(s) and comparison hash, never its compared JSON (about
// 300 B a listing, read for a few listings a run): with keepCompared, a recalled page carries its
// own answer (DecodedPage.raw), and the index reads a row's compared JSON from those bytes when
// asked (compared-store.ts, page-decode.ts comparedOfPageRow). So the memory, the files and their
// names are the same whether the run keeps compared JSON or not.
// Bounded: one generation per chatbot and row options (the rows of its last paging; a listing not
// seen again is forgotten), ECHO_ROWS rows in the process at most (the chatbots paged longest ago
// are forgotten first; a chatbot larger than that is not remembered at all), and as many again for
// the pagings under way, together (a run pages a few chatbots at once: past the limit, the paging
// that would pass it remembers nothing this time).
// A process that pages once and exits (`feedsync sync` from cron) starts with nothing remembered:
// given `EchoFiles`, a generation is also kept in a file and read back by the next process. What is
// read back is used only if its checksum, format and code identity (the code that makes rows and
// cuts pages) are the ones of this process, and its shape is whole: a row recalled must be the row
// the listing's bytes give, so a file in doubt is ignored, never trusted.
import { hash } from 'node:crypto';
import { DefaultSerializer, deserialize } from 'node:v8';
import { cutListPage, parseListItem, type ListPageCut } from '../../api/list-page-cut.js';
import { codeIdentity } from '../util/code-identity.js';
import type { RawBody } from '../../api/types.js';
import {
  chunksOf,
  itemHash,
  leadingId,
  pageSpans,
  type DecodedPage,
  type ItemChunks,
  type PageSpans,
} from './page-decode.js';
import { HASH_BYTES, RowsBuilder, toRemote, type RemoteRows, type RowOptions } from './remote-rows.js';

/**
 * Rows remembered in a process, over every chatbot: about 150 B a row, so at most ~180 MB. Enough
 * for a chatbot of a million listings: its no-change rerun took 29 µs of CPU a listing with it
 * against 44 µs when every page was decoded, and peaked lower (944 against 1055 MB; 1M sync
 * bench, 27 Nov 2026).
 */
export const ECHO_ROWS = 1_200_000;
/** a row's place in a generation: page × ROW_SPAN + row (a page of 8 MiB holds far fewer rows) */
const ROW_SPAN = 2 ** 21;

export interface Generation {
  pages: RemoteRows[];
  /** the item hashes of each page, row by row (a page's array shared with the paging that gave it, never changed) */
  pageItems: string[][];
  /** the runs of items of each page a span of its answer holds (page-decode.ts ItemChunks) */
  pageChunks: ItemChunks[];
  /**
   * pageItems the other way round (hash → page × ROW_SPAN + row): made when a paging first needs
   * it (an item of a page not known whole, not found by its ID: hashPlaces), so a rerun whose pages
   * are all known whole, or whose rows are in ID order, never builds a map of every listing
   */
  byHash?: Map<string, number>;
  /** pageChunks the other way round (a chunk's hash → its first row's place and its count): made when a page is not known whole */
  byChunk?: Map<string, { place: number; count: number }>;
  /** the pages in ID order, when their rows are in ID order (a list paged by ID, as the service pages it), null when not: made when first asked (idOrder) */
  idOrder?: IdOrder | null;
  /** pages by their whole answer (pageHash), with the VirtualCount it gave */
  answers: Map<string, Answer>;
  rows: number;
}

interface Answer {
  page: number;
  virtualCount: number;
}

/** by chatbot and row options, least recently finished first */
const generations = new Map<string, Generation>();
/** rows the pagings under way in this process have remembered so far (their next generations), together */
let underWay = 0;

export interface PageEcho {
  /**
   * The page's rows from what the last paging remembered, its unknown items (a quarter at most)
   * parsed; undefined when the page is not cut, or more of it is unknown (decode it, then remember).
   */
  recall(res: RawBody): DecodedPage | undefined;
  /** rows decoded elsewhere, with the hashes of their items' bytes */
  remember(page: DecodedPage): void;
  /** paging is over: what it remembered is the next paging's memory (within the limit), and written to the files */
  finish(): Promise<void>;
  /** paging failed: what it remembered is let go (idempotent; finish after it remembers nothing) */
  abandon(): void;
  /** rows taken from memory so far */
  readonly recalled: number;
}

/**
 * Where generations are kept between processes, by name (the chatbot and row options, as JSON). The
 * edge that implements it (state/echo-files.ts) reports its own failures: a generation not read or
 * not written only costs the next paging its speed.
 */
export interface EchoFiles {
  read(name: string): Promise<Uint8Array | undefined>;
  /** may return before the bytes are on disk (the edge queues them; the paging goes on) */
  write(name: string, bytes: Uint8Array): Promise<void>;
}

/**
 * The page echo of one paging of `serialNumber`'s list with these row options; `limit`: rows the
 * process remembers; `files`: where a generation is read from when this process has none, and
 * written to when the paging finishes.
 */
export async function pageEcho(
  serialNumber: string,
  opts: RowOptions,
  limit = ECHO_ROWS,
  files?: EchoFiles,
): Promise<PageEcho> {
  const name = JSON.stringify([serialNumber, opts.keyBy, [...(opts.ignore ?? [])].sort(), Boolean(opts.keepOtherKey)]);
  // limit 0: this paging neither recalls nor remembers, and leaves the memory as it is
  const known =
    limit > 0
      ? (generations.get(name) ?? (files && readGeneration(name, opts, limit, await files.read(name))))
      : undefined;
  let next: Generation | undefined =
    limit > 0 ? { pages: [], pageItems: [], pageChunks: [], answers: new Map(), rows: 0 } : undefined;
  let outgrown = false;
  let recalled = 0;
  /** rows of this paging counted in underWay */
  let held = 0;
  /** this paging's rows are no longer under way (finished or let go) */
  const release = () => {
    underWay -= held;
    held = 0;
  };
  const drop = () => {
    release();
    next = undefined;
  };
  const remember = ({ rows, itemHashes: hashes, chunks, pageHash: answer, virtualCount }: DecodedPage) => {
    if (!next || !hashes) return;
    // (the pagings under way together: one paging alone, as a run of one chatbot, is held to its own size)
    if (underWay + hashes.length > limit) {
      drop(); // too large to remember: forgotten at finish
      outgrown = true;
      return;
    }
    underWay += hashes.length;
    held += hashes.length;
    const at = next.pages.push(remembered(rows)) - 1;
    next.pageItems.push(hashes);
    next.pageChunks.push(chunks ?? NO_CHUNKS);
    if (answer !== undefined) next.answers.set(answer, { page: at, virtualCount });
    next.rows += hashes.length;
  };
  return {
    recall(res) {
      if (!known) return undefined;
      // (hashed whether or not it is known: a page not known now is remembered by it for the next
      // paging, and its spans are what finds its items)
      const spans = pageSpans(res.status, res.bytes);
      const whole = known.answers.get(spans.answer);
      // the answer seen before, byte for byte: its rows are the ones it gave then (rows are never changed once made)
      const got = whole
        ? {
            page: {
              rows: known.pages[whole.page]!,
              virtualCount: whole.virtualCount,
              itemHashes: known.pageItems[whole.page]!,
              chunks: known.pageChunks[whole.page]!,
              pageHash: spans.answer,
            },
            copied: known.pageItems[whole.page]!.length,
          }
        : recallItems(known, res, spans, opts);
      if (!got) return undefined;
      recalled += got.copied;
      remember(got.page);
      return { ...got.page, ...carried(opts, res) };
    },
    remember,
    async finish() {
      if (outgrown) generations.delete(name);
      release();
      // a paging that learned nothing (every page parsed by the client) leaves the memory as it is
      if (!next || next.rows === 0) return;
      generations.delete(name); // re-set: the most recently finished last
      generations.set(name, next);
      // every row came from the one read (the same listings, unchanged): the file holds it already
      const same = known !== undefined && recalled === next.rows && known.rows === next.rows;
      if (files && !same) await files.write(name, generationBytes(name, next));
      forgetPast(limit);
    },
    abandon: drop,
    get recalled() {
      return recalled;
    },
  };
}

const NO_CHUNKS: ItemChunks = { digests: [], rows: new Uint32Array(0) };

/**
 * A page not known whole: each item found among the known generation's rows, unless more than a
 * quarter of them are new (then, or when the page cannot be cut, undefined: it is decoded whole,
 * where its items are hashed again). The items of a chunk (a span of whole items) seen before are
 * found by its hash, each other item by its own.
 */
function recallItems(
  known: Generation,
  res: RawBody,
  spans: PageSpans,
  opts: RowOptions,
): { page: DecodedPage; copied: number } | undefined {
  const cut = cutListPage(res.status, res.bytes, spans.seams);
  if (!cut) return undefined;
  const n = cut.starts.length;
  const byChunk = chunkPlaces(known);
  const hashes = new Array<string>(n);
  /** each item's place in `known` (-1: not known; NOT_LOOKED: not found by its chunk, looked up by its hash below) */
  const places = new Array<number>(n).fill(NOT_LOOKED);
  const chunks = chunksOf(spans, cut);
  for (let c = 0; c < chunks.digests.length; c++) {
    const seen = byChunk.get(chunks.digests[c]!);
    const first = chunks.rows[2 * c]!;
    const count = chunks.rows[2 * c + 1]!;
    // (the same bytes are the same items: the count only guards against a bug)
    if (!seen || seen.count !== count) continue;
    const items = known.pageItems[Math.floor(seen.place / ROW_SPAN)]!;
    const from = seen.place % ROW_SPAN;
    for (let k = 0; k < count; k++) {
      places[first + k] = seen.place + k;
      hashes[first + k] = items[from + k]!;
    }
  }
  let unknown = 0;
  let next = -1;
  for (let i = 0; i < n; i++) {
    if (places[i] !== NOT_LOOKED) {
      next = placeAfter(known, places[i]!);
      continue;
    }
    const h = itemHash(res.bytes, cut, i);
    hashes[i] = h;
    // (the item after a known one is most often the one after it last time, a list shifted by a
    // few items: checked there first, else looked up; either place holds the same bytes, so the same row)
    const place = next >= 0 && itemAt(known, next) === h ? next : placeOf(known, res.bytes, cut.starts[i]!, h);
    places[i] = place;
    next = place < 0 ? -1 : placeAfter(known, place);
    // too much of it is new: decoded whole (where its items are hashed again), so stop hashing here
    if (places[i]! < 0 && ++unknown * 4 > n) return undefined;
  }
  const rows = pageRowsFrom(known, res.bytes, cut, places, opts);
  // (none: the cut was wrong, the page is decoded whole)
  return (
    rows && {
      page: { rows: rows.rows, virtualCount: cut.virtualCount, itemHashes: hashes, chunks, pageHash: spans.answer },
      copied: rows.copied,
    }
  );
}
const NOT_LOOKED = -2;

/** The generations past `limit` rows in all forgotten, least recently finished first. */
function forgetPast(limit: number): void {
  let total = 0;
  for (const g of generations.values()) total += g.rows;
  for (const [other, g] of generations) {
    if (total <= limit) break;
    generations.delete(other);
    total -= g.rows;
  }
}

/**
 * A cut page's rows, row i from item i in order (so the compared JSON read from the page's bytes for
 * row i is item i's): the remembered ones (`places`, -1: not known) copied, the others parsed. No
 * compared JSON is kept (the page carries its answer instead: carried). Undefined if an item does
 * not parse (the cut was wrong).
 */
function pageRowsFrom(
  known: Generation,
  body: Uint8Array,
  cut: ListPageCut,
  places: readonly number[],
  opts: RowOptions,
): { rows: RemoteRows; copied: number } | undefined {
  const rowOpts: RowOptions = { ...opts, keepCompared: false };
  const rows = new RowsBuilder(places.length, rowOpts);
  let copied = 0;
  for (let i = 0; i < places.length;) {
    const place = places[i]!;
    if (place < 0) {
      const item = parseListItem(body, cut, i);
      if (!item) return undefined;
      rows.put(toRemote(item, rowOpts));
      i++;
      continue;
    }
    // the run of items remembered at consecutive places of one page, copied at once
    const page = Math.floor(place / ROW_SPAN);
    const from = place % ROW_SPAN;
    const remembered = known.pages[page]!;
    let n = 1;
    while (i + n < places.length && places[i + n] === place + n && from + n < remembered.ids.length) n++;
    rows.copy(remembered, from, n);
    copied += n;
    i += n;
  }
  return { rows: rows.done(), copied };
}

/** the item hash at a place of `g` (page × ROW_SPAN + row) */
function itemAt(g: Generation, place: number): string | undefined {
  return g.pageItems[Math.floor(place / ROW_SPAN)]?.[place % ROW_SPAN];
}

/** the place after `place` in `g`'s paging order: the next row, else the next page's first; -1 past the last */
function placeAfter(g: Generation, place: number): number {
  const page = Math.floor(place / ROW_SPAN);
  if (place % ROW_SPAN < g.pageItems[page]!.length - 1) return place + 1;
  return page + 1 < g.pageItems.length ? (page + 1) * ROW_SPAN : -1;
}

/**
 * Where `g` holds the item whose bytes start at `at` of `body` and hash to `h` (page × ROW_SPAN +
 * row), -1 nowhere. Where `g`'s rows are in ID order and the item's bytes start with its ID, among
 * the rows of that ID (a binary search): the same bytes are the same ID, so no other row can hold
 * them. Else by the map of every item hash (made then, once: about 45 ms a 100k listings).
 */
function placeOf(g: Generation, body: Uint8Array, at: number, h: string): number {
  const order = idOrder(g);
  const id = order ? leadingId(body, at) : undefined;
  if (!order || id === undefined) return hashPlaces(g).get(h) ?? -1;
  // the first page whose last ID is not below it, then the rows of that ID from there on
  for (let k = firstNotBelow(order.lastIds, id); k < order.pages.length; k++) {
    const page = order.pages[k]!;
    const { ids } = g.pages[page]!;
    for (let row = firstNotBelow(ids, id); row < ids.length; row++) {
      if (ids[row] !== id) return -1;
      if (g.pageItems[page]![row] === h) return page * ROW_SPAN + row;
    }
  }
  return -1;
}

/** The index of the first of the ascending `values` not below `id` (`values.length` if none): a binary search. */
function firstNotBelow(values: ArrayLike<number>, id: number): number {
  let lo = 0;
  for (let hi = values.length; lo < hi;) {
    const mid = (lo + hi) >>> 1;
    if (values[mid]! < id) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** a generation's pages (not empty) by their first ID, and each one's last ID in that order */
interface IdOrder {
  pages: Int32Array;
  lastIds: Float64Array;
}

/**
 * `g`'s pages in ID order if their rows are in ID order, each page after the one before it (the
 * pages of a paging are remembered as they come back, not in page order), else null; made once
 */
function idOrder(g: Generation): IdOrder | null {
  if (g.idOrder !== undefined) return g.idOrder;
  const pages = Int32Array.from(g.pages.keys()).filter((p) => g.pages[p]!.ids.length > 0);
  pages.sort((a, b) => g.pages[a]!.ids[0]! - g.pages[b]!.ids[0]!);
  const lastIds = new Float64Array(pages.length);
  let last = -Infinity;
  // (indexed loops: iterating a typed array's entries and values made an object a row)
  for (let k = 0; k < pages.length; k++) {
    const { ids } = g.pages[pages[k]!]!;
    for (let i = 0; i < ids.length; i++) {
      if (ids[i]! < last) return (g.idOrder = null);
      last = ids[i]!;
    }
    lastIds[k] = last;
  }
  return (g.idOrder = { pages, lastIds });
}

/** where each item hash of `g` is (page × ROW_SPAN + row), made once, when first asked */
function hashPlaces(g: Generation): Map<string, number> {
  if (g.byHash) return g.byHash;
  const byHash = new Map<string, number>();
  g.pageItems.forEach((hashes, page) => {
    for (let i = 0; i < hashes.length; i++) byHash.set(hashes[i]!, page * ROW_SPAN + i);
  });
  return (g.byHash = byHash);
}

/** where each chunk of `g` is (its first row's page × ROW_SPAN + row, and its count), made once, when first asked */
function chunkPlaces(g: Generation): Map<string, { place: number; count: number }> {
  if (g.byChunk) return g.byChunk;
  const byChunk = new Map<string, { place: number; count: number }>();
  g.pageChunks.forEach(({ digests, rows }, page) => {
    for (let c = 0; c < digests.length; c++)
      byChunk.set(digests[c]!, { place: page * ROW_SPAN + rows[2 * c]!, count: rows[2 * c + 1]! });
  });
  return (g.byChunk = byChunk);
}

/** with keepCompared, a recalled page carries its answer: its rows' compared JSON is read from it (page-decode.ts comparedOfPageRow) */
function carried(opts: RowOptions, res: RawBody): Pick<DecodedPage, 'raw'> {
  return opts.keepCompared ? { raw: res } : {};
}

/** `rows` as a generation holds them: without compared JSON (the arrays shared, not copied) */
function remembered(rows: RemoteRows): RemoteRows {
  const { ids, keys, otherKeys, hashes } = rows;
  return { ids, keys, hashes, ...(otherKeys && { otherKeys }) };
}

/** Forget every generation this process holds (what a new process starts with). */
export function forgetEchoes(): void {
  generations.clear();
}

/**
 * Bump when what a generation file holds changes shape (2: the pages' whole answers; 3: no compared
 * JSON, a name without keepCompared; 4: each page's item hashes as an array, not a map of them all;
 * 5: answers named by their spans, each page's chunks; 6: spans split at the List's edges too).
 */
const FILE_FORMAT = 6;
/** what makes a row from a listing's bytes: the page cut, the row and the hashes of listing/ */
const ROWS_CODE = [
  'api/list-page-cut',
  'sync/remote/remote-rows',
  'sync/model/remote-key',
  'sync/remote/page-decode',
  'listing',
];

/** A generation as a file: the sha1 of the rest, then its v8 serialization with the format and the code's identity. */
export function generationBytes(name: string, g: Generation): Uint8Array {
  // serialize() as it does it, behind 20 bytes the sha1 then fills in: no copy of the whole to put the hash before it
  const ser = new DefaultSerializer();
  ser.writeRawBytes(Buffer.alloc(SHA1_BYTES));
  ser.writeHeader();
  ser.writeValue({
    format: FILE_FORMAT,
    code: codeIdentity(ROWS_CODE),
    name,
    pages: g.pages,
    pageItems: g.pageItems,
    pageChunks: g.pageChunks,
    answers: g.answers,
    rows: g.rows,
  });
  const file = ser.releaseBuffer();
  file.set(hash('sha1', file.subarray(SHA1_BYTES), 'buffer'));
  return file;
}
const SHA1_BYTES = 20;

/** A generation read back, if it is whole, of this format and code, for this name and these options, and within the limit. */
export function readGeneration(
  name: string,
  opts: RowOptions,
  limit: number,
  bytes: Uint8Array | undefined,
): Generation | undefined {
  const v = checkedBody(bytes);
  if (!isRecord(v) || v.format !== FILE_FORMAT || v.code !== codeIdentity(ROWS_CODE) || v.name !== name)
    return undefined;
  const { rows, answers } = v;
  if (typeof rows !== 'number' || rows > limit || !(answers instanceof Map)) return undefined;
  const paged = pagesOf(v, opts);
  if (!paged || paged.pages.reduce((sum, p) => sum + p.ids.length, 0) !== rows) return undefined;
  const known = answersOf(answers, paged.pages.length);
  return known && { pages: paged.pages, pageItems: paged.itemsOf, pageChunks: paged.chunksOf, answers: known, rows };
}

/** The file's body, deserialized, if its sha1 (its first 20 bytes) is the rest's. */
function checkedBody(bytes: Uint8Array | undefined): unknown {
  if (!bytes || bytes.byteLength <= 20) return undefined;
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const body = buf.subarray(20);
  if (!hash('sha1', body, 'buffer').equals(buf.subarray(0, 20))) return undefined;
  try {
    return deserialize(body);
  } catch {
    return undefined; // (a file that does not decode is as none: the pages are asked for)
  }
}

/**
 * The generation's pages, each whole and made with these options, every row's item hash (a 20-byte
 * sha1 as latin1) and each page's chunks (within its rows).
 */
function pagesOf(
  v: Record<string, unknown>,
  opts: RowOptions,
): { pages: RemoteRows[]; itemsOf: string[][]; chunksOf: ItemChunks[] } | undefined {
  const { pageItems, pageChunks } = v;
  if (!Array.isArray(v.pages) || !Array.isArray(pageItems) || pageItems.length !== v.pages.length) return undefined;
  if (!Array.isArray(pageChunks) || pageChunks.length !== v.pages.length) return undefined;
  const pages: RemoteRows[] = [];
  const itemsOf: string[][] = [];
  const chunksOf: ItemChunks[] = [];
  for (const [i, p] of v.pages.entries()) {
    const page = pageRows(p, opts);
    const items: unknown = pageItems[i];
    if (!page || !isStrings(items) || items.length !== page.ids.length || !items.every((h) => h.length === HASH_BYTES))
      return undefined;
    const chunks = chunksWithin(pageChunks[i], items.length);
    if (!chunks) return undefined;
    pages.push(page);
    itemsOf.push(items);
    chunksOf.push(chunks);
  }
  return { pages, itemsOf, chunksOf };
}

/** `c` as a page's chunks, if each is a hash naming rows within the page's `rows` */
function chunksWithin(c: unknown, rows: number): ItemChunks | undefined {
  if (!isRecord(c) || !isStrings(c.digests) || !(c.rows instanceof Uint32Array)) return undefined;
  const { digests } = c;
  const at = view(c.rows, Uint32Array);
  if (!at || at.length !== 2 * digests.length) return undefined;
  for (let k = 0; k < digests.length; k++)
    if (digests[k]!.length !== HASH_BYTES || at[2 * k + 1]! < 1 || at[2 * k]! + at[2 * k + 1]! > rows) return undefined;
  return { digests, rows: at };
}

/** The pages by their whole answer, each naming one of the `pages` pages and a VirtualCount. */
function answersOf(answers: Map<unknown, unknown>, pages: number): Map<string, Answer> | undefined {
  const known = new Map<string, Answer>();
  for (const [h, a] of answers) {
    if (typeof h !== 'string' || !isRecord(a)) return undefined;
    const { page, virtualCount } = a;
    if (typeof page !== 'number' || !Number.isInteger(page) || page < 0 || page >= pages) return undefined;
    if (typeof virtualCount !== 'number' || !Number.isInteger(virtualCount) || virtualCount < 0) return undefined;
    known.set(h, { page, virtualCount });
  }
  return known;
}

/** `p` as a page's rows made with these options, if it is one whole */
function pageRows(p: unknown, opts: RowOptions): RemoteRows | undefined {
  if (!isRecord(p) || !(p.ids instanceof Float64Array) || !(p.hashes instanceof Uint8Array) || !isStrings(p.keys))
    return undefined;
  const n = p.ids.length;
  if (p.keys.length !== n || p.hashes.length !== n * HASH_BYTES) return undefined;
  const ids = view(p.ids, Float64Array);
  const hashes = view(p.hashes, Uint8Array);
  if (!ids || !hashes) return undefined;
  const rows: RemoteRows = { ids, keys: p.keys, hashes };
  if (opts.keepOtherKey) {
    if (!isStrings(p.otherKeys) || p.otherKeys.length !== n) return undefined;
    rows.otherKeys = p.otherKeys;
  } else if (p.otherKeys !== undefined) return undefined;
  // (rows remembered never hold compared JSON)
  if (p.compared !== undefined) return undefined;
  return rows;
}

/**
 * The same bytes as a view of their ArrayBuffer, not a copy: a generation read back keeps the
 * file's bytes (the deserializer's views into them) rather than copying each page, so reading a
 * generation never holds the file and a copy of it at once. Rows are never changed once made.
 */
function view<T extends Float64Array<ArrayBuffer> | Uint8Array<ArrayBuffer> | Uint32Array<ArrayBuffer>>(
  a: ArrayBufferView,
  of: new (buffer: ArrayBuffer, byteOffset: number, length: number) => T,
): T | undefined {
  const per = 'BYTES_PER_ELEMENT' in a && typeof a.BYTES_PER_ELEMENT === 'number' ? a.BYTES_PER_ELEMENT : 1;
  return a.buffer instanceof ArrayBuffer ? new of(a.buffer, a.byteOffset, a.byteLength / per) : undefined;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;
const isStrings = (v: unknown): v is string[] => Array.isArray(v) && v.every((k) => typeof k === 'string');
