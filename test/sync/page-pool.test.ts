// List pages decoded in worker threads (page-pool.ts), against the emulator over HTTP: a worker gives
// the very rows this thread gives (rowsOf), fetchRemote gives the same remote side with workers or
// without, and a worker that fails, hangs or never loads costs speed only: every page is still
// answered, paging ends, and no worker is left running.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readEnvelope } from '../../src/api/envelope.js';
import { ENDPOINTS, ListData, quickListData } from '../../src/api/schemas.js';
import type { ChatbotApi, RawBody } from '../../src/api/types.js';
import { AbortedError } from '../../src/errors.js';
import { decodePage, pageSpans } from '../../src/sync/remote/page-decode.js';
import { openPagePool, type PagePool, type PagePoolOptions } from '../../src/sync/remote/page-pool.js';
import { fetchRemote, type RemoteOptions } from '../../src/sync/remote/remote.js';
import type { RemoteIndex } from '../../src/sync/remote/remote-index.js';
import { rowsOf, type RowOptions } from '../../src/sync/remote/remote-rows.js';
import { startTestEmulator, TEST_SESSION_KEY, type TestEmulator } from '../helpers/emulator.js';
import { failure } from '../helpers/failure.js';
import { listing } from './helpers/listings.js';
import { freshFetch } from '../helpers/fresh-fetch.js';

const LISTINGS = 60;
let t: TestEmulator;

beforeAll(async () => {
  t = await startTestEmulator();
  for (let i = 0; i < LISTINGS; i++) {
    await t.api.createListing(
      listing(` M${i} `, {
        Url: `https://example.com/homes/${i}?a=1&b=ü`,
        Description: i % 3 ? `Fïne home “${i}” ✓ `.repeat(i % 7 ? 1 : 40) : undefined,
        Images: i % 2 ? [`https://img/${i}.jpg`, `https://img/${i}b.jpg`] : undefined,
        ExtensionColumn: i % 5 ? undefined : [{ Key: 'pool', value: 'yes' }],
        Bathrooms: 2 + (i % 4) * 0.25,
        Latitude: 30.123456789 + i / 1000,
        Longitude: -97.5,
      }),
    );
  }
});
afterAll(() => t.close());

const variants: RowOptions[] = [
  { keyBy: 'MLSNumber' },
  { keyBy: 'URL', keepCompared: true, keepOtherKey: true },
  { keyBy: 'MLSNumber', keepCompared: true, ignore: new Set(['Description', 'DaysOnMarket']) },
];

/** one list page as the service sends it */
async function rawPage(pageNumber: number, pageSize: number): Promise<RawBody> {
  const res = await freshFetch(t.url + ENDPOINTS.list, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'chatrobot-sessionkey': TEST_SESSION_KEY },
    body: JSON.stringify({ SerialNumber: 'SN-1', PageNumber: pageNumber, PageSize: pageSize }),
  });
  return { status: res.status, bytes: new Uint8Array(await res.arrayBuffer()) };
}

/** A pool whose workers have loaded (a worker takes a moment to; until then every page is answered undefined). */
async function loadedPool(poolOpts: PagePoolOptions = { size: 1 }): Promise<PagePool> {
  const pool = openPagePool(poolOpts);
  for (let i = 0; i < 400 && pool.ready < (poolOpts.size ?? 1); i++) await new Promise((r) => setTimeout(r, 25));
  if (pool.ready < (poolOpts.size ?? 1)) {
    await pool.close();
    throw new Error('the page worker did not load in 10 s');
  }
  return pool;
}

const faulty = (mode: string) => new URL(`../helpers/faulty-page-worker.ts?mode=${mode}`, import.meta.url);

/** Everything the index holds, key by key, in a form toEqual compares. */
function contents(index: RemoteIndex) {
  return [...index].map(([key, copies]) => [
    key,
    copies.map((c) => ({
      id: c.id,
      otherKey: c.otherKey,
      hash: Buffer.from(c.hash).toString('hex'),
      compared: c.compared,
    })),
  ]);
}

const remoteOpts = (o: RowOptions, pool?: PagePool): RemoteOptions => ({
  serialNumber: 'SN-1',
  pageSize: 7,
  concurrency: 3,
  // every page through the pool: none recalled from an earlier test's paging (page-echo.ts)
  echoRows: 0,
  ...o,
  ...(pool && { threads: { minPages: 1, pool } }),
});

/** the client without listListingsAs: every page through listListings, as a fake client pages */
const withoutRaw = (api: ChatbotApi): ChatbotApi => ({ ...api, listListingsAs: undefined });

