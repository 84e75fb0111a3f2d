// The paging's window (remote.ts pass): pages are taken in page order, and asked for up to
// PAGES_AHEAD × concurrency ahead of the one taken next, so a page answered late does not hold back
// the requests after it. All the same: the list calls in flight stay within `concurrency`; a pass
// that ends (its short page, a failure, an abort, an early stop) ends, with no call left in flight
// and none sent after; and the calls sent past a list's end (a VirtualCount that says more than
// there is) stay within `concurrency`, as with a window of `concurrency` pages.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ListRequest } from '../../src/api/schemas.js';
import type { CallOptions, ChatbotApi } from '../../src/api/types.js';
import { AbortedError, ApiError } from '../../src/errors.js';
import { fetchRemote, remotePages } from '../../src/sync/remote/remote.js';
import { createFakeApi } from './helpers/fake-api.js';
import { listing } from './helpers/listings.js';

const tick = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * The fake API's list calls, watched: the pages asked for in order, the calls in flight (and the
 * most at once); `before(page)` runs before each is answered (a delay, a failure), and an
 * aborted call rejects at once.
 */
function watched(listings: number, before: (page: number) => Promise<void> = () => tick(1), virtualCount?: number) {
  const fake = createFakeApi();
  for (let i = 0; i < listings; i++) fake.add(listing(`M${i}`));
  const w = { asked: [] as number[], inFlight: 0, most: 0 };
  const list = fake.api.listListings.bind(fake.api);
  const api: ChatbotApi = {
    ...fake.api,
    listListings: async (req: ListRequest, opts?: CallOptions) => {
      w.inFlight++;
      w.most = Math.max(w.most, w.inFlight);
      w.asked.push(req.PageNumber ?? 1);
      try {
        await Promise.race([
          before(req.PageNumber ?? 1),
          new Promise((_, reject) => {
            if (opts?.signal?.aborted) reject(new AbortedError('list'));
            opts?.signal?.addEventListener('abort', () => reject(new AbortedError('list')), { once: true });
          }),
        ]);
        const data = await list(req, opts);
        return virtualCount === undefined ? data : { ...data, VirtualCount: virtualCount };
      } finally {
        w.inFlight--;
      }
    },
  };
  return { w, api };
}

/** (a window 3 × concurrency wide by default: wider than concurrency is where the hangs were) */
const opts = (concurrency: number, pagesAhead = 3) => ({
  serialNumber: 'SN-1',
  keyBy: 'MLSNumber' as const,
  pageSize: 10,
  concurrency,
  pagesAhead,
});

describe('fetchRemote: the window of pages asked for', () => {
  it('asks for the pages after one answered late, never more than `concurrency` at once, and takes every page in order', async () => {
    let release: () => void = () => undefined;
    const late = new Promise<void>((r) => (release = r));
    // page 4 answers only once page 10 has been asked for: past a window of concurrency (3) pages
    // (4-6), within one of 3 × concurrency (4-12)
    const { w, api } = watched(195, async (page) => {
      if (page === 4) await late;
      if (page === 10) release();
      await tick(1);
    });
    const remote = await fetchRemote(api, opts(3));
    expect(remote).toMatchObject({ count: 195, complete: true, pages: 20, rounds: 1 });
    expect(w.most).toBeLessThanOrEqual(3);
    expect(w.asked.indexOf(10)).toBeGreaterThan(w.asked.indexOf(4));
  });

  it('a page that fails with pages still queued: the paging ends with its error, no call left in flight or sent after', async () => {
    // (page 5 fails at once, the others take a while: when it is taken, the pages after it are queued)
    const { w, api } = watched(400, async (page) => {
      await tick(page === 5 ? 1 : 5);
      if (page === 5) throw new ApiError('list', 500, 500, 'page 5 failed');
    });
    await expect(fetchRemote(api, opts(2))).rejects.toThrow(/page 5 failed/);
    expect(w.inFlight).toBe(0);
    const asked = w.asked.length;
    await tick(30);
    expect(w.asked.length).toBe(asked);
    expect(w.most).toBeLessThanOrEqual(2);
  }, 10_000);

  it('a paging stopped early with pages still queued: it ends, no call left in flight or sent after', async () => {
    const { w, api } = watched(400, () => tick(2));
    let pages = 0;
    for await (const page of remotePages(api, opts(2))) {
      pages++;
      if (page.pageNumber === 4) break;
    }
    expect(pages).toBe(4);
    expect(w.inFlight).toBe(0);
    const asked = w.asked.length;
    await tick(30);
    expect(w.asked.length).toBe(asked);
  }, 10_000);

  it('an abort mid-pass ends the paging with no call left in flight or sent after', async () => {
    const abort = new AbortController();
    const { w, api } = watched(400, async (page) => {
      if (page === 6) abort.abort();
      await tick(5);
    });
    await expect(fetchRemote(api, { ...opts(3), signal: abort.signal })).rejects.toThrow();
    expect(w.inFlight).toBe(0);
    const asked = w.asked.length;
    await tick(30);
    expect(w.asked.length).toBe(asked);
    expect(w.asked.every((p) => p <= 6 + 3 * 3)).toBe(true);
  }, 10_000);

  it('a VirtualCount that says more than there is: fewer than `concurrency` calls past the short page, however late it answers', async () => {
    // 25 listings: page 3 is short; it answers late, while the pages after it (empty) answer at once
    const { w, api } = watched(25, (page) => tick(page === 3 ? 40 : 1), 1e9);
    const remote = await fetchRemote(api, { ...opts(4), maxRounds: 1 });
    expect(w.asked.filter((p) => p > 3).length).toBeLessThan(4);
    expect(w.most).toBeLessThanOrEqual(4);
    expect(remote).toMatchObject({ count: 25, complete: false, pages: 3 });
  });

  it('property: pages taken in order up to the first short page, every listing; within `concurrency` calls at once, and fewer than `concurrency` past the end', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 120 }),
        fc.integer({ min: 1, max: 5 }),
        fc.option(fc.integer({ min: 0, max: 1000 }), { nil: undefined }),
        fc.array(fc.integer({ min: 0, max: 6 }), { minLength: 1, maxLength: 20 }),
        fc.integer({ min: 1, max: 4 }),
        async (listings, concurrency, lie, delays, pagesAhead) => {
          const { w, api } = watched(listings, (page) => tick(delays[page % delays.length]!), lie);
          const taken: number[] = [];
          const keys = new Set<string>();
          for await (const page of remotePages(api, { ...opts(concurrency, pagesAhead), pageSize: 7 })) {
            taken.push(page.pageNumber);
            for (const item of page.items) keys.add(item.MLSNumber ?? '');
          }
          // the page size the pass pages on (a short first page whose VirtualCount says more: a capped
          // server's), and its first short page
          const got = Math.min(listings, 7);
          const size = got > 0 && got < 7 && (lie ?? listings) > got ? got : 7;
          const last = Math.floor(listings / size) + 1;
          expect(w.most).toBeLessThanOrEqual(concurrency);
          expect(w.asked.filter((p) => p > last).length).toBeLessThan(concurrency);
          expect(w.inFlight).toBe(0);
          expect(taken).toEqual(Array.from({ length: last }, (_, i) => i + 1));
          expect(keys.size).toBe(listings);
        },
      ),
      { numRuns: 40 },
    );
  }, 60_000);
});
