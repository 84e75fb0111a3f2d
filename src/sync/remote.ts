// The remote side of a sync: every listing the chatbot holds, from every page of RealEstateList.
// The first page gives VirtualCount; the rest are fetched concurrently (bounded). A server that caps
// PageSize answers fewer items than asked while VirtualCount says there are more: paging goes on
// with the size it gave. A listing created or deleted while paging shifts the pages under us, so
// the pass is checked: the distinct IDs seen must equal VirtualCount, and every page must agree on
// VirtualCount. If not, the whole list is paged again (a few rounds at most); after that the side is
// marked incomplete, which blocks every delete of the run.
import type { ChatbotApi } from '../api/types.js';
import { canonicalFromListItem } from '../listing/canonical.js';
import { comparedHash } from '../listing/fingerprint.js';
import type { ListItem } from '../listing/schema.js';
import type { KeyBy, RemoteListing, RemoteSide } from './plan-types.js';

export interface RemoteOptions {
  serialNumber: string;
  keyBy: KeyBy;
  pageSize: number;
  /** list pages in flight at once */
  concurrency: number;
  signal?: AbortSignal;
  /** passes over the list before giving up on a consistent view (default 3) */
  maxRounds?: number;
  /** fields left out of the comparison hash (the feed's `ignore`) */
  ignore?: ReadonlySet<string>;
  /** keep each listing's canonical form (dry runs: to show changes old → new) */
  keepCanonical?: boolean;
}

export interface RemotePage {
  pageNumber: number;
  pageSize: number;
  items: ListItem[];
  virtualCount: number;
}

/** One pass over every page of the list. Pages after the first arrive in completion order. */
export async function* remotePages(api: ChatbotApi, opts: RemoteOptions): AsyncGenerator<RemotePage> {
  const fetchPage = async (pageNumber: number, pageSize: number): Promise<RemotePage> => {
    const data = await api.listListings({ SerialNumber: opts.serialNumber, PageNumber: pageNumber, PageSize: pageSize }, { signal: opts.signal });
    return { pageNumber, pageSize, items: data.List, virtualCount: data.VirtualCount };
  };
  const first = await fetchPage(1, opts.pageSize);
  yield first;
  const got = first.items.length;
  const size = got > 0 && got < opts.pageSize && first.virtualCount > got ? got : opts.pageSize;
  const pages = Math.ceil(first.virtualCount / size);
  const rest = Array.from({ length: Math.max(0, pages - 1) }, (_, i) => i + 2);
  yield* mapBounded(rest, opts.concurrency, (n) => fetchPage(n, size));
}

/** Every listing of the chatbot, checked against VirtualCount, keyed by the feed's key. */
export async function fetchRemote(api: ChatbotApi, opts: RemoteOptions): Promise<RemoteSide> {
  const maxRounds = opts.maxRounds ?? 3;
  const seen = new Map<number, RemoteListing>();
  let pages = 0;
  let roundIds = new Set<number>();
  let virtualCount = 0;
  let problem: string | undefined;
  let round = 0;
  while (round < maxRounds) {
    round++;
    roundIds = new Set();
    const counts = new Set<number>();
    for await (const page of remotePages(api, opts)) {
      pages++;
      counts.add(page.virtualCount);
      for (const item of page.items) {
        roundIds.add(item.ID);
        seen.set(item.ID, toRemote(item, opts));
      }
    }
    virtualCount = Math.max(...counts);
    if (counts.size === 1 && roundIds.size === virtualCount) {
      problem = undefined;
      break;
    }
    problem =
      counts.size > 1
        ? `VirtualCount changed while paging (${[...counts].join(', ')})`
        : `${roundIds.size} distinct listings paged but VirtualCount is ${virtualCount}`;
  }
  // A consistent pass stands alone; after inconsistent ones, the union is the best knowledge there is.
  const listings = (problem ? [...seen.values()] : [...seen.values()].filter((r) => roundIds.has(r.id))).sort((a, b) => a.id - b.id);
  const byKey = new Map<string, RemoteListing[]>();
  for (const r of listings) {
    if (r.key === '') continue; // nothing to match it by: left alone
    const copies = byKey.get(r.key);
    if (copies) copies.push(r);
    else byKey.set(r.key, [r]);
  }
  return {
    byKey,
    count: listings.length,
    virtualCount,
    complete: problem === undefined,
    ...(problem && { problem: `${problem}, after ${round} passes` }),
    pages,
    rounds: round,
  };
}

export function remoteKey(item: Pick<ListItem, 'MLSNumber' | 'Url'>, keyBy: KeyBy): string {
  return (keyBy === 'URL' ? item.Url : item.MLSNumber).trim();
}

export function toRemote(item: ListItem, opts: Pick<RemoteOptions, 'keyBy' | 'ignore' | 'keepCanonical'>): RemoteListing {
  const canonical = canonicalFromListItem(item);
  const mlsNumber = item.MLSNumber.trim();
  const url = item.Url.trim();
  return {
    id: item.ID,
    key: opts.keyBy === 'URL' ? url : mlsNumber,
    mlsNumber,
    url,
    hash: comparedHash(canonical, opts.ignore),
    ...(opts.keepCanonical && { canonical }),
  };
}

/**
 * Runs `fn` over `inputs` with at most `limit` in flight and yields results as they complete.
 * On a failure it lets the calls in flight settle (no stray rejection) and throws the first error.
 */
export async function* mapBounded<T, R>(inputs: readonly T[], limit: number, fn: (input: T) => Promise<R>): AsyncGenerator<R> {
  type Settled = { slot: number; ok: true; value: R } | { slot: number; ok: false; error: unknown };
  const inflight = new Map<number, Promise<Settled>>();
  let next = 0;
  const launch = () => {
    const slot = next;
    const input = inputs[next++] as T;
    inflight.set(
      slot,
      fn(input).then(
        (value): Settled => ({ slot, ok: true, value }),
        (error: unknown): Settled => ({ slot, ok: false, error }),
      ),
    );
  };
  while (next < inputs.length && inflight.size < Math.max(1, limit)) launch();
  while (inflight.size) {
    const done = await Promise.race(inflight.values());
    inflight.delete(done.slot);
    if (!done.ok) {
      await Promise.allSettled(inflight.values());
      throw done.error;
    }
    if (next < inputs.length) launch();
    yield done.value;
  }
}
