import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { generateResoRecords } from '../../fixtures/generate.js';
import { FeedReadError } from '../../src/errors.js';
import { FeedSource, openFeed } from '../../src/feeds/index.js';
import { silentLogger } from '../../src/log.js';
import { startResoServer, type ResoServer } from '../helpers/reso-server.js';
import { collect, collectUntilError } from './helpers.js';

const servers: ResoServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function server(opts: Parameters<typeof startResoServer>[0]) {
  const s = await startResoServer(opts);
  servers.push(s);
  return s;
}

function record(key: string, ts: string, extra: Record<string, unknown> = {}) {
  return { ListingKey: key, ListingId: `MLS-${key}`, ModificationTimestamp: ts, StandardStatus: 'Active', ...extra };
}

function source(url: string, extra: Record<string, unknown> = {}) {
  return FeedSource.parse({ kind: 'reso', url, incremental: true, retries: 2, timeoutMs: 5000, ...extra });
}

/** A pull handed the mark `mark` (what the sync would store from the last run). */
async function pull(url: string, mark: string | undefined, extra: Record<string, unknown> = {}, full = false) {
  const feed = openFeed('mls', source(url, extra), { baseDir: '/', logger: silentLogger, full, ...(mark !== undefined && { mark }) });
  const items = await collect(feed.items);
  return { feed, items, keys: items.map((i) => i.position.id) };
}

const T1 = '2025-03-01T10:00:00Z';
const T2 = '2025-03-01T11:00:00Z';
const T3 = '2025-03-01T12:00:00Z';

describe('RESO reader', () => {
  it('follows nextLink across pages the server makes smaller than asked, with the bearer token and maxpagesize', async () => {
    const records = generateResoRecords(23, { seed: 3 });
    const s = await server({ records, maxPageSize: 5, token: 'tok-123456' });
    const { items, feed } = await pull(s.url, undefined, { bearerToken: 'tok-123456', maxPageSize: 10 });
    expect(items).toHaveLength(23);
    expect(new Set(items.map((i) => i.position.id)).size).toBe(23);
    expect(s.requests).toHaveLength(5);
    expect(s.requests.every((r) => r.authorization === 'Bearer tok-123456' && r.prefer === 'odata.maxpagesize=10')).toBe(true);
    expect(s.requests[0]!.url).toContain('$orderby=ModificationTimestamp%2CListingKey');
    expect(s.requests[0]!.url).toContain('$expand=Media');
    expect(feed.mode).toBe('full'); // incremental, but no mark yet: everything was pulled
  });

  it('orders Media into image URLs by Order', async () => {
    const records = generateResoRecords(1, { seed: 3 });
    const s = await server({ records });
    const { items } = await pull(s.url, undefined);
    const media = items[0]!.kind === 'record' ? (items[0]!.data.Media as { Order: number }[]) : [];
    expect(media.map((m) => m.Order)).toEqual([...media.map((m) => m.Order)].sort((a, b) => a - b));
  });

  it('pulls incrementally from the high-water mark without skipping records that share its timestamp across a page boundary', async () => {
    // pages of 2: [A, B] [C, D] — B, C and D share T2, and the first pull ends on D
    const s = await server({ records: [record('A', T1), record('B', T2), record('C', T2), record('D', T2)], maxPageSize: 2 });
    const first = await pull(s.url, undefined);
    expect(first.keys).toEqual(['A', 'B', 'C', 'D']);
    expect(JSON.parse(first.feed.mark!)).toEqual({ ts: T2, key: 'D' });

    // E arrives with the mark's very timestamp, F later; B changes again
    s.records = [record('A', T1), record('C', T2), record('D', T2), record('E', T2), record('B', T3), record('F', T3)];
    const second = await pull(s.url, first.feed.mark);
    expect(s.requests.at(-1)!.filter).toBe(`ModificationTimestamp ge ${T2}`);
    expect(second.feed.mode).toBe('incremental');
    expect(second.keys).toEqual(['E', 'B', 'F']);

    const third = await pull(s.url, second.feed.mark);
    expect(third.keys).toEqual([]);
  });

  it('hands back no mark after an incomplete pull, and one after a whole pull', async () => {
    const s = await server({ records: [record('A', T1), record('B', T2)], maxPageSize: 1 });
    const feed = openFeed('mls', source(s.url), { baseDir: '/', logger: silentLogger });
    expect(feed.mark).toBeUndefined();
    for await (const _ of feed.items) break; // the consumer stops early
    expect(feed.mark).toBeUndefined();
    const done = await pull(s.url, undefined);
    expect(JSON.parse(done.feed.mark!)).toEqual({ ts: T2, key: 'B' });
  });

  it('pulls everything when asked for a full pull, whatever the mark', async () => {
    const s = await server({ records: [record('A', T1), record('B', T2)] });
    const { keys, feed } = await pull(s.url, JSON.stringify({ ts: T3, key: 'Z' }), {}, true);
    expect(keys).toEqual(['A', 'B']);
    expect(feed.mode).toBe('full');
    expect(s.requests[0]!.filter).toBeUndefined();
  });

  it('turns MlgCanView: false into a removed item', async () => {
    const s = await server({ records: [record('A', T1), record('B', T2, { MlgCanView: false })] });
    const { items } = await pull(s.url, undefined);
    expect(items.map((i) => [i.kind, i.position.id])).toEqual([['record', 'A'], ['removed', 'B']]);
  });

  it('reads gzip-encoded pages', async () => {
    const s = await server({ records: generateResoRecords(7, { seed: 1 }), gzip: true, maxPageSize: 3 });
    const { items } = await pull(s.url, undefined);
    expect(items).toHaveLength(7);
    expect(s.requests[0]!.acceptEncoding).toMatch(/gzip/);
  });

  it('retries a 503 and then reads on', async () => {
    const s = await server({ records: [record('A', T1)], failFirst: [503] });
    const { keys } = await pull(s.url, undefined);
    expect(keys).toEqual(['A']);
    expect(s.requests).toHaveLength(2);
  });

  it('fails with a non-retryable FeedReadError on a wrong token, without retrying', async () => {
    const s = await server({ records: [record('A', T1)], token: 'right-token' });
    const feed = openFeed('mls', source(s.url, { bearerToken: 'wrong-token' }), { baseDir: '/', logger: silentLogger });
    const { error } = await collectUntilError(feed.items);
    expect(error).toBeInstanceOf(FeedReadError);
    expect((error as FeedReadError).retryable).toBe(false);
    expect(error!.message).toContain('HTTP 401');
    expect(error!.message).not.toContain('wrong-token');
    expect(s.requests).toHaveLength(1);
  });

  it('replays the saved pages of the demo, and an incremental replay from its mark yields nothing new', async () => {
    const baseDir = fileURLToPath(new URL('../../fixtures', import.meta.url));
    const src = FeedSource.parse({ kind: 'reso', path: 'feeds/reso-pages.json', incremental: true });
    const first = openFeed('replay', src, { baseDir, logger: silentLogger });
    const items = await collect(first.items);
    expect(items).toHaveLength(240);
    expect(items.filter((i) => i.kind === 'removed')).toHaveLength(2);
    const again = openFeed('replay', src, { baseDir, logger: silentLogger, mark: first.mark! });
    expect(await collect(again.items)).toHaveLength(0);
  });
});
