// The sweep of the jobs' holder records (src/queue/job-holders.ts) on a real Redis Cluster (three
// masters started here): its script and its calls name keys of the deployment's one hash tag only,
// so a dead worker's job goes back to wait counted stalled, and the tidy reads the live jobs' locks
// in one MGET, with no CROSSSLOT refusal.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { Worker } from 'bullmq';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { RedisConfig } from '../../src/config/schema.js';
import { newHolder, processStartTime } from '../../src/locks/lock-holder.js';
import { silentLogger } from '../../src/log.js';
import { closeQueues, createQueues, enqueueJob, QUEUE_NAMES } from '../../src/queue/index.js';
import { holdJob, sweepJobHolders } from '../../src/queue/job-holders.js';
import { closeRedis, createRedis } from '../../src/redis/connection.js';
import { redisSettingsOf } from '../../src/redis/settings.js';
import { startCluster, type TestCluster } from '../helpers/redis-topology.js';

let cluster: TestCluster;
beforeAll(async () => {
  cluster = await startCluster();
}, 60_000);
afterAll(async () => cluster?.stop());

it("on a cluster: a dead worker's job goes back to wait, counted stalled; a live one's record is kept by the tidy", async () => {
  const settings = redisSettingsOf(
    RedisConfig.parse({ cluster: cluster.urls, prefix: `fss-${Date.now().toString(36)}` }),
    '/tmp',
  );
  const redis = createRedis(settings);
  const queues = createQueues(redis, settings.keys.bullPrefix);
  const taker = new Worker(QUEUE_NAMES.sync, null, {
    connection: createRedis(settings),
    prefix: settings.keys.bullPrefix,
    lockDuration: 30_000,
  });
  try {
    await enqueueJob(redis, queues, 'sync', 'feed:dead', { feed: 'dead' });
    await enqueueJob(redis, queues, 'sync', 'feed:live', { feed: 'live' });
    const dead = await taker.getNextJob('t-dead');
    const live = await taker.getNextJob('t-live');
    if (!dead?.id || !live?.id) throw new Error('no jobs taken');
    // the dead one's record names a process that was here a moment ago; the live one is this process's own
    const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60_000)'], { stdio: 'ignore' });
    await once(child, 'spawn');
    const gone = { pid: child.pid!, startTime: processStartTime(child.pid!) };
    child.kill('SIGKILL');
    await once(child, 'exit');
    const record = { ...newHolder('dead'), ...gone, queue: QUEUE_NAMES.sync, jobId: dead.id };
    await redis.hset(settings.keys.jobHolders, 't-dead', JSON.stringify(record));
    const release = await holdJob(redis, settings.keys.jobHolders, live, 't-live', silentLogger);

    const deps = {
      redis,
      key: settings.keys.jobHolders,
      queues: new Map(Object.values(queues).map((q) => [q.name, q])),
      maxStalledCount: 3,
      lockDurationMs: 30_000,
      logger: silentLogger,
    };
    expect(await sweepJobHolders(deps, true)).toMatchObject([{ jobId: dead.id, stalled: 1 }]);
    expect(await queues.sync.getJobState(dead.id)).toBe('waiting');
    expect(await queues.sync.getJobState(live.id)).toBe('active');
    expect(await redis.hkeys(settings.keys.jobHolders)).toEqual(['t-live']);
    await release();
  } finally {
    await taker.close();
    await closeQueues(queues);
    await closeRedis(redis);
  }
});
