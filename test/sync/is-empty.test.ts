// Emptiness of a map without its size (sync/util/collections.ts isEmpty): a stored namespace counts
// its keys in the state file at each `size` (state/stored-entries.ts); the lanes only ask whether it
// holds anything (lane-setup.ts, the display rules; lane-plan.ts, the sold windows). Held to
// `size === 0` over each kind of store: the state file, Redis and memory.
import '../setup/needs-redis.js';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createFileStore } from '../../src/state/file-store.js';
import type { KvStore } from '../../src/state/kv-store.js';
import { createMemoryStore } from '../../src/state/memory-store.js';
import { createRedisStore } from '../../src/state/redis-store.js';
import { isEmpty } from '../../src/sync/util/collections.js';
import { dropPrefix, testRedis, uniquePrefix } from '../queue/helpers.js';

/** a Map whose size cannot be asked */
class Uncounted<K, V> extends Map<K, V> {
  override get size(): number {
    throw new Error('size asked');
  }
}

/** each kind of store, opened, and what closes it */
const kinds: Array<[string, () => Promise<{ store: KvStore; close(): Promise<void> }>]> = [
  [
    'the state file',
    async () => {
      const dir = await mkdtemp(join(tmpdir(), 'feedsync-empty-'));
      const store = await createFileStore(join(dir, 'state.lmdb'));
      return {
        store,
        close: async () => {
          await store.close();
          await rm(dir, { recursive: true, force: true });
        },
      };
    },
  ],
  [
    'Redis',
    async () => {
      const redis = testRedis();
      const prefix = uniquePrefix();
      return {
        store: createRedisStore(redis, prefix),
        close: async () => {
          await dropPrefix(redis, prefix);
          await redis.quit();
        },
      };
    },
  ],
  ['memory', async () => ({ store: createMemoryStore(), close: async () => {} })],
];

describe('isEmpty', () => {
  it.each(kinds)(
    'answers as size === 0 for a stored namespace of %s, empty, of one entry and beside a neighbour',
    async (_kind, open) => {
      const { store, close } = await open();
      try {
        await store.set('fingerprints:a', [['K1', 'f1']]);
        await store.set('fingerprints:b', [
          ['K1', 'f1'],
          ['K2', 'f2'],
        ]);
        for (const ns of ['fingerprints:a', 'fingerprints:b', 'fingerprints:', 'fingerprints:c']) {
          const stored = await store.getAll(ns);
          expect(isEmpty(stored), ns).toBe(stored.size === 0);
        }
      } finally {
        await close();
      }
    },
  );

  it('never asks the size', () => {
    expect(isEmpty(new Uncounted())).toBe(true);
    expect(isEmpty(new Uncounted([['K1', 'f1']]))).toBe(false);
  });
});
