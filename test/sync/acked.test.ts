// settle/acked.ts: the acknowledged writes of a lane recorded in batches (issue 55, point 1). What a
// crash can lose is bounded: a full batch is applied at once, a partial one within ACK_EVERY_MS,
// and drain() leaves nothing waiting (the lane's commit comes after). The same on Redis.
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { createMemoryStore } from '../../src/state/memory-store.js';
import { createRedisStore } from '../../src/state/redis-store.js';
import type { KvStore, StateChange } from '../../src/state/kv-store.js';
import { ACK_BATCH, ACK_EVERY_MS, recordAcked } from '../../src/sync/settle/acked.js';
import { fingerprintNamespace, unlistedNamespace } from '../../src/sync/model/state-names.js';

/** `store`, its applies counted */
function counted(store: KvStore): KvStore & { applies: number } {
  const c = Object.assign(Object.create(store) as KvStore, { applies: 0 });
  c.apply = (changes: readonly StateChange[]) => {
    c.applies++;
    return store.apply(changes);
  };
  return c;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function recordsInBatches(store: KvStore) {
  const s = counted(store);
  const acked = recordAcked(s, 'lane-a', (err) => {
    throw err;
  });
  for (let i = 0; i < ACK_BATCH - 1; i++) acked.add(`K${i}`, `fp${i}`, '{}');
  await sleep(0);
  expect(s.applies).toBe(0);
  acked.add(`K${ACK_BATCH - 1}`, `fp${ACK_BATCH - 1}`, '{"AreaUnit":"Square Feet"}');
  await sleep(0);
  // a full batch at once, in one apply
  expect(s.applies).toBe(1);
  expect((await store.getAll(fingerprintNamespace('lane-a'))).size).toBe(ACK_BATCH);
  expect(await store.get(unlistedNamespace('lane-a'), `K${ACK_BATCH - 1}`)).toBe('{"AreaUnit":"Square Feet"}');

  // a partial batch within ACK_EVERY_MS
  acked.add('late', 'fp-late', '{}');
  await sleep(ACK_EVERY_MS + 50);
  expect(s.applies).toBe(2);
  expect(await store.get(fingerprintNamespace('lane-a'), 'late')).toBe('fp-late');

  // drain: nothing left waiting
  acked.add('last', 'fp-last', '{}');
  await acked.drain();
  expect(await store.get(fingerprintNamespace('lane-a'), 'last')).toBe('fp-last');
  await acked.drain();
  expect(s.applies).toBe(3);
}

describe('acknowledged writes recorded ahead of the commit', () => {
  it('in batches of ACK_BATCH or within ACK_EVERY_MS, and drained before the commit (memory store)', () =>
    recordsInBatches(createMemoryStore('memory')));

  it('the same on Redis', async () => {
    const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
    const prefix = `test-acked-${randomUUID()}`;
    try {
      await recordsInBatches(createRedisStore(redis, prefix));
    } finally {
      const keys = await redis.keys(`${prefix}:*`);
      if (keys.length) await redis.del(...keys);
      await redis.quit();
    }
  });

  it('a failed apply is told and the later ones are made', async () => {
    const store = createMemoryStore('memory');
    const failing: KvStore = Object.create(store) as KvStore;
    let fail = true;
    failing.apply = (changes) => (fail ? Promise.reject(new Error('disk full')) : store.apply(changes));
    const errors: unknown[] = [];
    const acked = recordAcked(failing, 'lane-a', (err) => errors.push(err));
    acked.add('K1', 'fp1', '{}');
    await acked.drain();
    expect(errors).toHaveLength(1);
    fail = false;
    acked.add('K2', 'fp2', '{}');
    await acked.drain();
    expect([...(await store.getAll(fingerprintNamespace('lane-a'))).keys()]).toEqual(['K2']);
  });
});
