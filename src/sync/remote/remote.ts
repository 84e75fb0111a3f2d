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
// A large list's pages are decoded in worker threads (page-pool.ts) when the client can hand over a
// page's body (listListingsAs); the rows are the same either way (rowsOf). With keepCompared, every
// page carries its answer (DecodedPage.raw; a client without listListingsAs: its List as an answer)
// to the index's store (compared-store.ts: memory up to a budget, then a temporary file), from which a row's compared JSON and its whole
// list item (the listing before a change, for undo: capture-before.ts) are read when asked for;
// decoding makes no compared JSON then (the workers neither).
// A run of pushed events pages no list: fetchRemoteKeys asks the list endpoint for each key of the
// run alone (its MLSNumber filter, the spec's "Filter by MLS number"), and once, one listing long,
// for the chatbot's VirtualCount (what deletes.maxFraction is a fraction of).
import pLimit from 'p-limit';
import type { ListData } from '../../api/schemas.js';
import type { ChatbotApi, ListPageDecoder } from '../../api/types.js';
import { PagingError } from '../../errors.js';
import type { ListItem } from '../../listing/schema.js';
import { comparedOfPageRow, decodePage, listItemOfPageRow, type DecodedPage } from './page-decode.js';
import { pageEcho, type EchoFiles, type PageEcho } from './page-echo.js';
import { sharedPagePool, type PagePool } from './page-pool.js';
import type { RemoteSide } from '../model/plan-types.js';
import { RemoteIndex } from './remote-index.js';
import { noFileWarning, type NoFile } from './compared-store.js';
import type { Logger } from '../../log.js';
import { rowsOf, type RowOptions } from './remote-rows.js';
import { remoteKey } from '../model/remote-key.js';

export { toRemote } from './remote-rows.js';
export { remoteKey } from '../model/remote-key.js';

export interface RemoteOptions extends RowOptions {
  serialNumber: string;
  pageSize: number;
  /** list pages in flight at once */
  concurrency: number;
  /** pages asked for ahead of the one taken next, as a multiple of `concurrency` (default PAGES_AHEAD, 1) */
  pagesAhead?: number;
  /** most pages one pass may read (api.maxPages) */
  maxPages?: number;
  signal?: AbortSignal;
  /** passes over the list before giving up on a consistent view (default 3) */
  maxRounds?: number;
  /**
   * worker threads that decode pages (a client with listListingsAs): `pool` (default the process's,
   * sharedPagePool), used for a list of `minPages` pages or more (by the first page's VirtualCount;
   * default MIN_POOL_PAGES), as loading a worker costs more than decoding a few pages.
   */
  threads?: { minPages?: number; pool?: PagePool };
  /** rows the process remembers for the next paging (page-echo.ts; default ECHO_ROWS, 0: none) */
  echoRows?: number;
  /** where the page echo is kept between processes (a CLI run); none: this process's memory only */
  echoFiles?: EchoFiles;
  /** whose calls the list calls are (CallOptions.scope: the run's lane whose report counts the paging) */
  callScope?: string;
  /**
   * where the paging's warnings go (the run's logger, scoped by the chatbot: its lines name it): the
   * change log's compared JSON kept in memory, its temporary file failed (compared-store.ts
   * noFileWarning), said once a paging. Without one they are lost: a sync and an undo give theirs.
   */
  logger?: Logger;
}

/** 10 million listings at the default PageSize of 100: past any real chatbot, yet an endless list still ends */
const DEFAULT_MAX_PAGES = 100_000;

/**
 * bytes of pages the index keeps in memory for the change log before they go to its file
 * (compared-store.ts): a chatbot of up to about 9k listings (at ~0.9 KB a listing as the list
 * gives it) makes no file. Not more: a page kept in memory costs as much CPU as one written (the
 * write is off the event loop; 100k listings' 94 MB measured 0.17-0.22 s of CPU either way), and
 * it stays in the run's RSS to its end.
 */
const COMPARED_MEMORY_BYTES = 8 * 1024 * 1024;

/** a list of fewer pages is decoded on this thread alone (a worker takes ~0.1-0.3 s to load) */
const MIN_POOL_PAGES = 30;

