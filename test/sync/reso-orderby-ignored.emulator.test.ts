// Issue 35, point 2 over real HTTP: a RESO server that ignores `$orderby` and answers in key order
// (test/helpers/reso-server.ts `order: 'key'`), with changes stamped so that the first key-sorted
// page of an incremental pull looks time-ordered: a keyset cursor (ModificationTimestamp, key) then
// jumps past the earlier changes on later keys. The incremental pull must never lose a change that
// the next full pull would find: it proves what it read (a `$count` over the window it claims)
// before its mark moves; a pull that cannot prove it keeps its mark, learns that the server ignores
// `$orderby`, and the next pulls page by nextLink from the fixed mark, with a warning. Each case
// runs until it settles: the last run writes nothing, and a full pull after it finds nothing to do.
import { describe, expect, it } from 'vitest';
import { FeedConfig } from '../../src/config/schema.js';
import type { SyncReport } from '../../src/sync/index.js';
import type { TestEmulator } from '../helpers/emulator.js';
import { startResoServer, type ResoServer } from '../helpers/reso-server.js';
import { SN, type SyncEnv, useEmulatorSync, writeCounts } from './helpers/feed.js';
import { keyedResoRecords } from './helpers/reso-records.js';

let te: TestEmulator;
let env: SyncEnv;
const emulator = useEmulatorSync((t, e) => {
  te = t;
  env = e;
});

const records = (n: number) => keyedResoRecords(n, 36);

const feedOf = (server: ResoServer) =>
  FeedConfig.parse({
    name: 'mls',
    chatbot: SN,
    source: {
      kind: 'reso',
      url: server.url,
      maxPageSize: 5,
      retries: 0,
      timeoutMs: 5000,
      photosTimestampField: null,
      incremental: true,
    },
    mapping: { preset: 'reso', fields: { Url: { template: 'https://broker.test/l/{ListingId}' } } },
    deletes: { maxFraction: 1, maxCount: 10_000 },
  });

const prices = async () => new Map((await te.listings(SN)).map((l) => [String(l.MLSNumber), l.SalePrice]));

/** ten price changes, on every other key; `at(i)` stamps the i-th (0-based, in key order) */
function change(server: ResoServer, at: (i: number) => string): Map<string, number> {
  const want = new Map<string, number>();
  for (let i = 0; i < 10; i++) {
    const n = 2 * (i + 1);
    const price = 500_000 + n;
    server.touch(`K-${String(n).padStart(2, '0')}`, { ListPrice: price, ModificationTimestamp: at(i) });
    want.set(`L-${String(n).padStart(2, '0')}`, price);
  }
  return want;
}

/** incremental runs until one writes nothing (at most `max`), each checked; then a full pull that writes nothing */
async function settle(server: ResoServer, want: Map<string, number>, max: number): Promise<SyncReport[]> {
  const reports: SyncReport[] = [];
  for (let run = 0; run < max; run++) {
    const before = await writeCounts(te);
    const r = await env.sync(te, feedOf(server));
    reports.push(r);
    expect(r.outcome).toBe('ok');
    expect(r.source.mode).toBe('incremental');
    const after = await writeCounts(te);
    if (JSON.stringify(after) === JSON.stringify(before)) break;
  }
  const now = await prices();
  for (const [id, price] of want) expect(now.get(id)).toBe(price);
  const before = await writeCounts(te);
  const full = await env.sync(te, feedOf(server), { full: true });
  expect(full.counts).toMatchObject({ created: 0, updated: 0, deleted: 0 });
  expect(await writeCounts(te)).toEqual(before);
  return reports;
}

