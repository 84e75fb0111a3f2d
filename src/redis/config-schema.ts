// feedsync.yaml's `redis` section (config/schema.ts composes it): one Redis, a Cluster or a
// primary behind Sentinel, each optionally over TLS, and the prefix of every key.
import { z } from 'zod';

/** The root of every key when the config names none (queues, state, run history, change log). */
export const DEFAULT_PREFIX = 'feedsync';

export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';

/** A redis:// or rediss:// URL (rediss: TLS); no database number on a cluster (it has only 0). */
const RedisUrl = z
  .string()
  .regex(/^rediss?:\/\/[^\s]+$/, 'must be a redis:// or rediss:// URL like redis://user:password@host:6379');

/** host:port of a Sentinel */
const HostPort = z.string().regex(/^[^\s:/]+:\d{1,5}$/, 'must be host:port, like sentinel-1.internal:26379');

export const RedisConfig = z
  .strictObject({
    url: RedisUrl.optional().describe('one Redis (or a proxy); rediss:// for TLS'),
    cluster: z.array(RedisUrl).min(1).optional().describe('startup nodes of a Redis Cluster (any few of its nodes)'),
    sentinel: z
      .strictObject({
        sentinels: z.array(HostPort).min(1).describe('the Sentinels, host:port each'),
        name: z.string().min(1).describe('the master group name the Sentinels watch'),
        password: z.string().optional().describe('password of the primary and replicas (else redis.password)'),
        sentinelUsername: z.string().optional().describe('ACL user of the Sentinels themselves'),
        sentinelPassword: z.string().optional().describe('password of the Sentinels themselves'),
        tls: z.boolean().optional().describe('the Sentinels speak TLS too (default: when redis.tls is set)'),
      })
      .optional()
      .describe('a primary with replicas behind Redis Sentinel: the worker follows a failover'),
    username: z.string().optional().describe('ACL user (also accepted in the URL)'),
    password: z.string().optional().describe('password of the ACL user or requirepass (also accepted in the URL)'),
    tls: z
      .strictObject({
        ca: z
          .string()
          .optional()
          .describe('PEM file of the CA that signed the server certificates (relative to the config)'),
        rejectUnauthorized: z.boolean().default(true).describe('false accepts any certificate (testing only)'),
      })
      .optional()
      .describe('TLS on every connection (rediss:// URLs turn it on too)'),
    prefix: z
      .string()
      .regex(/^[^{}]+$/, 'no { or }: feedsync adds the hash tag itself on a cluster')
      .default(DEFAULT_PREFIX)
      .describe('prefix of every Redis key (queues and state); on a cluster it is the hash tag {prefix}'),
  })
  .superRefine((r, ctx) => {
    const given = (['url', 'cluster', 'sentinel'] as const).filter((k) => r[k] !== undefined);
    if (given.length > 1) {
      ctx.addIssue({
        code: 'custom',
        path: [given[1]!],
        message: `give one of redis.url, redis.cluster, redis.sentinel (this config has ${given.map((k) => `redis.${k}`).join(' and ')})`,
      });
    }
    r.cluster?.forEach((u, i) => {
      if (/^rediss?:\/\/[^/]+\/(\d+)/.exec(u)?.[1] && !/\/0\/?$/.test(u)) {
        ctx.addIssue({
          code: 'custom',
          path: ['cluster', i],
          message: 'a Redis Cluster has database 0 only (SELECT is refused): drop the /N from the URL',
        });
      }
    });
  })
  // none of the three: the local Redis, as before the topologies existed
  .transform((r) =>
    r.url === undefined && r.cluster === undefined && r.sentinel === undefined ? { ...r, url: DEFAULT_REDIS_URL } : r,
  );
export type RedisConfig = z.infer<typeof RedisConfig>;