export interface RemotePage {
  pageNumber: number;
  pageSize: number;
  items: ListItem[];
  virtualCount: number;
}

/** What paging needs of a page, whatever it holds: its listings' count and the VirtualCount it gave. */
interface Counted {
  virtualCount: number;
  length: number;
}

type Paged<P> = P & { pageNumber: number; pageSize: number };

/** One pass over the pages of the list, in page order, until a short page. */
export async function* remotePages(api: ChatbotApi, opts: RemoteOptions): AsyncGenerator<RemotePage> {
  const load = async (pageNumber: number, pageSize: number) => {
    const data = await api.listListings(listRequest(opts, pageNumber, pageSize), callOf(opts));
    return { items: data.List, virtualCount: data.VirtualCount, length: data.List.length };
  };
  for await (const { pageNumber, pageSize, items, virtualCount } of pass(load, opts))
    yield { pageNumber, pageSize, items, virtualCount };
}

const callOf = (opts: RemoteOptions) => ({
  signal: opts.signal,
  ...(opts.callScope !== undefined && { scope: opts.callScope }),
});

const listRequest = (opts: RemoteOptions, pageNumber: number, pageSize: number) => ({
  SerialNumber: opts.serialNumber,
  PageNumber: pageNumber,
  PageSize: pageSize,
});

/**
 * Pages asked for ahead of the one taken next, as a multiple of `concurrency` (the calls in flight,
 * which the limiter still holds them to; RemoteOptions.pagesAhead). A page is taken in page order,
 * so one answered or recalled late holds its place meanwhile, and with a window of `concurrency`
 * pages the requests after it wait for it. A window of 3 bought a 100k no-change rerun 1.44 × the
 * bare client against 1.57 × before this pass was made safe (a6568b8, load 1.3–2.7), but nothing
 * since: 1 × faster in 4 turns of 5 (57cde94, load 2.3–2.9) and at the median in three of four runs
 * on a shared machine (load 3–12); so 1 (docs/benchmarks.md, "Where
 * a 100k no-change rerun's time goes"). The pages answered but not yet taken wait in memory: at most
 * this many × `concurrency`.
 */
const PAGES_AHEAD = 1;

/**
 * One pass over the pages, each read by `load`, in page order, until a short page (the pages asked
 * for past it are not yielded).
 * Up to `pagesAhead` × `concurrency` pages are asked for ahead of the one taken next (`concurrency`
 * only until the pass's second page is taken: a server that ignores PageNumber repeats its first
 * page there, and the calls that costs stay within `concurrency`), through a limiter that starts
 * them in page order, `concurrency` at once. The pass ends at the first page, in page order, that
 * is short or fails; once any page answers short or fails, no page after it is sent: the pages
 * still queued are dropped. So the calls sent past the list's end (a VirtualCount that says more
 * than there is) stay within `concurrency`: every one sent was in flight when the first page past
 * the end answered. At the pass's end (its short page, a failure, an early stop) the queued pages
 * are dropped, never sent, and the started ones are let settle: no call is left in flight, and no
 * page that was never started is awaited (it never settles).
 */
