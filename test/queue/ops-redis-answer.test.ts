// The ops commands' uses of Redis (OpsRedis.answer) end with an error naming Redis and what it
// answered when Redis starts refusing the connection mid-command (a password set: NOAUTH), even for a
// command in flight when the connection dropped, which ioredis keeps to send again once the
// connection is ready: a connection Redis refuses never is, so without a bound it waits for good.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { openOpsRedis, type OpsRedis } from '../../src/cli/ops-redis.js';
import { loadConfig } from '../../src/config/load.js';
import { RedisUnavailableError } from '../../src/errors.js';
import { throwawayRedis, type ThrowawayRedis } from '../server/redis-server.js';
import { homesConfigYaml } from '../sync/helpers/feed.js';
import { until } from './helpers.js';

let server: ThrowawayRedis | undefined;
let admin: Redis;
let ops: OpsRedis | undefined;
let dir: string | undefined;
beforeEach(async () => {
  server = await throwawayRedis();
  admin = new Redis(server.url, { maxRetriesPerRequest: null });
  admin.on('error', () => {}); // (killed with the others on purpose)
  dir = await mkdtemp(join(tmpdir(), 'feedsync-ops-answer-'));
  const config = join(dir, 'feedsync.yaml');
  const top = ['redis:', `  url: ${server.url}`, '  prefix: test-ops-answer'];
  await writeFile(config, homesConfigYaml('http://127.0.0.1:9', { secretKey: 'k', sessionKey: 's' }, { top }));
  ops = await openOpsRedis(await loadConfig(config), 'runs');
});
afterEach(async () => {
  await ops?.close();
  admin.disconnect();
  await server?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
  server = dir = ops = undefined;
});

/** a password set and every connection dropped: each reconnect of `ops` is refused its commands */
async function refuse(): Promise<void> {
  await admin.config('SET', 'requirepass', 'now-needed');
  await admin.client('KILL', 'TYPE', 'normal').catch(() => undefined);
}

it('a command sent after Redis started refusing: the credentials error, in seconds', async () => {
  await refuse();
  await until('the drop to be seen', async () => ops!.redis.status !== 'ready'); // (else it is in flight)
  const started = Date.now();
  const err: unknown = await ops!.answer(ops!.redis.get('k')).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(RedisUnavailableError);
  expect((err as Error).message).toMatch(
    new RegExp(`Redis redis://127\\.0\\.0\\.1:${server!.port} refuses the user name or password \\(NOAUTH`),
  );
  expect(Date.now() - started).toBeLessThan(5_000);
});

it('a command in flight when the connection dropped: ends at the bound, saying what Redis answered since', async () => {
  const inFlight = ops!.answer(ops!.redis.blpop('test-ops-answer:never', 0)).catch((e: unknown) => e);
  await new Promise((r) => setTimeout(r, 200)); // (sent: blocked in Redis)
  await refuse();
  const err = await inFlight;
  expect(err).toBeInstanceOf(RedisUnavailableError);
  expect((err as Error).message).toMatch(/refuses the user name or password \(NOAUTH/);
});
