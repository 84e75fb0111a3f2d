// The remote side of a sync: every listing the chatbot holds, from every page of RealEstateList.
// Pages are read until a short one (fewer items than the page size): VirtualCount never sizes
// anything, it is only a hint of how many pages to ask for at once (at most `concurrency`, through
// p-limit) and a check afterwards. A server that caps PageSize answers fewer items than asked while
// VirtualCount says there are more: paging goes on with the size it gave. Every loop ends: at most
// `maxPages` pages a pass (then PagingError), a page that repeats listings already seen in the pass
// is a PagingError (a server that ignores PageNumber), and `signal` carries the run's deadline.
// A listing created or deleted while paging shifts the pages under us, so the pass is checked: the
// distinct IDs seen must equal VirtualCount, and every page must agree on VirtualCount. If not, the
// whole list is paged again (a few rounds at most); after that the side is marked incomplete,
// which blocks every delete of the run.
import pLimit from 'p-limit';
import type { ChatbotApi } from '../api/types.js';
import { PagingError } from '../errors.js';
import { comparedOfListItem } from '../listing/fingerprint.js';
import type { ListItem } from '../listing/schema.js';
import type { KeyBy, RemoteSide } from './plan-types.js';
import { RemoteIndex, type RemoteRow } from './remote-index.js';

export interface RemoteOptions {
  serialNumber: string;
  keyBy: KeyBy;
  pageSize: number;
  /** list pages in flight at once */
  concurrency: number;
  /** most pages one pass may read (api.maxPages) */
  maxPages?: number;
  signal?: AbortSignal;
  /** passes over the list before giving up on a consistent view (default 3) */
  maxRounds?: number;
  /** fields left out of the comparison hash (the feed's `ignore`) */
  ignore?: ReadonlySet<string>;
  /** keep each listing's compared JSON (dry runs and the change log: to name changes old → new) */
  keepCompared?: boolean;
  /** keep each listing's key by the other field too (another feed of the chatbot keys by it) */
  keepOtherKey?: boolean;
}

/** 10 million listings at the default PageSize of 100: past any real chatbot, yet an endless list still ends */
export const DEFAULT_MAX_PAGES = 100_000;

export interface RemotePage {
  pageNumber: number;
  pageSize: number;
  items: ListItem[];
  virtualCount: number;
}

/** One pass over the pages of the list, in page order, until a short page. */
export async function* remotePages(api: ChatbotApi, opts: RemoteOptions): AsyncGenerator<RemotePage> {
  const limit = pLimit(Math.max(1, opts.concurrency));
  const maxPages = opts.maxPages ?? DEFAULT_MAX_PAGES;
  const fetchPage = (pageNumber: number, pageSize: number): Promise<RemotePage> =>
    limit(async () => {
      const data = await api.listListings({ SerialNumber: opts.serialNumber, PageNumber: pageNumber, PageSize: pageSize }, { signal: opts.signal });
      return { pageNumber, pageSize, items: data.List, virtualCount: data.VirtualCount };
    });
  const first = await fetchPage(1, opts.pageSize);
  yield first;
  const got = first.items.length;
  const size = got > 0 && got < opts.pageSize && first.virtualCount > got ? got : opts.pageSize;
  if (got < size) return;
  // pages VirtualCount leads us to expect are asked for together; past them, one at a time
  const expected = Math.min(maxPages, Math.ceil(first.virtualCount / size));
  const ahead = new Map<number, Promise<RemotePage>>();
  let next = 2;
  let ended = false;
  try {
    for (;;) {
      while (!ended && next <= maxPages && ahead.size < Math.max(1, opts.concurrency) && (next <= expected || ahead.size === 0)) {
        const p = fetchPage(next, size);
        p.catch(() => {}); // awaited below in order; a failure is rethrown there
        ahead.set(next++, p);
      }
      const [n, pending] = ahead.entries().next().value ?? [];
      if (n === undefined || !pending) break;
      const page = await pending;
      ahead.delete(n);
      yield page;
      if (page.items.length < size) ended = true;
    }
  } finally {
    // a failure or an early stop: let the calls in flight settle, none is left behind
    limit.clearQueue();
    await Promise.allSettled(ahead.values());
  }
  if (!ended) throw new PagingError(`the list of chatbot ${opts.serialNumber} did not end within api.maxPages (${maxPages}) pages of ${size}: a list that never ends, or a chatbot with more than ${maxPages * size} listings (then raise api.maxPages or api.pageSize)`);
}

/** Every listing of the chatbot, checked against VirtualCount, keyed by the feed's key. */
export async function fetchRemote(api: ChatbotApi, opts: RemoteOptions): Promise<RemoteSide & { byKey: RemoteIndex }> {
  const maxRounds = opts.maxRounds ?? 3;
  const index = new RemoteIndex({ keepCompared: opts.keepCompared, keepOtherKey: opts.keepOtherKey });
  let pages = 0;
  let roundCount = 0;
  let virtualCount = 0;
  let problem: string | undefined;
  let round = 0;
  while (round < maxRounds) {
    round++;
    roundCount = 0;
    const counts = new Set<number>();
    for await (const page of remotePages(api, opts)) {
      pages++;
      counts.add(page.virtualCount);
      if (page.items.length > 0 && page.items.every((item) => index.seenIn(item.ID, round))) {
        throw new PagingError(`page ${page.pageNumber} of chatbot ${opts.serialNumber}'s list repeats listings already seen on earlier pages: the service does not page (PageNumber ignored?)`);
      }
      for (const item of page.items) {
        if (!index.seenIn(item.ID, round)) roundCount++;
        index.add(toRemote(item, opts), round);
      }
    }
    virtualCount = Math.max(...counts);
    if (counts.size === 1 && roundCount === virtualCount) {
      problem = undefined;
      break;
    }
    problem =
      counts.size > 1
        ? `VirtualCount changed while paging (${[...counts].join(', ')})`
        : `${roundCount} distinct listings paged but VirtualCount is ${virtualCount}`;
  }
  // A consistent pass stands alone; after inconsistent ones, the union is the best knowledge there is.
  index.finish(problem ? undefined : round);
  return {
    byKey: index,
    count: index.count,
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

/** What the remote side keeps of one list item (RemoteIndex). */
export function toRemote(item: ListItem, opts: Pick<RemoteOptions, 'keyBy' | 'ignore' | 'keepCompared' | 'keepOtherKey'>): RemoteRow {
  const { hash, kept } = comparedOfListItem(item, opts.ignore, opts.keepCompared);
  const byUrl = opts.keyBy === 'URL';
  return {
    id: item.ID,
    key: (byUrl ? item.Url : item.MLSNumber).trim(),
    ...(opts.keepOtherKey && { otherKey: (byUrl ? item.MLSNumber : item.Url).trim() }),
    hash,
    ...(kept !== undefined && { compared: kept }),
  };
}