async function* pass<P extends Counted>(
  load: (pageNumber: number, pageSize: number) => Promise<P>,
  opts: RemoteOptions,
): AsyncGenerator<Paged<P>> {
  const concurrency = Math.max(1, opts.concurrency);
  const limit = pLimit(concurrency);
  const maxPages = opts.maxPages ?? DEFAULT_MAX_PAGES;
  const first: Paged<P> = { ...(await load(1, opts.pageSize)), pageNumber: 1, pageSize: opts.pageSize };
  yield first;
  const got = first.length;
  const size = got > 0 && got < opts.pageSize && first.virtualCount > got ? got : opts.pageSize;
  if (got < size) return;
  /** the first page known to end the pass (answered short, or failed): no page after it is sent */
  let endsAt = Infinity;
  const endAt = (pageNumber: number) => {
    if (pageNumber >= endsAt) return;
    endsAt = pageNumber;
    // (the limiter starts pages in the order asked: every page still queued comes after this one)
    limit.clearQueue();
  };
  /** pages asked for and not yet taken whose call the limiter started (the others may never settle) */
  const started = new Set<number>();
  let over = false;
  const fetchPage = (pageNumber: number): Promise<Paged<P>> =>
    limit(async () => {
      // (a page the limiter took from its queue just before the queue was dropped is not sent either)
      if (over || pageNumber > endsAt) throw new PagingError(`page ${pageNumber} not asked for: the pass has ended`);
      started.add(pageNumber);
      try {
        const page = await load(pageNumber, size);
        if (page.length < size) endAt(pageNumber);
        return { ...page, pageNumber, pageSize: size };
      } catch (err) {
        endAt(pageNumber);
        throw err;
      }
    });
  // pages VirtualCount leads us to expect are asked for together; past them, one at a time
  const expected = Math.min(maxPages, Math.ceil(first.virtualCount / size));
  const ahead = new Map<number, Promise<Paged<P>>>();
  let next = 2;
  let taken = 1;
  let ended = false;
  try {
    for (;;) {
      const window = taken < 2 ? concurrency : concurrency * Math.max(1, opts.pagesAhead ?? PAGES_AHEAD);
      while (next <= maxPages && next <= endsAt && ahead.size < window && (next <= expected || ahead.size === 0)) {
        const p = fetchPage(next);
        p.catch(() => {}); // awaited below in order; a failure is rethrown there
        ahead.set(next++, p);
      }
      const [n, pending] = ahead.entries().next().value ?? [];
      if (n === undefined || !pending) break;
      const page = await pending;
      ahead.delete(n);
      started.delete(n);
      yield page;
      taken = n;
      if (page.length < size) {
        ended = true;
        break;
      }
    }
  } finally {
    // the pass's end: the pages still queued are never sent, the calls in flight let settle
    over = true;
    limit.clearQueue();
    await Promise.allSettled([...ahead].filter(([n]) => started.has(n)).map(([, p]) => p));
  }
  if (!ended)
    throw new PagingError(
      `the list of chatbot ${opts.serialNumber} did not end within api.maxPages (${maxPages}) pages of ${size}: a list that never ends, or a chatbot with more than ${maxPages * size} listings (then raise api.maxPages or api.pageSize)`,
    );
}

/** The index a paging fills: a page is kept by its answer (rowPages), a row's compared JSON read as decoding reads it, and its whole item. */
function newIndex(opts: RemoteOptions): RemoteIndex {
  return new RemoteIndex({
    keepCompared: opts.keepCompared,
    keepOtherKey: opts.keepOtherKey,
    comparedMemoryBytes: COMPARED_MEMORY_BYTES,
    readRaw: (status, body, row) => comparedOfPageRow(status, body, row, opts),
    readItem: listItemOfPageRow,
    ...(opts.logger && { onNoFile: onceWarned(opts.logger, opts.serialNumber) }),
  });
}

/**
 * The paging's warning that the compared JSON stays in memory: once for the chatbot's paging, whatever
 * its passes. The logger names the chatbot already (RemoteOptions.logger): a second `chatbot` key
 * would make the JSON line one a log shipper reads as it likes.
 */
function onceWarned(logger: Logger, chatbot: string): (failure: NoFile) => void {
  let said = false;
  return (failure) => {
    if (said) return;
    said = true;
    logger.warn({ dir: failure.dir, heldBytes: failure.heldBytes }, noFileWarning(chatbot, failure));
  };
}

/** Every listing of the chatbot, checked against VirtualCount, keyed by the feed's key. */
export async function fetchRemote(
  api: ChatbotApi,
  opts: RemoteOptions & { onIndex?: (index: RemoteIndex) => void },
): Promise<RemoteSide & { byKey: RemoteIndex }> {
  const index = newIndex(opts);
  // (a feed read beside the paging asks it what the first pass has paged so far: RemoteIndex.pagedCopy)
  opts.onIndex?.(index);
  // (read back from its file, a rerun's echo is checked and decoded while the first page is asked for:
  // the pages wait for it, not the first request)
  const echo = pageEcho(opts.serialNumber, opts, opts.echoRows, opts.echoFiles);
  echo.catch(() => undefined); // (a paging that fails before a page is decoded never awaits it)
  let passes: Passes;
  try {
    passes = await passesUntilConsistent(api, opts, index, echo);
  } catch (err) {
    index.close(); // dropped with the error: its file of compared JSON (compared-store.ts) closed now
    // (what the paging remembered so far is let go: it counts no longer in the process's bound)
    void echo.then(
      (e) => e.abandon(),
      () => undefined,
    );
    throw err;
  }
  const { problem, rounds } = passes;
  // A consistent pass stands alone; after inconsistent ones, the union is the best knowledge there is.
  index.finish(problem ? undefined : rounds);
  const echoed = await echo;
  await echoed.finish();
  return {
    byKey: index,
    count: index.count,
    virtualCount: passes.virtualCount,
    complete: problem === undefined,
    ...(problem && { problem: `${problem}, after ${rounds} passes` }),
    pages: passes.pages,
    rounds,
    recalled: echoed.recalled,
  };
}

