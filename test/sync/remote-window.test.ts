// The paging's window (remote.ts pass): pages are taken in page order, and asked for up to
// PAGES_AHEAD × concurrency ahead of the one taken next, so a page answered late does not hold back
// the requests after it; the list calls in flight stay within `concurrency` all the same.
import { describe, expect, it } from 'vitest';
import { fetchRemote } from '../../src/sync/remote/remote.js';
import { createFakeApi } from './helpers/fake-api.js';
import { listing } from './helpers/listings.js';

describe('fetchRemote: the window of pages in flight', () => {
  it('asks for the pages after one answered late, never more than `concurrency` at once, and takes every page in order', async () => {
    const fake = createFakeApi();
    for (let i = 0; i < 195; i++) fake.add(listing(`M${i}`));
    let inFlight = 0;
    let most = 0;
    const asked: number[] = [];
    let release: () => void = () => undefined;
    const late = new Promise<void>((r) => (release = r));
    const list = fake.api.listListings.bind(fake.api);
    const api = {
      ...fake.api,
      listListings: async (req: Parameters<typeof list>[0], ...rest: unknown[]) => {
        inFlight++;
        most = Math.max(most, inFlight);
        asked.push(req.PageNumber ?? 1);
        try {
          // page 2 answers only once page 9 has been asked for: past a window of concurrency pages
          if (req.PageNumber === 2) await late;
          if (req.PageNumber === 9) release();
          await new Promise((r) => setTimeout(r, 1));
          return await list(req, ...(rest as []));
        } finally {
          inFlight--;
        }
      },
    };
    const remote = await fetchRemote(api, { serialNumber: 'SN-1', keyBy: 'MLSNumber', pageSize: 10, concurrency: 3 });
    expect(remote).toMatchObject({ count: 195, complete: true, pages: 20, rounds: 1 });
    expect(most).toBeLessThanOrEqual(3);
    expect(asked.indexOf(9)).toBeGreaterThan(asked.indexOf(2));
  });
});
