// The Redis connections of feedsync, whatever the topology the config names: one Redis (`redis.url`),
// a Redis Cluster (`redis.cluster`) or a primary with replicas behind Sentinel (`redis.sentinel`),
// each optionally over TLS (`rediss://`, `redis.tls`) with an ACL user. Every connection is made
// here, from one RedisSettings (settings.ts); every key is named in src/redis/keys.ts from its root.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { ConnectionOptions } from 'node:tls';
import { Redis, type ClusterOptions, type Command, type RedisOptions } from 'ioredis';
import type { RedisClient } from './client.js';
import { DEFAULT_REDIS_URL } from './config-schema.js';
import { redisFailure } from './connection-errors.js';
import { RedisUnavailableError, type RedisPlace } from '../errors.js';
import { within } from './deadline.js';
import type { RedisSettings } from './settings.js';
import { SettledCluster } from './settled-cluster.js';

export type { RedisClient };

/** How long a one-shot command's connection ('command') waits for Redis to answer one call. */
export const COMMAND_ANSWER_MS = 15_000;
/** ... and once one call went unanswered, until Redis answers one again */
const SILENT_ANSWER_MS = 2_000;

export interface ConnectOptions {
  /** CLIENT SETNAME: who this connection is in CLIENT LIST */
  name?: string;
  /**
   * 'worker' (the default): a command waits through any outage (BullMQ requires
   * `maxRetriesPerRequest: null` of the connections its workers block on). 'command': a command
   * fails after about 20 s of reconnecting, so a one-shot command ends with an error, not a hang.
   */
  purpose?: 'worker' | 'command';
}

/** The ioredis settings of one URL: host, port, db, the ACL user and TLS. */
interface Endpoint {
  host: string;
  port: number;
  db: number;
  username?: string;
  password?: string;
  tls: boolean;
}

function endpointOf(url: string): Endpoint {
  const u = new URL(url);
  const decode = (s: string) => (s ? decodeURIComponent(s) : undefined);
  return {
    host: u.hostname.replace(/^\[|\]$/g, '') || '127.0.0.1',
    port: Number(u.port || 6379),
    db: Number(u.pathname.slice(1) || 0),
    username: decode(u.username),
    password: decode(u.password),
    tls: u.protocol === 'rediss:',
  };
}

function tlsOptions(settings: RedisSettings, urlTls: boolean): ConnectionOptions | undefined {
  const { tls } = settings.config;
  if (!tls && !urlTls) return undefined;
  return {
    ...(tls?.ca && { ca: readFileSync(resolve(settings.dir, tls.ca)) }),
    rejectUnauthorized: tls?.rejectUnauthorized ?? true,
  };
}

function retryOptions(
  purpose: ConnectOptions['purpose'],
): Pick<RedisOptions, 'maxRetriesPerRequest' | 'retryStrategy' | 'commandTimeout'> {
  // reconnect quickly at first (a failover takes a few seconds), then every second, without end
  const retryStrategy = (attempt: number) => Math.min(attempt * 100, 1000);
  if (purpose !== 'command') return { retryStrategy, maxRetriesPerRequest: null };
  // A one-shot command's every call ends: maxRetriesPerRequest ends those queued while the connection
  // reconnects, but not one sent before it dropped (kept to send again once it is ready, which a
  // Redis refusing it never makes it) nor one sent to a Redis that holds the connection and answers
  // nothing (hung, SIGSTOPped, partitioned): COMMAND_ANSWER_MS ends each of those.
  return { retryStrategy, maxRetriesPerRequest: 20, commandTimeout: COMMAND_ANSWER_MS };
}

/**
 * A one-shot command's connection to one Redis (or a Sentinel group's primary): every call that fails
 * for Redis itself (no answer within COMMAND_ANSWER_MS, the credentials refused, the reconnects spent)
 * fails with RedisUnavailableError naming the Redis and what to do, whichever part of feedsync sent it
 * (the state, the change log, a lock, a request budget), and in a pipeline or a MULTI alike: ioredis
 * settles each of those through its Command's reject. Once a call went unanswered, and until Redis
 * answers one again, a call has SILENT_ANSWER_MS: the command's ending steps (the change log, the run
 * record, the lock) each waited the whole bound again, 110 s in all for a sync of one feed.
 */