/** What the passes over the list found: the last one's VirtualCount, and what was wrong with it (none: consistent). */
interface Passes {
  pages: number;
  rounds: number;
  virtualCount: number;
  problem: string | undefined;
}

/**
 * Passes over the list into `index`, until one is consistent (one VirtualCount throughout, and that
 * many distinct listings paged) or opts.maxRounds (3) have been made.
 */
async function passesUntilConsistent(
  api: ChatbotApi,
  opts: RemoteOptions,
  index: RemoteIndex,
  echo: Promise<PageEcho>,
): Promise<Passes> {
  const maxRounds = opts.maxRounds ?? 3;
  const { load, firstPage } = poolPages(api, opts, echo);
  const out: Passes = { pages: 0, rounds: 0, virtualCount: 0, problem: undefined };
  while (out.rounds < maxRounds) {
    const round = ++out.rounds;
    let roundCount = 0;
    const counts = new Set<number>();
    for await (const page of pass(load, opts)) {
      if (++out.pages === 1) firstPage(page);
      counts.add(page.virtualCount);
      const fresh = index.addRows(page.rows, round, page.raw);
      // (the index is dropped with the error: that the page went in first does not matter)
      if (page.length > 0 && fresh === 0) {
        throw new PagingError(
          `page ${page.pageNumber} of chatbot ${opts.serialNumber}'s list repeats listings already seen on earlier pages: the service does not page (PageNumber ignored?)`,
        );
      }
      roundCount += fresh;
    }
    out.virtualCount = Math.max(...counts);
    if (counts.size === 1 && roundCount === out.virtualCount) {
      out.problem = undefined;
      break;
    }
    out.problem =
      counts.size > 1
        ? `VirtualCount changed while paging (${[...counts].join(', ')})`
        : `${roundCount} distinct listings paged but VirtualCount is ${out.virtualCount}`;
  }
  return out;
}

/**
 * The pages' reader (rowPages), which decodes pages on the page pool from the first one's answer on
 * when the list is long enough for it (`firstPage` decides; the pages after the first are asked for
 * once it is taken: the pool is there for them). Its workers are started by the first page the page
 * echo does not know (a rerun it knows whole starts none).
 */
function poolPages(api: ChatbotApi, opts: RemoteOptions, echo: Promise<PageEcho>) {
  let poolWanted = false;
  let pool: PagePool | undefined;
  const load = rowPages(
    api,
    opts,
    () => (poolWanted ? (pool ??= opts.threads?.pool ?? sharedPagePool()) : undefined),
    echo,
  );
  const poolFrom = Math.max(1, opts.threads?.minPages ?? MIN_POOL_PAGES);
  const firstPage = (page: Paged<Counted>) => {
    if (api.listListingsAs && !opts.signal?.aborted && Math.ceil(page.virtualCount / page.pageSize) >= poolFrom)
      poolWanted = true;
  };
  return { load, firstPage };
}

/**
 * How fetchRemote reads a page: as rows (rowsOf). Through listListingsAs when the client has it:
 * from the page echo where it knows the page's listings, else decoded by the pool (once there is
 * one) or on this thread, and remembered; else through listListings.
 */
