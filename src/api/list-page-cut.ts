// A list page's body cut into the bytes of its items, without parsing them: what lets a rerun know a
// listing it has seen by the hash of its bytes (sync/remote/page-echo.ts) and parse only the others.
// A cut is taken only where it is provably the parse's: the body with its List emptied (the bytes
// before the List's first item, then those after its last) must be a successful list page
// (quickListPage) with an empty List, no `"List"` may follow the items, and each item's bytes must
// parse on their own as one plain list item (parseListItem; the caller's check, as a remembered
// item was parsed when it was remembered). Then JSON's grammar makes the page's List exactly those
// items, in order. Items are cut where one ends and the next begins, `},{"ID":`: a plain item is
// flat and starts with ID, and inside a string those bytes cannot stand (its quotes would be
// escaped), so a valid page has them only between items. A server that puts whitespace between
// items or orders members otherwise gives a cut that fails a check, and the page is parsed whole as
// before. test/api/list-page-cut.test.ts holds it to the parse.
import { quickListPage } from './envelope.js';
import { ListItem, plainListItem } from './schemas.js';

export interface ListPageCut {
  virtualCount: number;
  /** item i is bytes [starts[i], ends[i]) */
  starts: Uint32Array;
  ends: Uint32Array;
}

const LIST = Buffer.from('"List":[');
const LIST_NAME = Buffer.from('"List"');
/** between two items: the end of one, the start of the next (a plain item's first member) */
export const BETWEEN = Buffer.from(`},{${JSON.stringify(Object.keys(ListItem.shape)[0])}:`);
const LAST = Buffer.from('}]');

/**
 * The cut of a list page's body, or undefined when it cannot be shown to be the parse's. `seams`:
 * where BETWEEN stands in the body, each place of it in order, when the caller has found them
 * already (page-decode.ts pageSpans), so the body is not searched again.
 */
export function cutListPage(status: number, body: Uint8Array, seams?: readonly number[]): ListPageCut | undefined {
  const bytes = Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  const bounds = listBounds(bytes);
  if (!bounds) return undefined;
  const { first, close } = bounds;
  const before = bytes.subarray(0, first);
  const after = bytes.subarray(close);
  // a List key after ours would be the one JSON.parse keeps (the last of duplicate keys wins)
  if (after.includes(LIST_NAME)) return undefined;
  const emptied = quickListPage(status, before.toString('utf8') + after.toString('utf8'));
  if (!emptied || emptied.List.length !== 0) return undefined;
  const starts: number[] = [];
  const ends: number[] = [];
  let seam = 0;
  for (let at = first; at < close;) {
    if (seams) while (seam < seams.length && seams[seam]! < at) seam++;
    const next = seams ? (seams[seam] ?? -1) : bytes.indexOf(BETWEEN, at);
    const end = next < 0 || next + 1 >= close ? close : next + 1;
    starts.push(at);
    ends.push(end);
    at = end + 1;
  }
  return { virtualCount: emptied.VirtualCount, starts: Uint32Array.from(starts), ends: Uint32Array.from(ends) };
}

/**
 * Where a cut would put the List's items: from `first` (right after the first `"List":[`) to `close`
 * (its closing bracket: right after the opening one, or after the last `}]` of the body); undefined
 * when there is no such List. Only where it looks so: cutListPage checks the rest.
 */
export function listBounds(bytes: Buffer): { first: number; close: number } | undefined {
  const open = bytes.indexOf(LIST);
  if (open < 0) return undefined;
  const first = open + LIST.length;
  const close = bytes[first] === 0x5d ? first : bytes.lastIndexOf(LAST) + 1;
  if (close < first || (close > first && bytes[first] !== 0x7b)) return undefined;
  return { first, close };
}

/** Item `i` of a cut page, parsed: undefined unless its bytes are one plain list item. */
export function parseListItem(body: Uint8Array, cut: ListPageCut, i: number): ListItem | undefined {
  const text = Buffer.from(body.buffer, body.byteOffset + cut.starts[i]!, cut.ends[i]! - cut.starts[i]!).toString(
    'utf8',
  );
  let item: unknown;
  try {
    item = JSON.parse(text);
  } catch {
    return undefined; // (not JSON: as not a plain item; the caller reads the page the general way)
  }
  return plainListItem(item) ? item : undefined;
}