class CommandRedis extends Redis {
  readonly #at: RedisPlace;
  readonly #mapped = new WeakSet<Command>();
  /** a call went unanswered, and none was answered since */
  #silent = false;
  constructor(options: RedisOptions, at: RedisPlace) {
    super(options);
    this.#at = at;
  }
  override sendCommand(command: Command, stream?: Parameters<Redis['sendCommand']>[1]): unknown {
    // (a command is sent again after a reconnect: it is wrapped once)
    if (!this.#mapped.has(command)) {
      this.#mapped.add(command);
      const answerIn = this.#silent
        ? `${SILENT_ANSWER_MS / 1000} s, none since a call went unanswered ${COMMAND_ANSWER_MS / 1000} s`
        : `${COMMAND_ANSWER_MS / 1000} s`;
      if (this.#silent) command.setTimeout(SILENT_ANSWER_MS); // (before ioredis sets its own: the first one holds)
      const { resolve, reject } = command;
      command.resolve = (value: unknown) => {
        this.#silent = false;
        resolve(value);
      };
      command.reject = (err) => {
        const failure = redisFailure(err, this.#at, answerIn);
        this.#silent = failure instanceof RedisUnavailableError && failure.detail.startsWith('no answer');
        reject(failure);
      };
    }
    return super.sendCommand(command, stream);
  }
}

/** A connection to the configured Redis (any topology); the caller closes it (closeRedis). */
export function createRedis(settings: RedisSettings, opts: ConnectOptions = {}): RedisClient {
  const { config } = settings;
  const common: RedisOptions = { connectionName: opts.name, ...retryOptions(opts.purpose) };
  if (config.cluster) {
    const nodes = config.cluster.map(endpointOf);
    const first = nodes[0]!;
    const tls = tlsOptions(
      settings,
      nodes.some((n) => n.tls),
    );
    const clusterOptions: ClusterOptions = {
      redisOptions: {
        ...common,
        username: config.username ?? first.username,
        password: config.password ?? first.password,
        tls,
      },
      // Over TLS the nodes are reached by the names the cluster announces, so that their certificates
      // (issued for names, as on ElastiCache) can be checked: ioredis's README, "AWS ElastiCache
      // Clusters with TLS", asks for a lookup that keeps the name.
      ...(tls && {
        dnsLookup: (address: string, callback: (err: null, address: string) => void) => callback(null, address),
      }),
      clusterRetryStrategy: (attempt) => Math.min(attempt * 100, 1000),
      // a node restarting or a slot moving answers CLUSTERDOWN/TRYAGAIN for a moment: wait it out
      retryDelayOnClusterDown: 200,
      retryDelayOnTryAgain: 200,
      retryDelayOnFailover: 200,
      maxRedirections: opts.purpose === 'command' ? 64 : 1000,
    };
    // its connect() settles once the cluster is ready, as BullMQ's reconnection of a blocking connection needs
    return new SettledCluster(
      nodes.map((n) => ({ host: n.host, port: n.port })),
      clusterOptions,
    );
  }
  if (config.sentinel) {
    const s = config.sentinel;
    const tls = tlsOptions(settings, false);
    const sentinelTls = s.tls ?? tls !== undefined;
    // ioredis speaks TLS to the primary only with enableTLSForSentinelMode (and `tls`), and to the
    // Sentinels with `sentinelTLS` (SentinelConnector: connectToSentinel, connect)
    return connect(settings, opts, {
      ...common,
      sentinels: s.sentinels.map((hp) => {
        const at = hp.lastIndexOf(':');
        return { host: hp.slice(0, at), port: Number(hp.slice(at + 1)) };
      }),
      name: s.name,
      username: config.username,
      password: s.password ?? config.password,
      sentinelUsername: s.sentinelUsername,
      sentinelPassword: s.sentinelPassword,
      ...(tls && { tls, enableTLSForSentinelMode: true }),
      ...(sentinelTls && { sentinelTLS: tls ?? {} }),
      sentinelRetryStrategy: (attempt) => Math.min(attempt * 100, 1000),
      // A primary that died: the connection drops and the reconnect asks the Sentinels, who name the
      // promoted replica once it is promoted. A primary demoted on purpose (SENTINEL FAILOVER, a
      // managed service's switch) stays up as a replica and answers writes with READONLY: reconnect
      // (asking the Sentinels again) and resend the command. ioredis's `failoverDetector` is left off:
      // its listener is async and a connection closed while it subscribes rejects with no handler.
      reconnectOnError: (err) => (err.message.startsWith('READONLY') ? 2 : false),
    });
  }
  const e = endpointOf(config.url ?? DEFAULT_REDIS_URL);
  return connect(settings, opts, {
    ...common,
    host: e.host,
    port: e.port,
    db: e.db,
    username: config.username ?? e.username,
    password: config.password ?? e.password,
    tls: tlsOptions(settings, e.tls),
  });
}

/** one Redis (or a Sentinel group): a command's own (CommandRedis), or a worker's, which waits */
function connect(settings: RedisSettings, opts: ConnectOptions, options: RedisOptions): Redis {
  return opts.purpose === 'command' ? new CommandRedis(options, settings) : new Redis(options);
}

/**
 * Close a connection so that it ends, whatever state it is in: QUIT when it is ready (bounded: a
 * Redis gone quiet never answers; `quit: false` for a connection blocked in a read, which QUIT would
 * wait behind), then disconnect. A connection that is not ready is not asked
 * anything: Redis refusing it (NOAUTH once a password is set) answers QUIT's queued turn never. Between
 * two attempts to reconnect (`reconnecting`, no socket), ioredis's disconnect only cancels the next
 * attempt: the connection stays `reconnecting` for good, the commands queued on it never settle, and
 * whoever waits on one of them (a reader's watchdog, a close) keeps the process alive. So the next
 * attempt (at most a second away: retryOptions) is waited for, within `timeoutMs`, and the
 * disconnect then ends the connection and fails what was queued.
 */
export async function closeRedis(
  redis: RedisClient,
  { timeoutMs = 1000, quit = true }: { timeoutMs?: number; quit?: boolean } = {},
): Promise<void> {
  if (redis.status === 'end') return;
  if (quit && redis.status === 'ready') {
    const quitted = redis.quit().then(
      () => undefined,
      () => undefined,
    );
    await within(quitted, timeoutMs, undefined);
  }
  if (redis.status === 'reconnecting') {
    let onConnecting = () => {};
    await within(
      new Promise<void>((resolve) => redis.once('connecting', (onConnecting = resolve))),
      timeoutMs,
      undefined,
    );
    redis.off('connecting', onConnecting);
  }
  redis.disconnect();
}
