// Key naming for a Redis Cluster and the `redis` config: every key of a deployment carries one hash
// tag on a cluster (so no operation is refused as CROSSSLOT), keys are named in one module only,
// no command a cluster refuses is used, and exactly one topology is configured.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { parseDocument } from 'yaml';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import { RedisConfig } from '../../src/config/schema.js';
import { ConfigError } from '../../src/errors.js';
import { createRedis } from '../../src/redis/connection.js';
import { describeRedis, redisSettingsOf } from '../../src/redis/settings.js';
import { hashTagOf, keyRoot, keysOf, lockWaitersKey } from '../../src/redis/keys.js';

const SRC = join(import.meta.dirname, '../../src');
function sources(dir = SRC): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? sources(p) : p.endsWith('.ts') ? [p] : [];
  });
}

/** Every key keysOf names, with sample arguments. */
function everyKey(root: string): string[] {
  const k = keysOf(root);
  const lock = k.lock('chatbot:SN-1:sync');
  return [
    `${k.bullPrefix}:listing-sync:wait`,
    k.paused,
    k.cancel('job-1'),
    k.runsAll,
    k.runsOfFeed('austin'),
    k.runsOfChatbot('SN-1'),
    lock,
    lockWaitersKey(lock),
    k.scheduleWaiting('listing-sync', 'sync:austin'),
    k.schedulesWriter,
    k.schedulesRemoved,
    k.state('fp:austin'),
    k.state('reso-hwm'),
    k.state('alerts'),
    k.budget('api:abc', 'perSecond-log'),
    k.budget('api:abc', 'pause'),
    k.changesOfFeed('austin'),
    k.changesOfRun('r1'),
    k.runInfo('r1'),
    k.changeRuns('austin'),
    k.changeRuns(undefined),
  ];
}

