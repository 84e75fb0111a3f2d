import type { Redis } from 'ioredis';
import type { KvStore } from './kv-store.js';

const CHUNK = 1000;

/** State in Redis: one hash per namespace under `prefix`. The connection is the caller's to close. */
export function createRedisStore(redis: Redis, prefix = 'feedsync'): KvStore {
  const key = (ns: string) => `${prefix}:state:${ns}`;
  const { host, port } = redis.options;
  return {
    location: `redis://${host ?? '127.0.0.1'}:${port ?? 6379} (${prefix}:state:*)`,
    getAll: async (ns) => new Map(Object.entries(await redis.hgetall(key(ns)))),
    get: async (ns, k) => (await redis.hget(key(ns), k)) ?? undefined,
    set: async (ns, entries) => {
      let batch: string[] = [];
      for (const [k, v] of entries) {
        batch.push(k, v);
        if (batch.length >= CHUNK * 2) {
          await redis.hset(key(ns), ...batch);
          batch = [];
        }
      }
      if (batch.length) await redis.hset(key(ns), ...batch);
    },
    delete: async (ns, keys) => {
      const all = [...keys];
      for (let i = 0; i < all.length; i += CHUNK) await redis.hdel(key(ns), ...all.slice(i, i + CHUNK));
    },
    close: async () => {},
  };
}
