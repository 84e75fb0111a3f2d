// A cluster connection reconnected while the cluster says `cluster_state:fail` (a node that holds
// slots is down), as BullMQ reconnects a worker's blocking connection once it has abandoned its
// BZPOPMIN (disconnect, then connect: RedisConnection.reconnect): the promise of that connect()
// settles once the cluster is back and the connection ready. ioredis's own connect() never settled
// there (its ready check failed, and the retry that succeeded was another attempt), and a worker
// awaiting it took no job until feedsync's watchdog replaced it (src/redis/settled-cluster.ts).
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedis } from '../../src/redis/connection.js';
import { startCluster, type TestCluster } from '../helpers/redis-topology.js';
import { uniquePrefix } from '../queue/helpers.js';
import { RedisConfig } from '../../src/config/schema.js';
import { redisSettingsOf } from '../../src/redis/settings.js';

let cluster: TestCluster;
beforeAll(async () => {
  // a node unreachable for 1 s is marked failed: the cluster fails while the node is down
  cluster = await startCluster({ nodeTimeoutMs: 1000 });
}, 60_000);
afterAll(async () => {
  await cluster?.stop();
});

describe('a cluster connection', () => {
  it('reconnected while the cluster has failed: its connect() resolves once the cluster is back', async () => {
    const settings = redisSettingsOf(RedisConfig.parse({ cluster: cluster.urls, prefix: uniquePrefix() }), '/tmp');
    const client = createRedis(settings, { name: 'feedsync-test-settled' });
    client.on('error', () => {});
    try {
      if (client.status !== 'ready') await once(client, 'ready');
      const owner = await cluster.nodeOf(settings.prefix);
      await owner.kill();
      await cluster.clusterState('fail', owner);

      // what BullMQ does to a blocking connection whose command it abandoned
      const ended = once(client, 'end');
      client.disconnect();
      await ended;
      let settled: string | undefined;
      const connecting = client.connect().then(
        () => (settled = 'resolved'),
        (err: Error) => (settled = `rejected: ${err.message}`),
      );
      // its ready check finds the cluster failed: ioredis retries
      await once(client, 'reconnecting');

      await owner.restart();
      await cluster.clusterState('ok');
      if (client.status !== 'ready') await once(client, 'ready');
      await new Promise((r) => setImmediate(r));
      expect(settled).toBe('resolved');
      await connecting;
      expect(await client.set(`${settings.prefix}:k`, 'v')).toBe('OK');
    } finally {
      client.disconnect();
    }
  }, 120_000);
});