describe('Redis keys', () => {
  it('on a cluster every key of a deployment has the hash tag {prefix}; elsewhere the plain layout stays', () => {
    expect(keyRoot('feedsync', 'cluster')).toBe('{feedsync}');
    expect(keyRoot('feedsync', 'single')).toBe('feedsync');
    expect(keyRoot('feedsync', 'sentinel')).toBe('feedsync');
    for (const key of everyKey(keyRoot('acme-prod', 'cluster'))) expect(hashTagOf(key), key).toBe('acme-prod');
    // a feed or job name with braces cannot move a key to another slot: the first {…} decides
    expect(hashTagOf(keysOf('{acme}').runsOfFeed('{evil}'))).toBe('acme');
    expect(everyKey('feedsync').every((k) => k.startsWith('feedsync:'))).toBe(true);
  });

  it('keys are named in src/redis/keys.ts only, and no command a cluster refuses is used', () => {
    const offenders: string[] = [];
    for (const file of sources()) {
      const rel = relative(SRC, file);
      if (rel === join('redis', 'keys.ts') || rel.startsWith('emulator')) continue;
      const text = readFileSync(file, 'utf8');
      // a key built from the prefix or the root outside the key module
      if (/`\$\{(prefix|root|keyPrefix)\}:/.test(text)) offenders.push(`${rel}: builds a key from the prefix`);
      // KEYS, SELECT, FLUSHALL/FLUSHDB: refused on a cluster (or span every key)
      if (/\bredis\.(keys|select|flushall|flushdb)\(|['"](KEYS|SELECT|FLUSHALL|FLUSHDB)['"]/.test(text))
        offenders.push(`${rel}: a command a cluster refuses`);
    }
    expect(offenders).toEqual([]);
  });
});

describe('redis config', () => {
  const api = 'api: { baseUrl: embedded, secretKey: k, sessionKey: s }\n';
  const configError = (yaml: string): string => {
    try {
      parseConfig(api + yaml, 'f.yaml', {});
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      return (err as ConfigError).issues.map((i) => `${i.path}: ${i.message}`).join('\n');
    }
    throw new Error('expected a ConfigError');
  };

  it('exactly one of url, cluster, sentinel; none is the local default', () => {
    expect(configError('redis: { url: "redis://a:6379", cluster: ["redis://b:6379"] }')).toMatch(
      /redis\.cluster.*give one of redis\.url, redis\.cluster, redis\.sentinel/,
    );
    expect(
      configError('redis: { cluster: ["redis://b:6379"], sentinel: { name: m, sentinels: ["s:26379"] } }'),
    ).toMatch(/give one of/);
    expect(parseConfig(`${api}redis: { prefix: x }\n`, 'f.yaml', {}).redis).toMatchObject({
      url: 'redis://127.0.0.1:6379',
      prefix: 'x',
    });
    expect(configError('redis: { cluster: ["redis://b:6379/2"] }')).toMatch(/database 0 only/);
    expect(configError('redis: { sentinel: { name: m, sentinels: ["s"] } }')).toMatch(/host:port/);
    expect(configError('redis: { url: "redis://a", prefix: "{x}" }')).toMatch(/no \{ or \}/);
    expect(configError('redis: { url: "http://a" }')).toMatch(/redis:\/\/ or rediss:\/\//);
  });

  it('what is shown of a Redis never holds its password or user', () => {
    const cluster = RedisConfig.parse({ cluster: ['rediss://app:pw-123456@n1:6380', 'rediss://n2:6380'], tls: {} });
    expect(describeRedis(cluster)).toBe('cluster rediss://n1:6380, rediss://n2:6380 (TLS)');
    const sentinel = RedisConfig.parse({
      sentinel: { name: 'mymaster', sentinels: ['s1:26379'], password: 'pw-123456', sentinelPassword: 'spw-123456' },
    });
    expect(describeRedis(sentinel)).toBe('sentinel mymaster at s1:26379');
    expect(redisSettingsOf(cluster, '/').prefix).toBe('{feedsync}');
    expect(redisSettingsOf(sentinel, '/').prefix).toBe('feedsync');
  });
});

describe('connection options per topology', () => {
  // the client is made (it starts connecting to nothing) and dropped: only its options are read
  const optionsOf = (config: unknown) => {
    const client = createRedis(redisSettingsOf(RedisConfig.parse(config), '/'), { purpose: 'command' });
    client.on('error', () => {});
    client.disconnect();
    return client.options as Record<string, unknown>;
  };

  it('Sentinel with TLS: TLS to the primary (ioredis needs enableTLSForSentinelMode for it) and to the Sentinels unless sentinel.tls is false', () => {
    const sentinel = { name: 'm', sentinels: ['127.0.0.1:1'], password: 'pw-123456', sentinelPassword: 'spw-123456' };
    const withTls = optionsOf({ sentinel, tls: { rejectUnauthorized: false } });
    expect(withTls).toMatchObject({
      name: 'm',
      password: 'pw-123456',
      sentinelPassword: 'spw-123456',
      enableTLSForSentinelMode: true,
      tls: { rejectUnauthorized: false },
      sentinelTLS: { rejectUnauthorized: false },
    });
    const sentinelsPlain = optionsOf({ sentinel: { ...sentinel, tls: false }, tls: { rejectUnauthorized: false } });
    expect(sentinelsPlain).toMatchObject({ enableTLSForSentinelMode: true });
    expect(sentinelsPlain.sentinelTLS).toBeUndefined();
    const plain = optionsOf({ sentinel });
    expect(plain.enableTLSForSentinelMode).toBeFalsy();
    expect(plain.tls).toBeUndefined();
  });

  it("one Redis: the keys override the URL's user and password; rediss:// turns TLS on", () => {
    expect(optionsOf({ url: 'rediss://u1:p1@127.0.0.1:1/2', username: 'u2', password: 'p2-123456' })).toMatchObject({
      host: '127.0.0.1',
      port: 1,
      db: 2,
      username: 'u2',
      password: 'p2-123456',
      tls: { rejectUnauthorized: true },
    });
    expect(optionsOf({ url: 'redis://u1:p1-123456@127.0.0.1:1' })).toMatchObject({
      username: 'u1',
      password: 'p1-123456',
    });
    expect(optionsOf({ url: 'redis://127.0.0.1:1' }).tls).toBeUndefined();
  });
});

describe('docs/redis.md', () => {
  it('each topology example is a valid redis section', () => {
    const text = readFileSync(join(import.meta.dirname, '../../docs/redis.md'), 'utf8');
    const blocks = [...text.matchAll(/```yaml\n([\s\S]*?)```/g)].map(
      (m) => parseDocument(m[1]!).toJS() as { redis?: unknown },
    );
    const sections = blocks.map((b) => RedisConfig.parse(b.redis));
    expect(sections.map((r) => (r.cluster ? 'cluster' : r.sentinel ? 'sentinel' : 'url'))).toEqual([
      'url',
      'cluster',
      'sentinel',
    ]);
  });
});
