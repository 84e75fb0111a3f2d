// The chatbot's listings as a sync keeps them while the feed streams by. Per listing only what
// planning needs, in columns (typed arrays) rather than an object per listing, so that a million
// listings cost tens of MB rather than a GB:
// - its NewOaks ID (Float64Array: an integer, maybe past 2^31);
// - its key: the Map's key string, shared by every copy of the key; the key by the other field
//   (URL when keyed by MLSNumber, and back) only when another feed of the chatbot keys by it;
// - the sha1 of its compared JSON (fingerprint.ts), 20 bytes;
// - with `keepCompared` (dry runs and the change log, which name each change old → new) where its
//   compared JSON in the kept form is (values without field names, long ones as their hash: about
//   300 B a listing): a page and a row of a temporary file (compared-store.ts), read again only for
//   a listing that differs or a URL-keyed delete. A decoded page gives its rows' compared JSON
//   (RemoteRows.compared); a page the page echo recalled gives its raw answer, from which a row's
//   compared JSON is derived when read (page-decode.ts comparedOfPageRow);
// - the fingerprint this feed stored for the key (state.ts), read from the stored state where it is
//   asked (planning only ever asks it of keys the chatbot holds; a rerun read beside its paging asks
//   it of few keys once paging is over: copying every stored one in here cost more than its reads).
// RemoteListing objects are made on demand, one key at a time (get / iteration).
import type { RemoteCopies, RemoteListing } from '../model/plan-types.js';
import type { RawBody } from '../../api/types.js';
import type { ListItem } from '../../listing/schema.js';
import { ComparedStore, type NoFile, type RawItemReader, type RawRowReader } from './compared-store.js';
import { HASH_BYTES as HASH, type RemoteRow, type RemoteRows } from './remote-rows.js';

export type { RemoteRow } from './remote-rows.js';
const NONE = -1;
const SEVERAL = -2;

export class RemoteIndex implements RemoteCopies {
  #rows = 0;
  #ids = new Float64Array(1024);
  #hashes = new Uint8Array(1024 * HASH);
  #rounds = new Uint8Array(1024);
  /** 1: the row a record was taken against while paging (takeEarly) */
  #taken = new Uint8Array(1024);
  #keys: string[] = [];
  #otherKeys: Array<string | undefined> | undefined;
  /** compared JSON (keepCompared): the pages' own, and per row its page (NONE: none) and row in it */
  #compared: { pages: ComparedStore; page: Int32Array; row: Int32Array } | undefined;
  /**
   * row of an ID, while paging: a listing seen again (a later pass) replaces its row. Made only once
   * an ID comes that is not past every ID before it (a later pass, a list not in ID order): until
   * then each ID is plainly new, and a list paged once in ID order never builds it.
   */
  #rowOfId: Map<number, number> | undefined;
  /** the largest ID added while #rowOfId is not made */
  #lastId = -Infinity;
  #finished = false;
  #first = new Map<string, number>();
  #next = new Int32Array(0);
  /** this feed's stored fingerprints (attachFingerprints), while planning asks them */
  #stored: ReadonlyMap<string, string> | undefined;
  /** key → its one row paged so far in the first pass (SEVERAL: more than one); dropped by a second pass and by finish */
  #firstPass: Map<string, number> | undefined = new Map();
  /** keys the first pass marked SEVERAL: while none, its map is the finished index's (finish) */
  #passNotOne = 0;
  /** keys with more than one copy, once paging is over */
  #several: string[] = [];
  /** who waits for the next page (rowsAdded) */
  #waiting: Array<() => void> = [];
  /** rows kept with an empty key (in `count`, not in the keys) */
  #unkeyed = 0;
  /** rows in the index (listings with an empty key aside are still counted in `count`) */
  count = 0;

