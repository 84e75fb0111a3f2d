// schedule.full: an incremental RESO feed's second cron, a full pull on the queue (real Redis).
import '../setup/needs-redis.js';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors.js';
import { applySchedules, plannedSchedules, QUEUE_NAMES } from '../../src/queue/index.js';
import { silentLogger } from '../../src/log.js';
import { loadedConfig, useQueues } from './helpers.js';

const API = `api: { baseUrl: "http://127.0.0.1:1", secretKey: sk-test-queue-5f1c, sessionKey: ss-test-queue-9b2e }\n`;
const resoFeed = (schedule: string, incremental = true) =>
  `${API}feeds:\n  - name: mls\n    chatbot: SN-1\n    source: { kind: reso, url: "https://mls.test/odata", incremental: ${incremental} }\n    schedule: ${schedule}\n`;

const q = useQueues();

describe('schedule.full', () => {
  it('adds a second scheduler that runs the feed as a full pull', async () => {
    const { config } = loadedConfig(resoFeed('{ cron: "*/15 * * * *", full: "0 3 * * 0", tz: America/Chicago }'));
    const planned = plannedSchedules(config, QUEUE_NAMES);
    expect(planned.map((p) => [p.id, p.pattern, p.tz, p.data])).toEqual([
      ['sync:mls', '*/15 * * * *', 'America/Chicago', { feed: 'mls' }],
      ['sync-full:mls', '0 3 * * 0', 'America/Chicago', { feed: 'mls', full: true }],
      // the dictionary check of a live RESO feed (jobs/source-drift.ts): hourly, in the feed's zone
      ['drift:mls', '41 * * * *', 'America/Chicago', { feed: 'mls' }],
    ]);
    await applySchedules(q.redis, q.queues, planned, { root: q.prefix, logger: silentLogger });
    const schedulers = await q.queues.sync.getJobSchedulers();
    expect(schedulers.map((s) => [s.key, s.pattern, s.template?.data]).sort()).toEqual([
      ['sync-full:mls', '0 3 * * 0', { feed: 'mls', full: true }],
      ['sync:mls', '*/15 * * * *', { feed: 'mls' }],
    ]);
    // dropped from config: the full scheduler goes with it
    await applySchedules(
      q.redis,
      q.queues,
      plannedSchedules(loadedConfig(resoFeed('{ cron: "*/15 * * * *" }')).config, QUEUE_NAMES),
      { root: q.prefix, logger: silentLogger },
    );
    expect((await q.queues.sync.getJobSchedulers()).map((s) => s.key)).toEqual(['sync:mls']);
  });

  it('is refused on a feed that is always read in full, and when it runs too often', () => {
    expect(() => loadedConfig(resoFeed('{ cron: "0 2 * * *", full: "0 3 * * 0" }', false))).toThrow(ConfigError);
    expect(() => loadedConfig(resoFeed('{ cron: "0 2 * * *", full: "0 3 * * 0" }', false))).toThrow(
      /schedule.full is for incremental RESO feeds/,
    );
    expect(() => loadedConfig(resoFeed('{ cron: "0 2 * * *", full: "* * * * * *" }'))).toThrow(
      /more often than worker.minScheduleIntervalSeconds/,
    );
  });
});
