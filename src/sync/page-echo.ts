// What a process remembers of a chatbot's listings from its last paging, so the next one (tonight's
// rerun on the same worker) does not parse and hash again the listings that come back unchanged:
// each remote listing's row (remote-rows.ts) by the sha1 of its bytes in the list page. A row is a
// function of those bytes and the row options alone, so a remembered one is the row the listing
// would give (content-addressed: never stale, only missing). A page is cut into its items' bytes
// (cutListPage); when at most a quarter of them are unknown, those are parsed here and the rest
// copied; else the page is decoded as before (a worker thread) and its rows remembered.
// Bounded: one generation per chatbot and row options (the rows of its last paging; a listing not
// seen again is forgotten), ECHO_ROWS rows in the process at most (the chatbots paged longest ago
// are forgotten first; a chatbot larger than that is not remembered at all).
import { cutListPage, parseListItem } from '../api/list-page-cut.js';
import type { RawBody } from '../api/types.js';
import { itemHash, type DecodedPage } from './page-decode.js';
import { RowsBuilder, toRemote, type RemoteRows, type RowOptions } from './remote-rows.js';

/**
 * Rows remembered in a process, over every chatbot: about 150 B a row, plus its kept compared JSON
 * (about 300 B) when the run keeps them (the change log, dry runs): 200k rows ≈ 30 to 90 MB.
 */
export const ECHO_ROWS = 200_000;
/** a row's place in a generation: page × ROW_SPAN + row (a page of 8 MiB holds far fewer rows) */
const ROW_SPAN = 2 ** 21;

interface Generation {
  pages: RemoteRows[];
  byHash: Map<string, number>;
  rows: number;
}

/** by chatbot and row options, least recently finished first */
const generations = new Map<string, Generation>();

export interface PageEcho {
  /**
   * The page's rows from what the last paging remembered, its unknown items (a quarter at most)
   * parsed; undefined when the page is not cut, or more of it is unknown (decode it, then remember).
   */
  recall(res: RawBody): DecodedPage | undefined;
  /** rows decoded elsewhere, with the hashes of their items' bytes */
  remember(page: DecodedPage): void;
  /** paging is over: what it remembered is the next paging's memory (within the limit) */
  finish(): void;
  /** rows taken from memory so far */
  readonly recalled: number;
}

/** The page echo of one paging of `serialNumber`'s list with these row options; `limit`: rows the process remembers. */
export function pageEcho(serialNumber: string, opts: RowOptions, limit = ECHO_ROWS): PageEcho {
  const name = JSON.stringify([serialNumber, opts.keyBy, [...(opts.ignore ?? [])].sort(), Boolean(opts.keepCompared), Boolean(opts.keepOtherKey)]);
  // limit 0: this paging neither recalls nor remembers, and leaves the memory as it is
  const known = limit > 0 ? generations.get(name) : undefined;
  let next: Generation | undefined = limit > 0 ? { pages: [], byHash: new Map(), rows: 0 } : undefined;
  let outgrown = false;
  let recalled = 0;
  const remember = (rows: RemoteRows, hashes: readonly string[]) => {
    if (!next) return;
    if (next.rows + hashes.length > limit) {
      next = undefined; // too large to remember: forgotten at finish
      outgrown = true;
      return;
    }
    const at = next.pages.push(rows) - 1;
    for (let i = 0; i < hashes.length; i++) next.byHash.set(hashes[i]!, at * ROW_SPAN + i);
    next.rows += hashes.length;
  };
  return {
    recall(res) {
      if (!known) return undefined;
      const cut = cutListPage(res.status, res.bytes);
      if (!cut) return undefined;
      const n = cut.starts.length;
      const hashes = new Array<string>(n);
      const places = new Array<number>(n);
      let unknown = 0;
      for (let i = 0; i < n; i++) {
        hashes[i] = itemHash(res.bytes, cut, i);
        places[i] = known.byHash.get(hashes[i]!) ?? -1;
        // too much of it is new: decoded whole (where its items are hashed again), so stop hashing here
        if (places[i]! < 0 && ++unknown * 4 > n) return undefined;
      }
      const rows = new RowsBuilder(n, opts);
      for (let i = 0; i < places.length; i++) {
        const place = places[i]!;
        if (place >= 0) {
          rows.copy(known.pages[Math.floor(place / ROW_SPAN)]!, place % ROW_SPAN);
          recalled++;
          continue;
        }
        const item = parseListItem(res.bytes, cut, i);
        if (!item) return undefined; // the cut was wrong: the page is decoded whole
        rows.put(toRemote(item, opts));
      }
      const page = { rows: rows.done(), virtualCount: cut.virtualCount, itemHashes: hashes };
      remember(page.rows, hashes);
      return page;
    },
    remember(page) {
      if (page.itemHashes) remember(page.rows, page.itemHashes);
    },
    finish() {
      if (outgrown) generations.delete(name);
      // a paging that learned nothing (every page parsed by the client) leaves the memory as it is
      if (!next || next.rows === 0) return;
      generations.delete(name); // re-set: the most recently finished last
      generations.set(name, next);
      let total = 0;
      for (const g of generations.values()) total += g.rows;
      for (const [other, g] of generations) {
        if (total <= limit) break;
        generations.delete(other);
        total -= g.rows;
      }
    },
    get recalled() {
      return recalled;
    },
  };
}