  constructor(
    readonly opts: {
      keepCompared?: boolean;
      keepOtherKey?: boolean;
      /** bytes of pages kept in memory; past them they go to a file (default 0: every page in the file; compared-store.ts) */
      comparedMemoryBytes?: number;
      /** how a row of a raw page (addRows with `raw`) becomes its compared JSON (page-decode.ts comparedOfPageRow with the paging's row options) */
      readRaw?: RawRowReader;
      /** how a row of a raw page becomes its whole list item (page-decode.ts listItemOfPageRow): item() */
      readItem?: RawItemReader;
      /** where that file is made (default the system's temporary folder) */
      spillDir?: string;
      /** told once when that file cannot be made or written (compared-store.ts onNoFile) */
      onNoFile?: (failure: NoFile) => void;
    } = {},
  ) {
    if (opts.keepOtherKey) this.#otherKeys = [];
    if (opts.keepCompared)
      this.#compared = {
        pages: new ComparedStore({
          memoryBytes: opts.comparedMemoryBytes ?? 0,
          ...(opts.spillDir !== undefined && { dir: opts.spillDir }),
          ...(opts.readRaw && { readRaw: opts.readRaw }),
          ...(opts.readItem && { readItem: opts.readItem }),
          ...(opts.onNoFile && { onNoFile: opts.onNoFile }),
        }),
        page: new Int32Array(1024).fill(NONE),
        row: new Int32Array(1024),
      };
  }

  /** Adds (or, for an ID seen before, replaces) one listing read in pass `round`. */
  add(row: RemoteRow, round: number): void {
    const utf8 = row.compared === undefined ? undefined : new Uint8Array(Buffer.from(row.compared));
    this.#put(
      row.id,
      row.key,
      row.otherKey,
      row.hash,
      0,
      utf8 && this.#compared?.pages.add({ utf8, ends: Uint32Array.of(utf8.byteLength) }),
      0,
      round,
    );
  }

  /**
   * add() of each row of a page, in order; returns how many of their IDs were new to pass `round`.
   * `raw`: the page's answer, where rows without compared JSON (the page echo's) have it read from.
   */
  addRows(rows: RemoteRows, round: number, raw?: RawBody): number {
    let fresh = 0;
    const page = this.#page(rows, raw);
    for (let i = 0; i < rows.ids.length; i++) {
      fresh += this.#put(rows.ids[i]!, rows.keys[i]!, rows.otherKeys?.[i], rows.hashes, i * HASH, page, i, round);
    }
    this.#wake();
    return fresh;
  }

  /**
   * While the first pass pages (a feed read beside it: read-feed.ts): the row and comparison hash
   * of the one copy of `key` paged so far; 'not yet' when none has been; 'not one' when there are several
   * or a later pass began (the first pass's rows may then be replaced: only the finished index says).
   * A later page may still bring another copy of the key: severalCopies() names those at the end.
   */
  pagedCopy(key: string): { row: number; hash: Uint8Array } | 'not yet' | 'not one' {
    const first = this.#firstPass;
    if (!first || key === '') return 'not one';
    const r = first.get(key);
    if (r === undefined) return 'not yet';
    return r === SEVERAL ? 'not one' : { row: r, hash: this.#hashes.subarray(r * HASH, r * HASH + HASH) };
  }

  /** A record was taken against this row of pagedCopy while paging: takenCopy names it once paging is over. */
  takeEarly(row: number): void {
    this.#taken[row] = 1;
  }

  /** The NewOaks ID of the copy of `key` a record was taken against while paging (takeEarly), once paging is over. */
  takenCopy(key: string): number | undefined {
    for (let r = this.#first.get(key) ?? NONE; r !== NONE; r = this.#next[r]!)
      if (this.#taken[r] === 1) return this.#ids[r];
    return undefined;
  }

  /** The keys of the rows added since the first `row` rows, in the order they came (none once paging is over). */
  keysSince(row: number): readonly string[] {
    return this.#finished ? [] : this.#keys.slice(row, this.#rows);
  }

  /** Resolves when the next page's rows are in, or paging ends (finish or close). */
  rowsAdded(): Promise<void> {
    return new Promise((resolve) => this.#waiting.push(resolve));
  }

  /** Keys the chatbot holds more than once (once paging is over). */
  severalCopies(): readonly string[] {
    return this.#several;
  }

  #wake(): void {
    for (const wake of this.#waiting.splice(0)) wake();
  }

  /** a page's compared JSONs, or its answer, kept (when the index keeps them): its number */
  #page(rows: RemoteRows, raw: RawBody | undefined): number | undefined {
    const store = this.#compared?.pages;
    if (!store) return undefined;
    if (rows.compared) return store.add(rows.compared);
    return raw && store.addRaw(raw.status, raw.bytes);
  }

  /** compared JSONs kept in a file (pages; tests) */
  get spilledPages(): number {
    return this.#compared?.pages.spilled ?? 0;
  }

  /** The run is done with the index: the file of compared JSON is closed (idempotent; the index is not read after). */
  close(): void {
    this.#compared?.pages.close();
    this.#firstPass = undefined;
    this.#wake();
  }

  /** `page`, `row`: where the kept compared JSON is (#page). Returns 1 when `id` is new to pass `round`, else 0. */
  #put(
    id: number,
    key: string,
    otherKey: string | undefined,
    hashes: Uint8Array,
    at: number,
    page: number | undefined,
    row: number,
    round: number,
  ): number {
    if (this.#finished) throw new Error('RemoteIndex.add after finish');
    let r: number | undefined;
    if (this.#rowOfId === undefined && id > this.#lastId) this.#lastId = id;
    else r = this.#idRows().get(id);
    const fresh = r === undefined || this.#rounds[r] !== round ? 1 : 0;
    const keyBefore = r === undefined ? undefined : this.#keys[r];
    const newRow = r === undefined;
    if (r === undefined) {
      r = this.#rows++;
      this.#grow(this.#rows);
      this.#rowOfId?.set(id, r);
    }
    this.#ids[r] = id;
    // (byte by byte: a subarray to set() from was a view object a row, 100k of them a paging of 100k)
    const to = this.#hashes;
    for (let k = 0, o = r * HASH; k < HASH; k++) to[o + k] = hashes[at + k]!;
    this.#rounds[r] = round;
    this.#keys[r] = key;
    if (newRow) this.#notePassNew(key, r, round);
    else this.#notePass(key, r, round, keyBefore);
    if (this.#otherKeys) this.#otherKeys[r] = otherKey;
    if (this.#compared) {
      this.#compared.page[r] = page ?? NONE;
      this.#compared.row[r] = row;
    }
    return fresh;
  }

  /** the row of each ID added so far (made the first time it is needed: #rowOfId) */
  #idRows(): Map<number, number> {
    if (this.#rowOfId) return this.#rowOfId;
    const rows = new Map<number, number>();
    for (let r = 0; r < this.#rows; r++) rows.set(this.#ids[r]!, r);
    this.#rowOfId = rows;
    return rows;
  }

  /** the first pass's rows by key (pagedCopy); a second pass ends it */
  #notePass(key: string, r: number, round: number, keyBefore: string | undefined): void {
    const first = this.#firstPass;
    if (!first) return;
    if (round !== 1) {
      this.#firstPass = undefined;
      return;
    }
    // (a listing read again under another key: what the pass said of its old key no longer holds)
    if (keyBefore !== undefined && keyBefore !== key) this.#notOne(first, keyBefore);
    const had = first.get(key);
    if (had === undefined || had === r) first.set(key, r);
    else this.#notOne(first, key);
  }

  /**
   * #notePass of a row just made: no key of the pass can name it yet, so a key already there is held
   * twice. One look-up of the map instead of two (a get, then a set), on every row of a first pass.
   */
  #notePassNew(key: string, r: number, round: number): void {
    const first = this.#firstPass;
    if (!first) return;
    if (round !== 1) {
      this.#firstPass = undefined;
      return;
    }
    const size = first.size;
    first.set(key, r);
    if (first.size === size) this.#notOne(first, key);
  }

  #notOne(first: Map<string, number>, key: string): void {
    first.set(key, SEVERAL);
    this.#passNotOne++;
  }

  /**
   * Paging is over: keeps every row (`round` undefined: the union of the passes) or those seen in
   * pass `round`, links the copies of each key in ID order, and frees what paging alone needed.
   */
  finish(round?: number): this {
    if (!((round === undefined || round === 1) && this.#takeFirstPass())) this.#link(round);
    this.#finished = true;
    // (the last pages of compared JSON to their file: the run does not hold them to its end)
    this.#compared?.pages.flush();
    this.#rowOfId = undefined;
    this.#keys = [];
    this.#rounds = new Uint8Array(0);
    this.#firstPass = undefined;
    this.#wake();
    return this;
  }

  /**
   * finish for a list paged in one pass with one copy of every key: the first pass's map of keys
   * (pagedCopy) is the index's, every row kept and alone (the plain #link gives the same, by the
   * property test; it would build that map again).
   */
  #takeFirstPass(): boolean {
    const pass = this.#firstPass;
    if (!pass || this.#passNotOne > 0) return false;
    // (a key held once: the pass's map has one row of each)
    this.#unkeyed = pass.delete('') ? 1 : 0; // nothing to match it by: left alone
    this.#first = pass;
    this.#next = new Int32Array(this.#rows).fill(NONE);
    this.count = this.#rows;
    return true;
  }

  /** The rows kept (of pass `round`, or all), the copies of each key linked in ID order. */
  #link(round: number | undefined): void {
    const keep: number[] = [];
    for (let r = 0; r < this.#rows; r++) if (round === undefined || this.#rounds[r] === round) keep.push(r);
    const ids = this.#ids;
    let sorted = true;
    for (let i = 1; i < keep.length && sorted; i++) sorted = ids[keep[i - 1]!]! < ids[keep[i]!]!;
    if (!sorted) keep.sort((a, b) => ids[a]! - ids[b]!);
    this.#next = new Int32Array(this.#rows).fill(NONE);
    // the last copy linked of each key, by the key's first row (one map of keys, not two)
    const tail = new Int32Array(this.#rows);
    for (const r of keep) {
      const key = this.#keys[r]!;
      if (key === '') {
        this.#unkeyed++;
        continue; // nothing to match it by: left alone
      }
      const first = this.#first.get(key);
      if (first === undefined) {
        this.#first.set(key, r);
        tail[r] = r;
      } else {
        this.#next[tail[first]!] = r;
        // (its second copy: the key is held more than once)
        if (tail[first] === first) this.#several.push(key);
        tail[first] = r;
      }
    }
    this.count = keep.length;
  }

  get size(): number {
    return this.#first.size;
  }

  has(key: string): boolean {
    return this.#first.has(key);
  }

  keys(): IterableIterator<string> {
    return this.#first.keys();
  }

  get(key: string): RemoteListing[] | undefined {
    let r = this.#first.get(key);
    if (r === undefined) return undefined;
    const out: RemoteListing[] = [];
    for (; r !== NONE; r = this.#next[r]!) out.push(this.#listing(r, key));
    return out;
  }

  *[Symbol.iterator](): IterableIterator<[string, RemoteListing[]]> {
    for (const key of this.#first.keys()) yield [key, this.get(key)!];
  }

  /** The comparison hashes of the key's copies, in ID order (none: the index does not hold it): what a feed's seal digests (settle/seal.ts listDigest). */
  hashesOf(key: string): Uint8Array[] {
    const first = this.#first.get(key);
    return first === undefined ? [] : this.hashesFrom(first);
  }

  /** hashesOf from the row of the key's first copy (keysInOrder's `rows`) */
  hashesFrom(first: number): Uint8Array[] {
    const out: Uint8Array[] = [];
    for (let r = first; r !== NONE; r = this.#next[r]!) out.push(this.#hashes.subarray(r * HASH, r * HASH + HASH));
    return out;
  }

  /**
   * Every key sorted as Array.prototype.sort sorts strings (by UTF-16 code units), each with the row
   * of its first copy (hashesFrom), once paging is over: what a seal digests, without a look-up of
   * each key. The keys and rows are taken together from the map and their order sorted by key. A
   * million keys sorted, then each looked up in the map, took 0.76-0.92 s in key order, 1.2 s
   * nearly so (shuffled 16 at a time), 1.1-2.0 s shuffled; their order sorted 0.11-0.13 s, 0.38-0.62 s
   * and 1.0-1.5 s (Node 24, a shared host at a load of 6-7): the look-ups were most of it. With a
   * sorted copy of the keys made beside them, a million keys held 70 MB more heap than the plain sort
   * and its look-ups; put in order in place (the order's cycles followed), about 8 MB less (104-107
   * against 114-115 MB after, load 5).
   */
  keysInOrder(): { keys: string[]; rows: Int32Array } {
    const n = this.#first.size;
    const keys: string[] = [];
    const firsts = new Int32Array(n);
    for (const [key, r] of this.#first) firsts[keys.push(key) - 1] = r;
    const order: number[] = [];
    for (let i = 0; i < n; i++) order.push(i);
    // (keys of a map are distinct: 0 only for an element against itself)
    order.sort((a, b) => (keys[a]! < keys[b]! ? -1 : keys[a]! > keys[b]! ? 1 : 0));
    const rows = new Int32Array(n);
    for (let i = 0; i < n; i++) rows[i] = firsts[order[i]!]!;
    // the keys put in that order where they are (one array of a million keys, not two), each cycle of the order in turn
    for (let i = 0; i < n; i++) {
      if (order[i]! < 0) continue;
      const start = keys[i]!;
      let at = i;
      for (let from = order[at]!; from !== i; from = order[at]!) {
        keys[at] = keys[from]!;
        order[at] = -1;
        at = from;
      }
      keys[at] = start;
      order[at] = -1;
    }
    return { keys, rows };
  }

  /** Listings kept with no key (nothing to match them by: left alone), once paging is over. */
  get unkeyed(): number {
    return this.#unkeyed;
  }

  /** The fingerprints this feed stored (key → fingerprint), read where asked; keys the chatbot does not hold are not answered. */
  attachFingerprints(stored: ReadonlyMap<string, string>): void {
    this.#stored = stored;
  }

  /**
   * The copy of `key` with ID `id` (else the key's first copy) as paging read it, every field the list
   * returned: read again from its page's answer (kept when paging keeps the whole pages: remote.ts).
   * Undefined when the index does not hold the key or kept no answer for its page.
   */
  item(key: string, id?: number): ListItem | undefined {
    const c = this.#compared;
    const first = this.#first.get(key);
    if (!c || first === undefined) return undefined;
    let r = first;
    for (let s = first; s !== NONE; s = this.#next[s]!) if (this.#ids[s] === id) r = s;
    return c.page[r]! === NONE ? undefined : c.pages.item(c.page[r]!, c.row[r]!);
  }

  /** The fingerprints attached, as planning reads them (key → stored fingerprint). */
  readonly fingerprints = {
    get: (key: string): string | undefined => (this.#first.has(key) ? this.#stored?.get(key) : undefined),
  };

  /**
   * What a record stamp is checked against (record-stamp.ts): the comparison hash of the key's one
   * copy and this feed's stored fingerprint; undefined when the key has no copy or several, or no
   * fingerprint. (The same as get(key) and fingerprints.get(key), without making a RemoteListing
   * per record of a rerun.)
   */
  stampInputs(key: string): { hash: Uint8Array; fingerprint: string } | undefined {
    const r = this.#first.get(key);
    if (r === undefined || this.#next[r] !== NONE) return undefined;
    const fingerprint = this.#stored?.get(key);
    return fingerprint === undefined
      ? undefined
      : { hash: this.#hashes.subarray(r * HASH, r * HASH + HASH), fingerprint };
  }

  /** Planning is over: the fingerprints are not asked any more. */
  dropFingerprints(): void {
    this.#stored = undefined;
  }

  #listing(r: number, key: string): RemoteListing {
    const readCompared = () => this.#readCompared(r);
    return {
      id: this.#ids[r]!,
      key,
      ...(this.#otherKeys && { otherKey: this.#otherKeys[r] }),
      hash: this.#hashes.subarray(r * HASH, r * HASH + HASH),
      // read (and decoded) only for a listing that differs
      get compared() {
        return readCompared();
      },
    };
  }

  #grow(rows: number): void {
    if (rows <= this.#ids.length) return;
    const size = this.#ids.length * 2;
    this.#ids = grown(this.#ids, new Float64Array(size));
    this.#hashes = grown(this.#hashes, new Uint8Array(size * HASH));
    this.#rounds = grown(this.#rounds, new Uint8Array(size));
    this.#taken = grown(this.#taken, new Uint8Array(size));
    const c = this.#compared;
    if (c) {
      c.page = grown(c.page, new Int32Array(size).fill(NONE));
      c.row = grown(c.row, new Int32Array(size));
    }
  }

  #readCompared(r: number): string | undefined {
    const c = this.#compared;
    return c && c.page[r]! !== NONE ? c.pages.read(c.page[r]!, c.row[r]!) : undefined;
  }
}

function grown<T extends Float64Array | Uint8Array | Int32Array>(from: T, to: T): T {
  to.set(from);
  return to;
}
