// A chatbot fed by several feeds whose sync state is lost (Redis restarted without persistence,
// FLUSHALL, a move to a new store): a feed's deletes spare another feed's listings by that feed's
// fingerprints, so while another feed of the chatbot has no committed state the listings this feed
// lacks cannot be told apart from that feed's: its deletes are held (docs/redis.md, Persistence).
// Over HTTP against the emulator, with the state in a real Redis, wiped as a restart would.
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedisStore } from '../../src/state/redis-store.js';
import type { KvStore } from '../../src/state/kv-store.js';
import type { TestEmulator } from '../helpers/emulator.js';
import { requests, row, rows, SN, total, useEmulatorSync, type SyncEnv } from './helpers/feed.js';

let te: TestEmulator;
let env: SyncEnv;
useEmulatorSync((t, e) => {
  te = t;
  env = e;
});

let redis: Redis;
beforeAll(() => {
  redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
});
const prefixes: string[] = [];
afterAll(async () => {
  // each store's keys deleted, as the test found Redis
  for (const prefix of prefixes) {
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length) await redis.del(...keys);
  }
  await redis.quit();
});

/** a state store of its own in Redis, and its wipe (every key under its prefix, as FLUSHALL leaves it) */
function redisState(): { store: KvStore; wipe(): Promise<number> } {
  const prefix = `test-cofeed-${randomUUID()}`;
  prefixes.push(prefix);
  return {
    store: createRedisStore(redis, prefix),
    async wipe() {
      const keys = await redis.keys(`${prefix}:*`);
      return keys.length ? redis.del(...keys) : 0;
    },
  };
}

const deleteCalls = async () => total(await requests(te, 'RealEstateDelete'));
const onChatbot = async () => new Set((await te.listings(SN)).map((l) => l.MLSNumber));

