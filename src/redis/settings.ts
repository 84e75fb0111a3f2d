// What Redis a config names (settings of a connection, its key root, where it is for messages),
// apart from the connections themselves (connection.ts): a run without Redis reads these settings
// and never loads ioredis. Redis is used only where it is configured (the config's `redis`, else
// REDIS_URL): a command that needs it with neither refuses (redisSettings), it never guesses one.
import { ConfigError } from '../errors.js';
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
  from: 'config' | 'REDIS_URL';
  /**
   * what gave the connection settings, for a fix: `redis.url (/etc/feedsync.yaml:12)`, with `, from
   * $VAR` when the config reads it from the environment, or `REDIS_URL`: never both, as only one is read
   */
  source: string;
  /** the config's folder: `redis.tls.ca` is relative to it */
  dir: string;
}

/** Of a loaded config (config/schema.ts LoadedConfig): its `redis` section, its folder and (for messages) its file. */
export interface RedisOfConfig {
  config: { redis?: RedisConfig };
  dir: string;
  file?: string;
  /** LoadedConfig's: the line of the `redis` keys, and the variables they were read from */
  lineOf?: (path: ReadonlyArray<PropertyKey>) => number | undefined;
  fromEnv?: ReadonlyMap<string, readonly string[]>;
}

/** Whether a command has a Redis to use: the config's `redis` section, or REDIS_URL. */
export function redisConfigured(loaded: RedisOfConfig): boolean {
  return Boolean(loaded.config.redis || process.env.REDIS_URL);
}

/**
 * Redis of the worker, the commands and the runtime: the config's, else REDIS_URL (`from` says
 * which). With neither, a ConfigError (exit 2) of one line naming `command`: nothing guesses a
 * local Redis that nothing configured (a pause written there would stop nothing).
 */
export function redisSettings(loaded: RedisOfConfig, command = 'this command'): RedisSettings {
  const configured = loaded.config.redis;
  const envUrl = process.env.REDIS_URL || undefined;
  if (configured) return redisSettingsOf(configured, loaded.dir, 'config', configSource(loaded, configured));
  if (!envUrl) throw new ConfigError(noRedisMessage(loaded, command), loaded.file);
  return redisSettingsOf({ url: envUrl, prefix: DEFAULT_PREFIX }, loaded.dir, 'REDIS_URL');
}

/** `redis.url (/etc/feedsync.yaml:12, from $QUEUE_REDIS)`: the key that names the Redis, where it is written, and the variable it reads. */
function configSource(loaded: RedisOfConfig, config: RedisConfig): string {
  const key = config.cluster ? 'cluster' : config.sentinel ? 'sentinel' : config.url !== undefined ? 'url' : undefined;
  const path = key ? ['redis', key] : ['redis'];
  const line = loaded.lineOf?.(path);
  const place = loaded.file ? `${loaded.file}${line !== undefined ? `:${line}` : ''}` : undefined;
  const named = path.join('.');
  const variables = [...(loaded.fromEnv ?? [])]
    .filter(([p]) => p === named || p.startsWith(`${named}.`) || p.startsWith(`${named}[`))
    .flatMap(([, vars]) => vars);
  const from = [...new Set(variables)].map((v) => `$${v}`).join(', ');
  const words = [place, from && `from ${from}`].filter(Boolean).join(', ');
  return `${named}${words ? ` (${words})` : ''}`;
}

function noRedisMessage(loaded: RedisOfConfig, command: string): string {
  const file = loaded.file ?? 'the config';
  return `${command} needs Redis, and ${file} has no redis section and REDIS_URL is not set: add \`redis: { url: redis://HOST:6379 }\` (the Redis the workers use) or set REDIS_URL; nothing was done`;
}

/** "Redis redis://host:6379 (prefix feedsync, from REDIS_URL)": which Redis a command used, for its output. */
export function redisNamed(settings: Pick<RedisSettings, 'where' | 'prefix' | 'from'>): string {
  return `Redis ${settings.where} (prefix ${settings.prefix}${settings.from === 'REDIS_URL' ? ', from REDIS_URL' : ''})`;
}

/** The settings of a parsed `redis` section. */
export function redisSettingsOf(
  config: RedisConfig,
  dir: string,
  from: RedisSettings['from'] = 'config',
  source: string = from === 'REDIS_URL' ? 'REDIS_URL' : 'redis in the config',
): RedisSettings {
  const topology: Topology = config.cluster ? 'cluster' : config.sentinel ? 'sentinel' : 'single';
  const prefix = keyRoot(config.prefix, topology);
  return { config, topology, prefix, keys: keysOf(prefix), where: describeRedis(config), from, source, dir };
}

/** The topology and its addresses as they may be shown: never a password, never a user. */
export function describeRedis(config: RedisConfig): string {
  const tls = config.tls ? ' (TLS)' : '';
  if (config.cluster) return `cluster ${config.cluster.map(maskUrl).join(', ')}${tls}`;
  if (config.sentinel) return `sentinel ${config.sentinel.name} at ${config.sentinel.sentinels.join(', ')}${tls}`;
  return `${maskUrl(config.url ?? DEFAULT_REDIS_URL)}${tls}`;
}
