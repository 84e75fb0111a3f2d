import type { RedisClient } from '../redis/client.js';
import { keysOf } from '../redis/keys.js';
import { refuseLongKey, refuseLongKeys, type KvStore, type StateChange } from './kv-store.js';

const CHUNK = 1000;

/** HSET field ARGV[1] to ARGV[3] only if it holds ARGV[2] (ARGV[4] '0': only if it is absent). */
const SWAP = `
local cur = redis.call('HGET', KEYS[1], ARGV[1])
if ARGV[4] == '0' then
  if cur ~= false then return 0 end
elseif cur ~= ARGV[2] then
  return 0
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
return 1`;

/** `items` in arrays of at most `size`, read as they come (a change's entries may be a generator). */
function* inChunks<T>(items: Iterable<T>, size: number): Generator<T[]> {
  let chunk: T[] = [];
  for (const item of items) {
    chunk.push(item);
    if (chunk.length >= size) {
      yield chunk;
      chunk = [];
    }
  }
  if (chunk.length) yield chunk;
}

/**
 * The hash field of a key. Redis keeps bytes and the client writes a string as UTF-8, in which a
 * lone surrogate (not well-formed text) becomes U+FFFD: two keys would share a field and the key
 * read back would not be the one written. Such a key is kept as NUL + its JSON (which spells a
 * lone surrogate as \uXXXX), and so is a key that starts with NUL and a quote, so that no key is
 * read as another. Every other key is its own field, as before.
 */
const ESCAPED = '\u0000"';
const fieldOf = (key: string): string =>
  key.isWellFormed() && !key.startsWith(ESCAPED) ? key : `\u0000${JSON.stringify(key)}`;
function keyOf(field: string): string {
  if (!field.startsWith(ESCAPED)) return field;
  try {
    const key: unknown = JSON.parse(field.slice(1));
    return typeof key === 'string' ? key : field;
  } catch {
    return field; // (a field an earlier feedsync wrote as it was)
  }
}

/** A change's sets as hash fields, each key checked for length (kv-store.ts). */
function* fieldsSet(ns: string, entries: Iterable<readonly [string, string]>): Generator<[string, string]> {
  for (const [k, v] of refuseLongKeys(ns, entries)) yield [fieldOf(k), v];
}

/**
 * State in Redis: one hash per namespace under `prefix` (the key root: hash-tagged on a cluster, so
 * that a commit's MULTI over several namespaces is one slot). The connection is the caller's to close.
 * `where` names the Redis in the report.
 */
export function createRedisStore(redis: RedisClient, prefix = 'feedsync', where = 'redis'): KvStore {
  const keys = keysOf(prefix);
  const key = keys.state;
  const apply = async (changes: readonly StateChange[]) => {
    const tx = redis.multi();
    let queued = 0;
    try {
      for (const c of changes) {
        for (const pairs of inChunks(fieldsSet(c.ns, c.set ?? []), CHUNK)) {
          tx.hset(key(c.ns), ...pairs.flat());
          queued++;
        }
        for (const fields of inChunks(c.delete ?? [], CHUNK)) {
          tx.hdel(key(c.ns), ...fields.map(fieldOf));
          queued++;
        }
      }
    } catch (err) {
      tx.discard(); // a change that throws (a key too long, an iterable that fails) sends nothing
      throw err;
    }
    if (queued === 0) {
      tx.discard();
      return;
    }
    const results = await tx.exec();
    // EXEC runs every queued command; one that failed (wrong type) is reported, not hidden
    const failed = results?.find(([err]) => err);
    if (!results)
      throw new Error(`state in Redis (${keys.statePattern}) was not written: the transaction was discarded`);
    if (failed) throw new Error(`state in Redis (${keys.statePattern}): a write failed: ${failed[0]!.message}`);
  };
  return {
    location: `${where} (${keys.statePattern})`,
    getAll: async (ns) => new Map(Object.entries(await redis.hgetall(key(ns))).map(([f, v]) => [keyOf(f), v])),
    get: async (ns, k) => (await redis.hget(key(ns), fieldOf(k))) ?? undefined,
    set: (ns, entries) => apply([{ ns, set: entries }]),
    delete: (ns, keys) => apply([{ ns, delete: keys }]),
    apply,
    // (a MULTI is already off this thread: sent, and its answer awaited)
    applyInBackground: apply,
    swap: async (ns, k, expected, next) => {
      const field = fieldOf(refuseLongKey(ns, k));
      return (
        (await redis.eval(SWAP, 1, key(ns), field, expected ?? '', next, expected === undefined ? '0' : '1')) === 1
      );
    },
    close: async () => {},
  };
}
