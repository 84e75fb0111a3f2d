// What a `feedsync worker` writes to its log while its Redis is away. Each of its BullMQ workers (one
// per queue) reports every reconnect attempt: seen on a deploy walk, a Redis stopped for 4 s made
// 81 error lines, each with its stack, about 20 a second, in a log a person or an aggregator has to
// read. A connection error is said once per queue (and once for the worker's own connection), a
// line without a stack, at most once a minute, counting those in between.
import { afterAll, expect, it } from 'vitest';
import { throwawayRedis } from '../server/redis-server.js';
import { oneFeedDeployment } from './deploy.js';
import { until } from './helpers.js';
import { spawnWorker } from './worker-process.js';
import { freshFetch } from '../helpers/fresh-fetch.js';

const cleanups: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

it('a Redis away for 4 s: one line per connection, no stack; /healthz 503, then 200', async () => {
  const redis = await throwawayRedis();
  cleanups.push(() => redis.stop());
  const file = await oneFeedDeployment(`url: "${redis.url}"`, cleanups, { name: 'austin', chatbot: 'SN-O' });
  const w = await spawnWorker(file);
  cleanups.push(() => w.kill('SIGKILL'));
  const health = async () => (await freshFetch(`http://127.0.0.1:${w.port}/healthz`)).status;

  const before = w.logs().length;
  await redis.stop();
  await until('/healthz to answer 503', async () => (await health()) === 503);
  await new Promise((r) => setTimeout(r, 4000));
  await redis.start();
  await until('/healthz to answer 200', async () => (await health()) === 200);

  const lines = w
    .logs()
    .slice(before)
    .split('\n')
    .filter((l) => l.trim());
  const outage = lines.filter((l) => /ECONNREFUSED/.test(l));
  expect(outage.length, outage.join('\n')).toBeGreaterThan(0);
  // 5 queues and the worker's own connection
  expect(outage.length, outage.join('\n')).toBeLessThanOrEqual(6);
  expect(outage.filter((l) => l.includes('"stack"'))).toEqual([]);
});
