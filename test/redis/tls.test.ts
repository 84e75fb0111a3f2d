// feedsync on a Redis that speaks TLS only, with the default user off and an ACL user, its
// certificate signed by a CA made for the test (openssl): the worker runs a sync through
// `rediss://user:password@...` and `redis.tls.ca`, the password is never shown (run history, the
// job's return value, the config summary), and a Redis whose certificate the CA did not sign is refused.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisConfig } from '../../src/config/schema.js';
import { closeRedis, createRedis, listRuns, redisSettingsOf } from '../../src/queue/index.js';
import { within } from '../../src/redis/deadline.js';
import { startTestEmulator, type TestEmulator } from '../helpers/emulator.js';
import { redisHasTls, startTlsRedis, type TestTlsRedis } from '../helpers/redis-topology.js';
import { feedsync } from '../settings/run-cli.js';
import { deploy, FEED } from './deployment.js';

const tls = await redisHasTls();
let redis: TestTlsRedis;
let emu: TestEmulator;
beforeAll(async () => {
  if (!tls) return;
  [redis, emu] = await Promise.all([startTlsRedis(), startTestEmulator()]);
}, 60_000);
afterAll(async () => {
  await emu?.close();
  await redis?.stop();
});

describe.skipIf(!tls)('Redis over TLS with an ACL user', () => {
  it('a worker on rediss:// with the CA runs a sync; the password shows nowhere', async () => {
    const url = `rediss://${redis.username}:${redis.password}@127.0.0.1:${redis.port}`;
    const d = await deploy(
      emu,
      [`url: "${url}"`, `tls: { ca: "${redis.caFile}" }`, `prefix: fst-${Date.now().toString(36)}`],
      { rows: 4 },
    );
    try {
      await d.startWorker();
      const sync = await d.run('sync', { feed: FEED }, FEED);
      expect(sync).toMatchObject({ state: 'completed', returnvalue: { outcome: 'ok', counts: { created: 4 } } });
      const runs = await listRuns(d.ops, d.settings.prefix, { feed: FEED, limit: 5 });
      expect(runs).toHaveLength(1);
      const shown = [JSON.stringify(runs), JSON.stringify(sync), d.settings.where];
      const check = await feedsync(['config', 'check', '--config', d.file, '--json']);
      expect(check.code).toBe(0);
      shown.push(check.stdout, check.stderr);
      for (const text of shown) expect(text).not.toContain(redis.password);
      expect(JSON.parse(check.stdout).redis.where).toBe(`rediss://127.0.0.1:${redis.port} (TLS)`);
    } finally {
      await d.close();
    }
  });

  it('a certificate the configured CA did not sign is refused; the ACL user without its password is refused', async () => {
    const base = { url: `rediss://${redis.username}:${redis.password}@127.0.0.1:${redis.port}`, prefix: 'fst' };
    const answer = async (config: unknown) => {
      const client = createRedis(redisSettingsOf(RedisConfig.parse(config), '/'), { purpose: 'command' });
      // the first answer: PONG, or the first connection error (ioredis retries after it)
      const refused = new Promise<string>((resolve) => client.on('error', (err: Error) => resolve(err.message)));
      const pong = await within(
        Promise.race([
          client.ping().then(
            () => 'PONG',
            (err: Error) => err.message,
          ),
          refused,
        ]),
        5000,
        'no answer',
      );
      await closeRedis(client);
      return pong;
    };
    expect(await answer({ ...base, tls: { ca: redis.caFile } })).toBe('PONG');
    // no CA: Node's own roots do not know the test CA
    expect(await answer(base)).toMatch(/self[- ]signed|unable to verify|certificate/i);
    // the user, a wrong password
    expect(
      await answer({
        ...base,
        url: `rediss://${redis.username}:wrong@127.0.0.1:${redis.port}`,
        tls: { ca: redis.caFile },
      }),
    ).toMatch(/WRONGPASS|invalid username-password/i);
    // the password as a key instead of in the URL
    expect(
      await answer({
        url: `rediss://127.0.0.1:${redis.port}`,
        username: redis.username,
        password: redis.password,
        tls: { ca: redis.caFile },
        prefix: 'fst',
      }),
    ).toBe('PONG');
    expect(readFileSync(redis.caFile, 'utf8')).toContain('BEGIN CERTIFICATE');
  });
});