function rowPages(
  api: ChatbotApi,
  opts: RemoteOptions,
  pool: () => PagePool | undefined,
  echo: Promise<PageEcho>,
): (pageNumber: number, pageSize: number) => Promise<DecodedPage & Counted> {
  // with keepCompared every page is kept by its answer, so its rows need no compared JSON of their own
  const rowOpts: RowOptions = opts.keepCompared ? { ...opts, keepCompared: false } : opts;
  const decoder: ListPageDecoder<DecodedPage> = {
    raw: async (res) => {
      const echoed = await echo;
      const known = echoed.recall(res);
      if (known) return known;
      const page = (await pool()?.decode(res, rowOpts, opts.signal)) ?? decodePage(res.status, res.bytes, rowOpts);
      if (page) echoed.remember(page);
      return page && opts.keepCompared ? { ...page, raw: res } : page;
    },
    data: (data: ListData) => ({
      rows: rowsOf(data.List, rowOpts),
      virtualCount: data.VirtualCount,
      ...(opts.keepCompared && { raw: { status: 200, bytes: Buffer.from(JSON.stringify(answerOf(data))) } }),
    }),
  };
  const counted = (page: DecodedPage) => ({ ...page, length: page.rows.ids.length });
  const call = callOf(opts);
  const listAs = api.listListingsAs?.bind(api);
  if (listAs) return async (n, size) => counted(await listAs(listRequest(opts, n, size), decoder, call));
  return async (n, size) => counted(decoder.data(await api.listListings(listRequest(opts, n, size), call)));
}

/** a list page the client gave parsed, as the service's answer (the envelope quickListPage reads) */
function answerOf(data: ListData): unknown {
  return { Success: true, Code: 200, Version: '', Message: null, Data: data };
}

/**
 * The chatbot's copies of `keys` alone (MLSNumber keys: one filtered list call a key, more only for a
 * key held more than a page of times), and its VirtualCount from one unfiltered call of one listing.
 * An item the filter returns whose MLSNumber is not the key asked (a server that matches loosely: the
 * spec does not say) is left out. The side is complete: every key asked was read whole; `asked`
 * says that no other key was.
 */
export async function fetchRemoteKeys(
  api: ChatbotApi,
  opts: RemoteOptions & { keys: ReadonlySet<string> },
): Promise<RemoteSide & { byKey: RemoteIndex }> {
  if (opts.keyBy !== 'MLSNumber')
    throw new Error(
      'fetchRemoteKeys: the list endpoint filters by MLSNumber only (a URL-keyed chatbot is paged whole)',
    );
  const index = newIndex(opts);
  const rowOpts: RowOptions = opts.keepCompared ? { ...opts, keepCompared: false } : opts;
  const call = callOf(opts);
  const limit = pLimit(Math.max(1, opts.concurrency));
  let pages = 0;
  const ofKey = async (key: string) => {
    const load = async (pageNumber: number, pageSize: number) => {
      const data = await api.listListings({ ...listRequest(opts, pageNumber, pageSize), MLSNumber: key }, call);
      return { data, length: data.List.length, virtualCount: data.VirtualCount };
    };
    for await (const page of pass(load, { ...opts, concurrency: 1 })) {
      pages++;
      const List = page.data.List.filter((item) => remoteKey(item, 'MLSNumber') === key);
      const rows = rowsOf(List, rowOpts);
      index.addRows(
        rows,
        1,
        opts.keepCompared
          ? { status: 200, bytes: Buffer.from(JSON.stringify(answerOf({ List, VirtualCount: List.length }))) }
          : undefined,
      );
    }
  };
  // (every call settles before the index is finished or dropped: none adds rows to it after)
  const [count, ...rest] = await Promise.allSettled([
    limit(() => api.listListings(listRequest(opts, 1, 1), call)),
    ...[...opts.keys].filter((k) => k !== '').map((k) => limit(() => ofKey(k))),
  ]);
  const failed = [count!, ...rest].find((r) => r.status === 'rejected');
  if (failed || count!.status !== 'fulfilled') {
    index.close();
    throw failed?.reason;
  }
  pages++;
  index.finish(1);
  const total = count.value.VirtualCount;
  return {
    byKey: index,
    count: Math.max(total, index.count),
    virtualCount: total,
    complete: true,
    pages,
    rounds: 1,
    asked: opts.keys,
  };
}
