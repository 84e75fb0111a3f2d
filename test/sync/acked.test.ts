// settle/acked.ts: the acknowledged writes of a lane recorded ahead of its commit (issue 55, point 1),
// each apply the store's applyInBackground, one at a time. An acknowledgement waited for (an
// update's: its write's slot is held until then) is applied at once, and what lands during an apply
// goes in the next; the others wait for ACK_BATCH of them or ACK_EVERY_MS. drain() leaves nothing
// waiting (the lane's commit comes after). The same on Redis and on the state file.
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { createFileStore } from '../../src/state/file-store.js';
import { createMemoryStore } from '../../src/state/memory-store.js';
import { createRedisStore } from '../../src/state/redis-store.js';
import type { KvStore, StateChange } from '../../src/state/kv-store.js';
import { ACK_BATCH, ACK_EVERY_MS, recordAcked } from '../../src/sync/settle/acked.js';
import { fingerprintNamespace, unlistedNamespace } from '../../src/sync/model/state-names.js';

/** `store`, its background applies counted as they start (and none other made); while `gate` is set, they wait for it */
function counted(store: KvStore): KvStore & { applies: number; gate?: Promise<void> } {
  const c: KvStore & { applies: number; gate?: Promise<void> } = Object.assign(Object.create(store) as KvStore, {
    applies: 0,
  });
  c.applyInBackground = async (changes: readonly StateChange[]) => {
    c.applies++;
    await c.gate;
    return store.applyInBackground(changes);
  };
  c.apply = () => Promise.reject(new Error('acknowledgements are applied in the background'));
  return c;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const fingerprints = (store: KvStore) => store.getAll(fingerprintNamespace('lane-a'));

async function recordsAsTold(store: KvStore) {
  const s = counted(store);
  const acked = recordAcked(s, 'lane-a', (err) => {
    throw err;
  });
  // not waited for: ACK_BATCH of them at once, in one apply
  for (let i = 0; i < ACK_BATCH - 1; i++) void acked.add(`K${i}`, `fp${i}`, '{}', false);
  await sleep(0);
  expect(s.applies).toBe(0);
  await acked.add(`K${ACK_BATCH - 1}`, `fp${ACK_BATCH - 1}`, '{"AreaUnit":"Square Feet"}', false);
  expect(s.applies).toBe(1);
  expect((await fingerprints(store)).size).toBe(ACK_BATCH);
  expect(await store.get(unlistedNamespace('lane-a'), `K${ACK_BATCH - 1}`)).toBe('{"AreaUnit":"Square Feet"}');

  // fewer: within ACK_EVERY_MS
  const late = acked.add('late', 'fp-late', '{}', false);
  await sleep(0);
  expect(s.applies).toBe(1);
  await sleep(ACK_EVERY_MS + 50);
  expect(s.applies).toBe(2);
  await late;
  expect(await store.get(fingerprintNamespace('lane-a'), 'late')).toBe('fp-late');

  // waited for: at once, with those told in the same turn (one apply); resolved once in the store
  void acked.add('early', 'fp-early', '{}', false);
  const waited = [acked.add('U1', 'fp-u1', '{}', true), acked.add('U2', 'fp-u2', '{}', true)];
  await Promise.all(waited);
  expect(s.applies).toBe(3);
  expect(await store.get(fingerprintNamespace('lane-a'), 'U2')).toBe('fp-u2');
  expect(await store.get(fingerprintNamespace('lane-a'), 'early')).toBe('fp-early');

  // one apply at a time: what is told during one goes in the next, started once it ends
  let open = () => {};
  s.gate = new Promise((resolve) => (open = resolve));
  const first = acked.add('A1', 'fp-a1', '{}', true);
  await sleep(0);
  expect(s.applies).toBe(4);
  const second = [acked.add('A2', 'fp-a2', '{}', true), acked.add('A3', 'fp-a3', '{}', true)];
  await sleep(20);
  expect(s.applies).toBe(4);
  open();
  await first;
  await Promise.all(second);
  expect(s.applies).toBe(5);
  expect(await store.get(fingerprintNamespace('lane-a'), 'A3')).toBe('fp-a3');

  // drain: nothing left waiting
  void acked.add('last', 'fp-last', '{}', false);
  await acked.drain();
  expect(await store.get(fingerprintNamespace('lane-a'), 'last')).toBe('fp-last');
  await acked.drain();
  expect(s.applies).toBe(6);
  expect((await fingerprints(store)).size).toBe(ACK_BATCH + 8);
}

describe('acknowledged writes recorded ahead of the commit', () => {
  it('waited for: at once, one apply at a time; else in ACK_BATCH or within ACK_EVERY_MS; drained before the commit (memory)', () =>
    recordsAsTold(createMemoryStore('memory')));

  it('the same on Redis', async () => {
    const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
    const prefix = `test-acked-${randomUUID()}`;
    try {
      await recordsAsTold(createRedisStore(redis, prefix));
    } finally {
      const keys = await redis.keys(`${prefix}:*`);
      if (keys.length) await redis.del(...keys);
      await redis.quit();
    }
  });

  it('the same on the state file: committed by lmdb, read back after a reopen', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'acked-'));
    try {
      const path = join(dir, 'state.lmdb');
      const store = await createFileStore(path);
      await recordsAsTold(store);
      await store.close();
      const again = await createFileStore(path);
      expect((await fingerprints(again)).size).toBe(ACK_BATCH + 8);
      await again.close();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('a failed apply is told, its waiters freed, and the later ones are made', async () => {
    const store = createMemoryStore('memory');
    const failing: KvStore = Object.create(store) as KvStore;
    let fail = true;
    failing.applyInBackground = (changes) =>
      fail ? Promise.reject(new Error('disk full')) : store.applyInBackground(changes);
    const errors: unknown[] = [];
    const acked = recordAcked(failing, 'lane-a', (err) => errors.push(err));
    await acked.add('K1', 'fp1', '{}', true);
    expect(errors).toHaveLength(1);
    fail = false;
    void acked.add('K2', 'fp2', '{}', false);
    await acked.drain();
    expect([...(await fingerprints(store)).keys()]).toEqual(['K2']);
  });
});
