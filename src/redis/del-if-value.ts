import type { RedisClient } from './connection.js';

// KEYS: the key; ARGV: the value it must still hold. One script: a GET then a DEL from here would
// let a key that changed hands in between be deleted from its new holder.
const DEL_IF_VALUE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`;

/** Deletes `key` only while it holds `value` (a mark or a right still this caller's); whether it did. */
export async function delIfValue(redis: RedisClient, key: string, value: string): Promise<boolean> {
  return (await redis.eval(DEL_IF_VALUE, 1, key, value)) === 1;
}