describe('a chatbot of several feeds after its sync state is lost', () => {
  // feed-a holds 100 listings, feed-b 5 (or `bListings`: under the delete guard's 50%)
  const setUp = async (bListings = 5) => {
    const a = env.feed({ name: 'feed-a', source: { kind: 'csv', path: 'a.csv' } });
    const b = env.feed({ name: 'feed-b', source: { kind: 'csv', path: 'b.csv' } });
    await env.writeFeed(rows(100), 'a.csv');
    await env.writeFeed(rows(bListings, 1001), 'b.csv');
    const state = redisState();
    const opts = { configFeeds: [a, b], store: state.store };
    expect((await env.sync(te, a, opts)).outcome).toBe('ok');
    expect((await env.sync(te, b, opts)).outcome).toBe('ok');
    expect((await onChatbot()).size).toBe(100 + bListings);
    expect(await state.wipe()).toBeGreaterThan(0);
    return { a, b, opts };
  };

  it("holds the other feed's listings: no delete call, outcome guard, the feed lacking state named", async () => {
    const { a, opts } = await setUp();
    const before = await deleteCalls();
    const held = await env.sync(te, a, opts);
    expect(await deleteCalls()).toBe(before);
    expect((await onChatbot()).size).toBe(105);
    for (const l of rows(5, 1001)) expect(await onChatbot()).toContain(l.MLSNumber);
    expect(held.outcome).toBe('guard');
    expect(held.counts).toMatchObject({ deleted: 0, unchanged: 100, otherFeeds: 0 });
    expect(held.guard).toMatchObject({ outcome: 'tripped', withheld: 5 });
    expect(held.message).toContain('feed-b');
    expect(held.message).toContain('feedsync sync --feed feed-b');
  });

  it('deletes what is truly stale again once the other feed has run', async () => {
    const { a, b, opts } = await setUp();
    expect((await env.sync(te, a, opts)).outcome).toBe('guard');
    // feed-b runs: its state is committed, and it spares feed-a's listings by feed-a's
    const bRun = await env.sync(te, b, opts);
    expect(bRun.outcome).toBe('ok');
    expect(bRun.counts).toMatchObject({ deleted: 0, otherFeeds: 100 });
    // feed-a drops a listing: that one goes, feed-b's stay
    await env.writeFeed(rows(99), 'a.csv');
    const before = await deleteCalls();
    const again = await env.sync(te, a, opts);
    expect(again.outcome).toBe('ok');
    expect(again.counts).toMatchObject({ deleted: 1, otherFeeds: 5 });
    expect(await deleteCalls()).toBe(before + 1);
    const left = await onChatbot();
    expect(left.size).toBe(104);
    expect(left.has('MLS0100')).toBe(false);
  });

  it('holds the deletes of a feed whose fellow feed of the chatbot never ran, and lets them go once it has', async () => {
    const a = env.feed({ name: 'feed-a', source: { kind: 'csv', path: 'a.csv' } });
    const b = env.feed({ name: 'feed-b', source: { kind: 'csv', path: 'b.csv' } });
    await env.writeFeed(rows(10), 'a.csv');
    await env.writeFeed(rows(3, 1001), 'b.csv');
    const opts = { configFeeds: [a, b], store: redisState().store };
    await env.sync(te, a, opts);
    await env.writeFeed(rows(9), 'a.csv');
    const held = await env.sync(te, a, opts);
    expect(held).toMatchObject({ outcome: 'guard', counts: { deleted: 0 } });
    expect(held.message).toContain('feedsync sync --feed feed-b');
    // feed-b writes nothing it has yet to the chatbot but has run: its state is committed
    await env.writeFeed(rows(0), 'b.csv');
    expect((await env.sync(te, b, opts)).outcome).toBe('ok');
    const after = await env.sync(te, a, opts);
    expect(after).toMatchObject({ outcome: 'ok', counts: { deleted: 1 } });
  });

  it("holds the other feed's listings while that feed's first run since the loss recorded only some of them (stopped mid-run)", async () => {
    // feed-b holds 40 listings (29% of the chatbot)
    const { a, b, opts } = await setUp(40);
    // feed-b's first run after the loss: every listing of it changed, stopped after its first write
    // (a SIGKILL, a deadline): the writes the API acknowledged are in its state (settle/acked.ts), the rest are not
    await env.writeFeed(
      rows(40, 1001).map((r) => ({ ...r, SalePrice: Number(r.SalePrice) + 1 })),
      'b.csv',
    );
    const stop = new AbortController();
    const stopped = await env.sync(te, b, {
      ...opts,
      api: { concurrency: 1 },
      signal: stop.signal,
      onProgress: (p) => {
        if (p.phase === 'write') stop.abort(new Error('stopped mid-run'));
      },
    });
    expect(stopped.outcome).not.toBe('ok');
    expect(stopped.counts.updated).toBeLessThan(40);
    const before = await deleteCalls();
    const run = await env.sync(te, a, opts);
    expect(await deleteCalls()).toBe(before);
    expect((await onChatbot()).size).toBe(140);
    expect(run.outcome).toBe('guard');
    expect(run.message).toContain('feedsync sync --feed feed-b');
    // feed-b's run to its end: its state names all its listings again, and feed-a spares them by it
    expect((await env.sync(te, b, opts)).outcome).toBe('ok');
    expect((await env.sync(te, a, opts)).counts).toMatchObject({ deleted: 0, otherFeeds: 40 });
    expect((await onChatbot()).size).toBe(140);
  });

  it('lets the deletes go once the other feed read whole, though one of its writes failed (partial)', async () => {
    const { a, b, opts } = await setUp(10);
    // feed-a first: its deletes held for feed-b, its own state whole again
    expect((await env.sync(te, a, opts)).outcome).toBe('guard');
    // feed-b read whole after the loss, one of its updates refused: else a listing the API always
    // refuses would hold feed-a's deletes for good
    await env.writeFeed([row(1001, { SalePrice: 1 }), row(1002, { SalePrice: 2 }), ...rows(8, 1003)], 'b.csv');
    let refused = false;
    const partial = await env.sync(te, b, {
      ...opts,
      api: { concurrency: 1, retries: 0 },
      onProgress: (p) => {
        // (after the first update: the second is refused)
        if (p.phase !== 'write' || refused) return;
        refused = true;
        te.emulator.configure({ nextFaults: ['500'] });
      },
    });
    expect(partial).toMatchObject({ outcome: 'partial', counts: { updated: 1, failed: 1 } });
    await env.writeFeed(rows(99), 'a.csv');
    const run = await env.sync(te, a, opts);
    // (the listing whose update was refused is not in feed-b's state: feed-a takes it for stale too)
    expect(run).toMatchObject({ outcome: 'ok', counts: { deleted: 2, otherFeeds: 9 } });
  });

  it('leaves a chatbot of one feed as it was: its first run after the loss deletes as before', async () => {
    const a = env.feed({ name: 'feed-a', source: { kind: 'csv', path: 'a.csv' } });
    await env.writeFeed(rows(10), 'a.csv');
    const state = redisState();
    const opts = { configFeeds: [a], store: state.store };
    await env.sync(te, a, opts);
    await state.wipe();
    await env.writeFeed(rows(9), 'a.csv');
    const run = await env.sync(te, a, opts);
    expect(run).toMatchObject({ outcome: 'ok', counts: { deleted: 1 } });
  });
});
