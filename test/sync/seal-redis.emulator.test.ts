// The seal over the Redis store a worker keeps its state in (src/state/redis-store.ts): stored once a
// run left every listing in step, read back after the commit (its fingerprints and stamps from their
// hashes), standing for the next run; and not standing once a fingerprint in Redis is not the one it
// was stored with (a hash put back from a copy), where the run writes what the plain path writes.
import '../setup/needs-redis.js';
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedisStore } from '../../src/state/redis-store.js';
import type { KvStore } from '../../src/state/kv-store.js';
import { fingerprintNamespace, SEAL_NAMESPACE } from '../../src/sync/model/state-names.js';
import { csv, row, rows, useEmulatorSync } from './helpers/feed.js';

const N = 30;
const FEED = 'test-feed';
const sync = useEmulatorSync();
let redis: Redis;
let prefix: string;
let store: KvStore;

beforeAll(() => {
  redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
  prefix = `test-seal-${randomUUID()}`;
  store = createRedisStore(redis, prefix);
});
afterAll(async () => {
  const keys = await redis.keys(`${prefix}:*`);
  if (keys.length) await redis.del(...keys);
  await redis.quit();
});

describe('the seal in Redis', () => {
  it('stands for the run after the one that stored it, and not over a fingerprint put back from before', async () => {
    const { te, env } = { te: sync.te(), env: sync.env() };
    const feed = env.feed({ deletes: { maxFraction: 0.5, batchSize: 10 } });
    const run = () => env.sync(te, feed, { api: { pageSize: 10 }, store });
    await env.writeFeed(rows(N));
    await run();
    expect((await run()).counts).toMatchObject({ unchangedByStamp: N, created: 0, updated: 0 });
    expect((await run()).counts).toMatchObject({ unchangedBySeal: N, created: 0, updated: 0 });
    // record 4's Location changed (the list does not return it): written, and sealed with its new fingerprint
    const before = await store.get(fingerprintNamespace(FEED), String(row(4).MLSNumber));
    await env.writeFeed(csv(rows(N).map((r, i) => (i === 3 ? row(4, { Location: 'North' }) : r))));
    expect((await run()).counts).toMatchObject({ updated: 1 });
    const sealed = await store.get(SEAL_NAMESPACE, FEED);
    expect((await run()).counts).toMatchObject({ unchangedBySeal: N, updated: 0 });
    // the fingerprint of before put back in its hash: the seal does not stand, and the listing is written again
    await store.set(fingerprintNamespace(FEED), [[String(row(4).MLSNumber), before!]]);
    const again = await run();
    expect(again.counts.unchangedBySeal).toBeUndefined();
    expect(again.counts).toMatchObject({ updated: 1 });
    expect(await store.get(SEAL_NAMESPACE, FEED)).toBe(sealed);
    expect((await run()).counts).toMatchObject({ unchangedBySeal: N, updated: 0 });
  });
});
