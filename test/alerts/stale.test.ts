// "No successful sync for H hours" from the worker's timer: one alert when it starts to hold, none
// on the next checks, "resolved" with the next good run; with several workers checking the same
// state at once, still one alert.
import '../setup/needs-redis.js';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { alertAfterRun, checkStaleness } from '../../src/alerts/index.js';
import { AlertsConfig } from '../../src/alerts/config-schema.js';
import { silentLogger } from '../../src/log.js';
import { createFileStore } from '../../src/state/file-store.js';
import type { KvStore } from '../../src/state/kv-store.js';
import { createMemoryStore } from '../../src/state/memory-store.js';
import { createRedisStore } from '../../src/state/redis-store.js';
import { startHttpReceiver } from './receivers.js';
import { REDIS_URL } from '../queue/helpers.js';

describe('staleness alerts', () => {
  it('alerts once when a feed goes stale, and resolves on its next good run', async () => {
    const hook = await startHttpReceiver();
    try {
      const store = createMemoryStore();
      const config = AlertsConfig.parse({
        channels: [{ kind: 'webhook', url: hook.url, secret: 'whsec-stale-1234' }],
        rules: { staleHours: 24 },
      });
      const target = { feed: 'austin', chatbot: 'SN-1' };
      const t0 = new Date('2026-11-20T00:00:00Z');
      const hours = (h: number) => new Date(t0.getTime() + h * 3_600_000);
      const good = {
        runId: 'r1',
        at: t0.toISOString(),
        outcome: 'ok',
        records: 10,
        valid: 10,
        rejected: 0,
        unmapped: [],
      };
      expect(await alertAfterRun(store, config, target, good, silentLogger, t0)).toEqual([]);

      expect(await checkStaleness(store, config, [target], t0.toISOString(), silentLogger, hours(23))).toEqual([]);
      const fired = await checkStaleness(store, config, [target], t0.toISOString(), silentLogger, hours(25));
      expect(fired.map((n) => `${n.status} ${n.condition}`)).toEqual(['firing stale']);
      expect(fired[0]!.message).toMatch(/no successful sync for 25\.0 h/);
      expect(await checkStaleness(store, config, [target], t0.toISOString(), silentLogger, hours(30))).toEqual([]);

      const back = await alertAfterRun(
        store,
        config,
        target,
        { ...good, runId: 'r2', at: hours(31).toISOString() },
        silentLogger,
        hours(31),
      );
      expect(back.map((n) => `${n.status} ${n.condition}`)).toEqual(['resolved stale']);
      expect(hook.received.map((r) => JSON.parse(r.body).status)).toEqual(['firing', 'resolved']);
    } finally {
      await hook.close();
    }
  });
});

describe('staleness alerts from several workers', () => {
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  const prefix = `test-alerts-${process.pid}-${Date.now()}`;
  const dirs: string[] = [];
  afterAll(async () => {
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length) await redis.del(...keys);
    await redis.quit();
    await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
  });

  /** Three workers' stores over one state (each its own connection or file handle), checking at once. */
  async function threeWorkersCheck(stores: KvStore[]): Promise<string[]> {
    const hook = await startHttpReceiver();
    try {
      const config = AlertsConfig.parse({
        channels: [{ kind: 'webhook', url: hook.url, secret: 'whsec-stale-1234' }],
        rules: { staleHours: 24 },
      });
      const targets = [
        { feed: 'austin', chatbot: 'SN-1' },
        { feed: 'dallas', chatbot: 'SN-1' },
      ];
      const t0 = new Date('2026-11-20T00:00:00Z');
      const at = (h: number) => new Date(t0.getTime() + h * 3_600_000);
      for (const t of targets)
        await alertAfterRun(
          stores[0]!,
          config,
          t,
          { runId: 'r1', at: t0.toISOString(), outcome: 'ok', records: 1, valid: 1, rejected: 0, unmapped: [] },
          silentLogger,
          t0,
        );
      await Promise.all(stores.map((s) => checkStaleness(s, config, targets, t0.toISOString(), silentLogger, at(25))));
      await Promise.all(stores.map((s) => checkStaleness(s, config, targets, t0.toISOString(), silentLogger, at(26))));
      return hook.received
        .map((r) => {
          const body = JSON.parse(r.body) as { status: string; feed: string };
          return `${body.status} ${body.feed}`;
        })
        .sort();
    } finally {
      await hook.close();
    }
  }

  it('Redis: a feed going stale is announced once, not once per worker', async () => {
    const connections = [0, 1, 2].map(() => new Redis(REDIS_URL, { maxRetriesPerRequest: 1 }));
    try {
      const sent = await threeWorkersCheck(connections.map((c) => createRedisStore(c, prefix)));
      expect(sent).toEqual(['firing austin', 'firing dallas']);
    } finally {
      await Promise.all(connections.map((c) => c.quit()));
    }
  });

  it('state file: a feed going stale is announced once, not once per process', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'feedsync-alerts-'));
    dirs.push(dir);
    const stores = await Promise.all([0, 1, 2].map(() => createFileStore(join(dir, 'state.lmdb'))));
    expect(await threeWorkersCheck(stores)).toEqual(['firing austin', 'firing dallas']);
  });
});
