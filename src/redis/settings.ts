// What Redis a config names (settings of a connection, its key root, where it is for messages),
// apart from the connections themselves (connection.ts): a run without Redis reads these settings
// and never loads ioredis.
import { maskUrl } from '../secrets.js';
import { DEFAULT_PREFIX, DEFAULT_REDIS_URL, type RedisConfig } from './config-schema.js';
import { keyRoot, keysOf, type Keys, type Topology } from './keys.js';

export interface RedisSettings {
  config: RedisConfig;
  topology: Topology;
  /** the root of every key (the prefix; `{prefix}` on a cluster): BullMQ's prefix and keys.ts's */
  prefix: string;
  keys: Keys;
  /** where, for messages: no password, no user */
  where: string;
  from: 'config' | 'REDIS_URL' | 'default';
  /** the config's folder: `redis.tls.ca` is relative to it */
  dir: string;
}

/** Of a loaded config (config/schema.ts LoadedConfig): its `redis` section and its folder. */
export interface RedisOfConfig {
  config: { redis?: RedisConfig };
  dir: string;
}

/** Redis of the worker, the commands and the runtime: the config's, else REDIS_URL, else the local default (`from` says which). */
export function redisSettings(loaded: RedisOfConfig): RedisSettings {
  const configured = loaded.config.redis;
  const envUrl = process.env.REDIS_URL || undefined;
  const config: RedisConfig = configured ?? { url: envUrl ?? DEFAULT_REDIS_URL, prefix: DEFAULT_PREFIX };
  return redisSettingsOf(config, loaded.dir, configured ? 'config' : envUrl ? 'REDIS_URL' : 'default');
}

/** The settings of a parsed `redis` section. */
export function redisSettingsOf(config: RedisConfig, dir: string, from: RedisSettings['from'] = 'config'): RedisSettings {
  const topology: Topology = config.cluster ? 'cluster' : config.sentinel ? 'sentinel' : 'single';
  const prefix = keyRoot(config.prefix, topology);
  return { config, topology, prefix, keys: keysOf(prefix), where: describeRedis(config), from, dir };
}

/** The topology and its addresses as they may be shown: never a password, never a user. */
export function describeRedis(config: RedisConfig): string {
  const tls = config.tls ? ' (TLS)' : '';
  if (config.cluster) return `cluster ${config.cluster.map(maskUrl).join(', ')}${tls}`;
  if (config.sentinel) return `sentinel ${config.sentinel.name} at ${config.sentinel.sentinels.join(', ')}${tls}`;
  return `${maskUrl(config.url ?? DEFAULT_REDIS_URL)}${tls}`;
}
