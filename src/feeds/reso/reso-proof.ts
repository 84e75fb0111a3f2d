// What an incremental keyset pull proves before its mark moves (issue 35). A page that looks ordered
// proves nothing: a server that ignores `$orderby` and answers a time-filtered query in key order can
// look time-ordered page by page while the (ModificationTimestamp, key) cursor jumps past earlier
// changes on later keys. So once a keyset pull asked more than one page (a cursor moved), the server
// is asked how many records the window it claims to have read holds — `$filter=<the pull's filter>
// and ModificationTimestamp le <the new mark>&$count=true&$top=0` (OData 4.0 `$count`; RESO Web API
// Core is a profile of OData 4.0) — and that is compared with the keys it read whose latest version
// lies in that window. Equal: proven. More, or no count in the answer: not proven; the pull keeps its
// old mark and the next pulls page by nextLink from a fixed mark (reso-reader.ts).
import { causeMessage } from '../../errors.js';
import type { PageClient } from './reso-pages.js';
import { and, queryUrl, TS } from './reso-query.js';

export type WindowProof = { proven: true } | { proven: false; why: string };

export interface WindowInput {
  client: PageClient;
  base: string;
  resource: string;
  /** the pull's `$filter` without its keyset cursor (vendor term, source.filter, the since filter) */
  filter: string | undefined;
  /** the mark the pull would move to: the window's end */
  end: string;
  /** the timestamp of the latest version read of each key */
  read: ReadonlyMap<string, string>;
}

export async function proveWindow(w: WindowInput): Promise<WindowProof> {
  const url = `${queryUrl(w.base, w.resource, { filter: and(w.filter, `${TS} le ${w.end}`), top: 0 })}&$count=true`;
  const end = Date.parse(w.end);
  let inWindow = 0;
  for (const ts of w.read.values()) if (Date.parse(ts) <= end) inWindow++;
  let count: unknown;
  try {
    count = (await w.client.get(url, 'the count of the window read', 'proof'))['@odata.count'];
  } catch (err) {
    return { proven: false, why: `the server refused $count over the window this pull read (${causeMessage(err)})` };
  }
  if (typeof count !== 'number' || !Number.isInteger(count))
    return { proven: false, why: 'the server did not answer $count over the window this pull read' };
  if (count <= inWindow) return { proven: true };
  return {
    proven: false,
    why: `the server answered $count ${count} for the window this pull read, but it read ${inWindow}: the server ignores $orderby`,
  };
}