describe('a key-sorted server that ignores $orderby, incremental pulls', () => {
  it('the first page looks time-ordered: the count proves the pull short, the mark holds, the next pull pages by nextLink; nothing is lost', async () => {
    const server = emulator.closeAfterTest(
      await startResoServer({ records: records(20), maxPageSize: 5, order: 'key' }),
    );
    expect((await env.sync(te, feedOf(server))).outcome).toBe('ok');
    // K-02…K-10 stamped in time order (the first page, key-sorted, looks ordered), K-12…K-20 before them
    const want = change(server, (i) =>
      i < 5 ? `2025-02-01T00:0${i + 1}:00.000Z` : `2025-02-01T00:00:${10 + 10 * (i - 5)}.000Z`,
    );
    const reports = await settle(server, want, 4);
    const [first, second] = reports;
    // the first pull read the first page only, and could not prove it read the window: its mark held
    expect(first!.counts.updated).toBe(5);
    expect(first!.source.warnings?.join(' ')).toMatch(
      /the server answered \$count 10 for the window this pull read, but it read 5: the server ignores \$orderby/,
    );
    expect(first!.source.warnings?.join(' ')).toMatch(/the mark stays at 2025-01-01T00:19:00.000Z/);
    // the second paged by nextLink, with a warning, and read the rest
    expect(second!.counts.updated).toBe(5);
    expect(second!.source.warnings?.join(' ')).toMatch(
      /pages by @odata\.nextLink: the server was found to ignore \$orderby/,
    );
    expect(reports).toHaveLength(3);
    expect(reports[2]!.counts).toMatchObject({ created: 0, updated: 0, deleted: 0 });
    // (a full pull learned nothing either way: the next incremental pull still pages by nextLink)
    const again = await env.sync(te, feedOf(server));
    expect(again.source.warnings?.join(' ')).toMatch(/nextLink/);
  });

  it('the disorder shows on the first page: the pull stops there, ok, keeps its mark and learns; the next pages by nextLink', async () => {
    const server = emulator.closeAfterTest(
      await startResoServer({ records: records(20), maxPageSize: 5, order: 'key' }),
    );
    expect((await env.sync(te, feedOf(server))).outcome).toBe('ok');
    // K-04 before K-02 in time: visible on the first key-sorted page
    const want = change(server, (i) => `2025-02-01T00:${String(i === 0 ? 30 : i).padStart(2, '0')}:00.000Z`);
    const reports = await settle(server, want, 4);
    expect(reports[0]!.source.warnings?.join(' ')).toMatch(/came after .*, out of order: the server ignores \$orderby/);
    expect(reports).toHaveLength(3);
  });

  it('a server that does not answer $count: the pull cannot prove a window of more than one page, so it keeps its mark and pages by nextLink next', async () => {
    const server = emulator.closeAfterTest(
      await startResoServer({ records: records(20), maxPageSize: 5, order: 'key', noCount: true }),
    );
    expect((await env.sync(te, feedOf(server))).outcome).toBe('ok');
    const want = change(server, (i) =>
      i < 5 ? `2025-02-01T00:0${i + 1}:00.000Z` : `2025-02-01T00:00:${10 + 10 * (i - 5)}.000Z`,
    );
    const reports = await settle(server, want, 4);
    expect(reports[0]!.source.warnings?.join(' ')).toMatch(/did not answer \$count/);
    expect(reports).toHaveLength(3);
  });

  it('a server that honours $orderby: the proof passes, the mark moves, no warning, and the rerun writes nothing', async () => {
    const server = emulator.closeAfterTest(await startResoServer({ records: records(20), maxPageSize: 5 }));
    expect((await env.sync(te, feedOf(server))).outcome).toBe('ok');
    const want = change(server, (i) =>
      i < 5 ? `2025-02-01T00:0${i + 1}:00.000Z` : `2025-02-01T00:00:${10 + 10 * (i - 5)}.000Z`,
    );
    const reports = await settle(server, want, 3);
    expect(reports[0]!.counts.updated).toBe(10);
    expect(reports[0]!.source.warnings ?? []).toEqual([]);
    expect(reports).toHaveLength(2);
    expect(server.requests.some((r) => r.url.includes('%24count=true') || r.url.includes('$count=true'))).toBe(true);
  });
});

