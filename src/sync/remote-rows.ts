// What paging keeps of each remote listing (a row): its ID, its key (and the key by the other field),
// the comparison hash of its listed fields and, for dry runs and the change log, the kept compared
// JSON. A page's rows come in columns (RemoteRows), made by one function (rowsOf) whether the page
// is decoded on the main thread or in a worker (page-pool.ts), so both give the same rows.
import { comparedOfListItem } from '../listing/fingerprint.js';
import type { ListItem } from '../listing/schema.js';
import type { KeyBy } from './plan-types.js';

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

export function remoteKey(item: Pick<ListItem, 'MLSNumber' | 'Url'>, keyBy: KeyBy): string {
  return (keyBy === 'URL' ? item.Url : item.MLSNumber).trim();
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
  const n = items.length;
  const rows: RemoteRows = { ids: new Float64Array(n), keys: new Array<string>(n), hashes: new Uint8Array(n * HASH_BYTES) };
  if (opts.keepOtherKey) rows.otherKeys = new Array<string>(n);
  const compared = opts.keepCompared ? new Array<string>(n) : undefined;
  for (let i = 0; i < n; i++) {
    const row = toRemote(items[i]!, opts);
    rows.ids[i] = row.id;
    rows.keys[i] = row.key;
    rows.hashes.set(row.hash, i * HASH_BYTES);
    // both are always there with their option ('' is "none" to the index)
    if (rows.otherKeys) rows.otherKeys[i] = row.otherKey ?? '';
    if (compared) compared[i] = row.compared ?? '';
  }
  if (compared) rows.compared = packed(compared);
  return rows;
}

function packed(strings: readonly string[]): { utf8: Uint8Array<ArrayBuffer>; ends: Uint32Array<ArrayBuffer> } {
  const ends = new Uint32Array(strings.length);
  let total = 0;
  for (let i = 0; i < strings.length; i++) ends[i] = total += Buffer.byteLength(strings[i]!);
  const utf8 = new Uint8Array(total);
  const out = Buffer.from(utf8.buffer);
  for (let i = 0; i < strings.length; i++) out.write(strings[i]!, i === 0 ? 0 : ends[i - 1]!, 'utf8');
  return { utf8, ends };
}
