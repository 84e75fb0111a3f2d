// What an incremental keyset pull proves before its mark moves (issue 35). A page that looks ordered
// proves nothing: a server that ignores `$orderby` and answers a time-filtered query in key order can
// look time-ordered page by page while the (ModificationTimestamp, key) cursor jumps past earlier
// changes on later keys. So once a keyset pull asked more than one page (a cursor moved), the server
// is asked how many records the window it claims to have read holds — `$filter=<the pull's filter>
// and ModificationTimestamp le <the new mark>&$count=true&$top=0` (OData 4.0 `$count`; RESO Web API
// Core is a profile of OData 4.0) — and that is compared with the keys it read whose latest version
// lies in that window. Equal: proven. More, or no count in the answer: not proven; the pull keeps its
// old mark and the next pulls page by nextLink from a fixed mark (reso-reader.ts).
import { byCodeUnit } from '../../compare.js';
import { causeMessage } from '../../errors.js';
import type { PageClient } from './reso-pages.js';
import { and, isTimestampLiteral, queryUrl, TS } from './reso-query.js';

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

/**
 * What a full pull re-proves of a server an incremental pull once found to ignore `$orderby` (the
 * mark's `paging: nextLink`, issue 54): one request, the feed's records in the incremental pulls'
 * order (`$orderby=ModificationTimestamp,<key>`), `$top` the oldest few, key and timestamp only,
 * compared with the oldest the full pull read (by key, so whatever order the server answers in).
 * The same timestamps in the same order, each on a key read with it: the server orders by time as
 * asked, and what was learned is dropped. Anything else (another record first, fewer, a refusal, a
 * record changed during the pull): not proven, and the finding stays until the next full pull.
 */
export interface OrderInput {
  client: PageClient;
  /** the URL of that one request */
  url: string;
  /** the oldest records the full pull read, by (ModificationTimestamp, key) */
  oldest: ReadonlyArray<{ key: string; ts: string }>;
  keyField: string;
}

export async function proveTimeOrder(w: OrderInput): Promise<WindowProof> {
  let value: unknown[];
  try {
    value = (await w.client.get(w.url, 'the oldest records by time', 'proof')).value;
  } catch (err) {
    return { proven: false, why: `the server refused the records by time (${causeMessage(err)})` };
  }
  const read = new Map(w.oldest.map((r) => [r.key, Date.parse(r.ts)]));
  if (value.length === 0 && w.oldest.length > 0) return { proven: false, why: 'the server answered no record by time' };
  for (let i = 0; i < Math.min(value.length, w.oldest.length); i++) {
    const r = value[i] as Record<string, unknown> | null;
    const at = Date.parse(String(r?.[TS]));
    if (at !== Date.parse(w.oldest[i]!.ts) || read.get(String(r?.[w.keyField])) !== at)
      return {
        proven: false,
        why: `asked by ModificationTimestamp, the server answered ${JSON.stringify(r?.[w.keyField])} as number ${i + 1}, not the record the full pull read there: it still ignores $orderby`,
      };
  }
  return { proven: true };
}

/** The `k` oldest records offered, by (ModificationTimestamp, key): bounded, whatever the pull's size. */
export function oldestRecords(k: number): {
  offer(key: unknown, ts: unknown): void;
  readonly list: Array<{ key: string; ts: string }>;
} {
  let kept: Array<{ key: string; ts: string; at: number }> = [];
  const sorted = () => kept.sort((a, b) => a.at - b.at || byCodeUnit(a.key, b.key)).slice(0, k);
  return {
    offer(key, ts) {
      if (key === undefined || key === null || !isTimestampLiteral(ts)) return;
      kept.push({ key: String(key), ts, at: Date.parse(ts) });
      if (kept.length >= 2 * k) kept = sorted();
    },
    get list() {
      return sorted().map(({ key, ts }) => ({ key, ts }));
    },
  };
}