describe('page pool', () => {
  it.each(variants)('a page decoded in a worker gives the rows this thread gives (%o)', async (o) => {
    const pool = await loadedPool();
    try {
      for (const [page, size] of [
        [1, 100],
        [2, 25],
        [9, 7],
        [99, 10],
      ] as const) {
        const res = await rawPage(page, size);
        const data = readEnvelope(
          ENDPOINTS.list,
          { status: res.status, headers: new Headers(), text: Buffer.from(res.bytes).toString('utf8') },
          ListData,
          quickListData,
        );
        const { itemHashes, pageHash: answer, chunks, ...decoded } = (await pool.decode(res, o)) ?? {};
        expect(decoded).toEqual({ rows: rowsOf(data.List, o), virtualCount: LISTINGS });
        // the emulator's pages are cut into their items: each one's hash comes along, and the page's, for the page echo
        expect(itemHashes).toHaveLength(data.List.length);
        expect(answer).toBe(pageSpans(res.status, res.bytes).answer);
        expect(chunks).toEqual(decodePage(res.status, res.bytes, o)?.chunks);
      }
    } finally {
      await pool.close();
    }
    expect(pool.running).toBe(0);
  });

  it('leaves to the caller a response that is not plainly a good page', async () => {
    const pool = await loadedPool();
    const o = variants[0]!;
    const good = await rawPage(1, 5);
    expect(await pool.decode({ status: 503, bytes: good.bytes }, o)).toBeUndefined();
    expect(
      await pool.decode(
        { status: 200, bytes: Buffer.from('{"Data":null,"Version":"1","Success":false,"Code":401,"Message":"no"}') },
        o,
      ),
    ).toBeUndefined();
    expect(await pool.decode({ status: 200, bytes: Buffer.from('<html>') }, o)).toBeUndefined();
    expect(await pool.decode(good, o)).toBeDefined();
    await pool.close();
  });

  it.each(variants)('fetchRemote gives the same remote side with a worker as without (%o)', async (o) => {
    const pool = await loadedPool();
    let inWorker = 0;
    const counting: PagePool = Object.assign(Object.create(pool) as PagePool, {
      decode: async (res: RawBody, opts: RowOptions) => {
        const page = await pool.decode(res, opts);
        if (page) inWorker++;
        return page;
      },
    });
    const pooled = await fetchRemote(t.api, remoteOpts(o, counting));
    const plain = await fetchRemote(withoutRaw(t.api), remoteOpts(o));
    expect(inWorker).toBeGreaterThan(0);
    expect(pooled).toMatchObject({ count: LISTINGS, complete: true, pages: 9 });
    expect(contents(pooled.byKey)).toEqual(contents(plain.byKey));
    expect(pooled.byKey.size).toBe(LISTINGS);
    expect(pool.busy).toBe(0);
    await pool.close();
  });

  it.each(['throw', 'exit', 'hang'])(
    'a worker that goes wrong (%s) costs speed only: every page is answered, none is left running',
    async (mode) => {
      const o = variants[1]!;
      const pool = await loadedPool({ size: 2, entry: faulty(mode), stallMs: 200 });
      const remote = await fetchRemote(t.api, remoteOpts(o, pool));
      const plain = await fetchRemote(withoutRaw(t.api), remoteOpts(o));
      expect(remote).toMatchObject({ count: LISTINGS, complete: true });
      expect(contents(remote.byKey)).toEqual(contents(plain.byKey));
      expect(pool.busy).toBe(0);
      await pool.close();
      expect(pool.running).toBe(0);
    },
  );

  it.each(['throw', 'exit', 'hang'])(
    'a worker that goes wrong (%s) is dropped, and the page it held is answered',
    async (mode) => {
      const pool = await loadedPool({ size: 1, entry: faulty(mode), stallMs: 200 });
      expect(await pool.decode(await rawPage(1, 5), variants[0]!)).toBeUndefined();
      expect(pool.running).toBe(0);
      await pool.close();
    },
  );

  it('after a few workers failed, no new one is started: pages are decoded by the caller', async () => {
    const pool = openPagePool({ size: 1, entry: faulty('throw') });
    const page = await rawPage(1, 5);
    for (let failed = 0; failed < 3; failed++) {
      for (let i = 0; i < 400 && pool.ready === 0; i++) await new Promise((r) => setTimeout(r, 25));
      expect(pool.ready).toBe(1);
      expect(await pool.decode(page, variants[0]!)).toBeUndefined(); // the worker failed on it; the next decode starts another
      expect(await pool.decode(page, variants[0]!)).toBeUndefined();
    }
    expect(pool.running).toBe(0);
    await pool.close();
  });

  it('workers without pages end after idleMs, and start again for the next page', async () => {
    const pool = await loadedPool({ size: 1, idleMs: 100 });
    const page = await rawPage(1, 5);
    expect(await pool.decode(page, variants[0]!)).toBeDefined();
    for (let i = 0; i < 100 && pool.running > 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect(pool.running).toBe(0);
    expect(await pool.decode(page, variants[0]!)).toBeUndefined(); // not loaded yet: the caller decodes it
    expect(pool.running).toBe(1);
    for (let i = 0; i < 400 && pool.ready === 0; i++) await new Promise((r) => setTimeout(r, 25));
    expect(await pool.decode(page, variants[0]!)).toBeDefined();
    await pool.close();
    expect(pool.running).toBe(0);
  });

  it('a worker that never loads is never waited for, and close ends it', async () => {
    const pool = openPagePool({ size: 1, entry: faulty('never-ready') });
    await new Promise((r) => setTimeout(r, 500));
    expect(pool.running).toBe(1);
    expect(await pool.decode(await rawPage(1, 5), variants[0]!)).toBeUndefined();
    await pool.close();
    expect(pool.running).toBe(0);
  });

  it('an abort while paging ends the paging with an AbortedError, and leaves no page with the workers', async () => {
    const slow = await startTestEmulator({ latencyMs: 30 });
    try {
      for (let i = 0; i < 40; i++) await slow.api.createListing(listing(`S${i}`));
      const o = variants[1]!;
      const pool = await loadedPool();
      const abort = new AbortController();
      const pages = fetchRemote(slow.api, {
        ...remoteOpts(o, pool),
        pageSize: 2,
        concurrency: 2,
        signal: abort.signal,
      });
      setTimeout(() => abort.abort(new Error('stop')), 100);
      const err = await failure(pages);
      expect(err).toBeInstanceOf(AbortedError);
      // the pages a worker still holds are answered already; its replies only have to arrive
      for (let i = 0; i < 100 && pool.busy > 0; i++) await new Promise((r) => setTimeout(r, 20));
      expect(pool.busy).toBe(0);
      await pool.close();
      expect(pool.running).toBe(0);
    } finally {
      await slow.close();
    }
  });
});
