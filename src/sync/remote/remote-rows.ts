// What paging keeps of each remote listing (a row): its ID, its key (and the key by the other field),
// the comparison hash of its listed fields and, for dry runs and the change log, the kept compared
// JSON. A page's rows come in columns (RemoteRows), made by one function (rowsOf) whether the page
// is decoded on the main thread or in a worker (page-pool.ts), so both give the same rows. A page
// the page echo recalls is built from remembered rows (RowsBuilder.copy), which keep no compared
// JSON: it is read from the page's bytes when needed (page-decode.ts comparedOfPageRow).
import { comparedOfListItem } from '../../listing/fingerprint.js';
import type { ListItem } from '../../listing/schema.js';
import type { KeyBy } from '../model/plan-types.js';
import { remoteKey } from '../model/remote-key.js';

/** bytes of a comparison hash (sha1) */
export const HASH_BYTES = 20;

/** How a page's listings become rows: the options of fetchRemote that shape them. */
export interface RowOptions {
  keyBy: KeyBy;
  /** fields left out of the comparison hash (the feed's `ignore`) */
  ignore?: ReadonlySet<string>;
  /** keep each listing's compared JSON, in the kept form (comparedOfListItem) */
  keepCompared?: boolean;
  /** keep each listing's key by the other field too */
  keepOtherKey?: boolean;
}

/** One listing as the list endpoint gave it, reduced to what the index keeps. */
export interface RemoteRow {
  id: number;
  key: string;
  otherKey?: string;
  hash: Uint8Array;
  compared?: string;
}

/** The rows of one page, in columns: row i is ids[i], keys[i], hashes[i * HASH_BYTES ...]. */
export interface RemoteRows {
  ids: Float64Array<ArrayBuffer>;
  keys: string[];
  /** with keepOtherKey */
  otherKeys?: string[];
  hashes: Uint8Array<ArrayBuffer>;
  /**
   * with keepCompared: the kept compared JSONs as UTF-8, one after the other (row i ends at
   * ends[i]): what the index stores, and one buffer to move from a worker rather than a string a row
   */
  compared?: { utf8: Uint8Array<ArrayBuffer>; ends: Uint32Array<ArrayBuffer> };
}

/** What the remote side keeps of one list item. */
export function toRemote(item: ListItem, opts: RowOptions): RemoteRow {
  const { hash, kept } = comparedOfListItem(item, opts.ignore, opts.keepCompared);
  const byUrl = opts.keyBy === 'URL';
  return {
    id: item.ID,
    key: remoteKey(item, opts.keyBy),
    ...(opts.keepOtherKey && { otherKey: remoteKey(item, byUrl ? 'MLSNumber' : 'URL') }),
    hash,
    ...(kept !== undefined && { compared: kept }),
  };
}

/** The rows of a page's items (toRemote of each), in columns. */
export function rowsOf(items: readonly ListItem[], opts: RowOptions): RemoteRows {
  const rows = new RowsBuilder(items.length, opts);
  for (const item of items) rows.put(toRemote(item, opts));
  return rows.done();
}

/**
 * A page's rows, built one row at a time: from a list item (put) or copied from another page's rows
 * (copy: a listing the page echo remembers, page-echo.ts; such a page keeps no compared JSON).
 */
export class RowsBuilder {
  readonly #rows: RemoteRows;
  readonly #compared: string[] | undefined;
  #at = 0;

  constructor(n: number, opts: RowOptions) {
    this.#rows = { ids: new Float64Array(n), keys: new Array<string>(n), hashes: new Uint8Array(n * HASH_BYTES) };
    if (opts.keepOtherKey) this.#rows.otherKeys = new Array<string>(n);
    this.#compared = opts.keepCompared ? new Array<string>(n) : undefined;
  }

  put(row: RemoteRow): void {
    const i = this.#at++;
    this.#rows.ids[i] = row.id;
    this.#rows.keys[i] = row.key;
    this.#rows.hashes.set(row.hash, i * HASH_BYTES);
    // both are always there with their option ('' is "none" to the index)
    if (this.#rows.otherKeys) this.#rows.otherKeys[i] = row.otherKey ?? '';
    if (this.#compared) this.#compared[i] = row.compared ?? '';
  }

  /**
   * rows j ... j + count - 1 of `from`, in order: rows made with the same options, none of them
   * keeping compared JSON (a page echo's: page-echo.ts). A run at once: a page the echo knows
   * mostly holds the rows of one page it remembers, in their order.
   */
  copy(from: RemoteRows, j: number, count = 1): void {
    if (this.#compared)
      throw new Error(
        'RowsBuilder.copy: a page echo row has no compared JSON to copy; build the page without keepCompared',
      );
    const i = this.#at;
    if (i + count > this.#rows.ids.length || j + count > from.ids.length)
      throw new Error(`RowsBuilder.copy: ${count} rows from ${j} do not fit`);
    this.#at += count;
    this.#rows.ids.set(from.ids.subarray(j, j + count), i);
    this.#rows.hashes.set(from.hashes.subarray(j * HASH_BYTES, (j + count) * HASH_BYTES), i * HASH_BYTES);
    for (let k = 0; k < count; k++) this.#rows.keys[i + k] = from.keys[j + k]!;
    const other = this.#rows.otherKeys;
    if (other) for (let k = 0; k < count; k++) other[i + k] = from.otherKeys?.[j + k] ?? '';
  }

  done(): RemoteRows {
    if (this.#at !== this.#rows.ids.length)
      throw new Error(`RowsBuilder: ${this.#at} rows put of ${this.#rows.ids.length}`);
    if (this.#compared) this.#rows.compared = packed(this.#compared);
    return this.#rows;
  }
}

function packed(pieces: readonly string[]): { utf8: Uint8Array<ArrayBuffer>; ends: Uint32Array<ArrayBuffer> } {
  const ends = new Uint32Array(pieces.length);
  let total = 0;
  for (let i = 0; i < pieces.length; i++) ends[i] = total += Buffer.byteLength(pieces[i]!);
  const utf8 = new Uint8Array(total);
  const out = Buffer.from(utf8.buffer);
  for (let i = 0; i < pieces.length; i++) out.write(pieces[i]!, i === 0 ? 0 : ends[i - 1]!, 'utf8');
  return { utf8, ends };
}