// Issue 54 point 6: what was learned is re-tested, and the config's word wins over it.
describe('learned nextLink paging', () => {
  const feedWith = (server: ResoServer, source: Record<string, unknown>) => {
    const feed = feedOf(server);
    return { ...feed, source: { ...feed.source, ...source } } as typeof feed;
  };
  /** a key-sorted server, a first full pull, and an incremental pull that learns nextLink paging */
  async function learned(feed: (s: ResoServer) => ReturnType<typeof feedOf> = feedOf) {
    const server = emulator.closeAfterTest(
      await startResoServer({ records: records(20), maxPageSize: 5, order: 'key' }),
    );
    expect((await env.sync(te, feed(server))).outcome).toBe('ok');
    change(server, (i) => (i < 5 ? `2025-02-01T00:0${i + 1}:00.000Z` : `2025-02-01T00:00:${10 + 10 * (i - 5)}.000Z`));
    const first = await env.sync(te, feed(server));
    expect(first.source.warnings?.join(' ')).toMatch(/the server ignores \$orderby/);
    return server;
  }
  const keysetAsked = (server: ResoServer, from: number) =>
    server.requests.slice(from).filter((r) => r.orderby === 'ModificationTimestamp,ListingKey').length;

  it('is re-proved at the next full pull (one request more) and dropped when the server orders by time as asked', async () => {
    const server = await learned();
    server.order = 'honour'; // the server (or the proxy before it) was fixed
    const from = server.requests.length;
    const full = await env.sync(te, feedOf(server), { full: true });
    expect(full.outcome, full.message).toBe('ok');
    // ceil(20 / 5) pages and the empty one that ends a keyset pull, and the one proof
    expect(server.requests.length - from).toBe(6);
    expect(full.source.requestsBy).toMatchObject({ pages: 5, proof: 1 });
    expect(full.source.warnings?.join(' ')).toMatch(/dropped/);
    server.touch('K-03', { ListPrice: 303_303 });
    const next = server.requests.length;
    const incremental = await env.sync(te, feedOf(server));
    expect(incremental.outcome, incremental.message).toBe('ok');
    expect(incremental.counts.updated).toBe(1);
    expect(incremental.source.warnings ?? []).toEqual([]);
    expect(keysetAsked(server, next)).toBeGreaterThan(0);
  });

  it('is kept when the full pull shows the server still ignores $orderby', async () => {
    const server = await learned();
    const from = server.requests.length;
    const full = await env.sync(te, feedOf(server), { full: true });
    expect(full.outcome, full.message).toBe('ok');
    expect(server.requests.length - from).toBe(6);
    expect(full.source.requestsBy).toMatchObject({ proof: 1 });
    const next = server.requests.length;
    const incremental = await env.sync(te, feedOf(server));
    expect(incremental.source.warnings?.join(' ')).toMatch(/pages by @odata\.nextLink/);
    expect(keysetAsked(server, next)).toBe(0);
  });

  it('source.paging: keyset in the config wins: the next incremental pull pages by keyset, and no warning says otherwise', async () => {
    const keyset = (s: ResoServer) => feedWith(s, { paging: 'keyset' });
    const server = await learned(keyset);
    const from = server.requests.length;
    const next = await env.sync(te, keyset(server));
    expect(next.outcome, next.message).toBe('ok');
    expect(keysetAsked(server, from)).toBeGreaterThan(0);
    const said = next.source.warnings?.join(' ') ?? '';
    expect(said).not.toMatch(/pages by @odata\.nextLink/);
    expect(said).not.toMatch(/set source\.paging: nextLink to say so/);
    // and a full pull asks nothing more of it: the config decides
    const before = server.requests.length;
    const full = await env.sync(te, keyset(server), { full: true });
    expect(full.source.requestsBy?.proof).toBeUndefined();
    expect(server.requests.length - before).toBe(5);
  });
});
