// Feeds due together that share a chatbot get one scheduler (src/queue/schedules.ts): which feeds
// group, the schedulers' ids and job data, full pulls, and applySchedules moving a deployment from
// one scheduler per feed to the groups (real Redis).
import '../setup/needs-redis.js';
import { describe, expect, it } from 'vitest';
import { listingSync, ListingSyncPayload } from '../../jobs/listing-sync.js';
import { silentLogger } from '../../src/log.js';
import { applySchedules, plannedSchedules, QUEUE_NAMES, syncSchedulerOf } from '../../src/queue/index.js';
import { loadedConfig, useQueues } from './helpers.js';

const API = `api: { baseUrl: "http://127.0.0.1:1", secretKey: sk-test-queue-5f1c, sessionKey: ss-test-queue-9b2e }\n`;

interface F {
  name: string;
  /** one chatbot, or several (a routed feed) */
  to: string | string[];
  cron: string;
  tz?: string;
  full?: string;
  reconcile?: string;
}

function config(feeds: F[]) {
  const yaml = feeds
    .map((f) => {
      const to =
        typeof f.to === 'string'
          ? `    chatbot: ${f.to}\n`
          : `    chatbots: [${f.to.map((sn) => `{ serialNumber: ${sn} }`).join(', ')}]\n`;
      const source =
        f.full || f.reconcile
          ? `{ kind: reso, url: "https://mls.test/odata", incremental: true }`
          : `{ kind: csv, path: feeds/${f.name}.csv }`;
      const schedule = `{ cron: "${f.cron}"${f.tz ? `, tz: ${f.tz}` : ''}${f.full ? `, full: "${f.full}"` : ''}${f.reconcile ? `, reconcileCron: "${f.reconcile}"` : ''} }`;
      return `  - name: ${f.name}\n${to}    source: ${source}\n    schedule: ${schedule}\n`;
    })
    .join('');
  return loadedConfig(`${API}feeds:\n${yaml}`).config;
}

/** the sync, settings and smoke schedulers (a live RESO feed's `drift:` scheduler is full-schedule.test.ts's) */
const planned = (feeds: F[]) =>
  plannedSchedules(config(feeds), QUEUE_NAMES)
    .filter((s) => s.kind !== 'drift')
    .map((s) => [s.id, s.pattern, s.tz, s.data]);

describe('sync schedulers of feeds due together', () => {
  it('one per group of feeds with the same cron and tz that share a chatbot, through routed feeds too', () => {
    const feeds: F[] = [
      { name: 'b', to: 'SN-A', cron: '*/15 * * * *' },
      { name: 'a', to: 'SN-A', cron: '*/15  *  * * *' }, // spaces aside, the same cron
      { name: 'routed', to: ['SN-A', 'SN-B'], cron: '*/15 * * * *' },
      { name: 'c', to: 'SN-B', cron: '*/15 * * * *' }, // joined to a and b through `routed`
      { name: 'hourly', to: 'SN-A', cron: '0 * * * *' }, // another cron: alone
      { name: 'chicago', to: 'SN-A', cron: '*/15 * * * *', tz: 'America/Chicago' }, // another tz: alone
      { name: 'elsewhere', to: 'SN-C', cron: '*/15 * * * *' }, // no chatbot shared: alone
    ];
    expect(planned(feeds)).toEqual([
      // the id names the group's feeds sorted; the job runs them in config order
      ['sync:a+b+c+routed', '*/15 * * * *', undefined, { feeds: ['b', 'a', 'routed', 'c'] }],
      ['sync:elsewhere', '*/15 * * * *', undefined, { feed: 'elsewhere' }],
      ['sync:hourly', '0 * * * *', undefined, { feed: 'hourly' }],
      ['sync:chicago', '*/15 * * * *', 'America/Chicago', { feed: 'chicago' }],
    ]);
    const of = syncSchedulerOf(config(feeds).feeds);
    expect([of.get('a'), of.get('c'), of.get('hourly'), of.get('elsewhere')]).toEqual([
      'sync:a+b+c+routed',
      'sync:a+b+c+routed',
      'sync:hourly',
      'sync:elsewhere',
    ]);
  });

  it('full pulls group among the feeds whose schedule.full is due together, and run as full pulls of those alone', () => {
    const feeds: F[] = [
      { name: 'r1', to: 'SN-R', cron: '*/15 * * * *', full: '0 3 * * 0' },
      { name: 'r2', to: 'SN-R', cron: '*/15 * * * *', full: '0 3 * * 0' },
      { name: 'r3', to: 'SN-R', cron: '*/15 * * * *', full: '0 4 * * 0' },
    ];
    expect(planned(feeds)).toEqual([
      ['sync:r1+r2+r3', '*/15 * * * *', undefined, { feeds: ['r1', 'r2', 'r3'] }],
      ['sync-full:r1+r2', '0 3 * * 0', undefined, { feeds: ['r1', 'r2'], full: true }],
      ['sync-full:r3', '0 4 * * 0', undefined, { feed: 'r3', full: true }],
    ]);
  });

  it('keys-only reconciles (schedule.reconcileCron) group the same way, and their jobs ask for a reconcile', () => {
    const feeds: F[] = [
      { name: 'r1', to: 'SN-R', cron: '*/15 * * * *', reconcile: '15 * * * *' },
      { name: 'r2', to: 'SN-R', cron: '*/15 * * * *', reconcile: '15 * * * *', full: '0 3 * * 0' },
    ];
    const all = planned(feeds);
    expect(all).toContainEqual([
      'sync-reconcile:r1+r2',
      '15 * * * *',
      undefined,
      { feeds: ['r1', 'r2'], reconcile: true },
    ]);
    expect(all).toContainEqual(['sync-full:r2', '0 3 * * 0', undefined, { feed: 'r2', full: true }]);
    expect(ListingSyncPayload.parse({ feeds: ['r1', 'r2'], reconcile: true }).reconcile).toBe(true);
    expect(syncSchedulerOf(config(feeds).feeds).get('r1')).toBe('sync:r1+r2');
  });

  it("a group's job locks every chatbot its feeds write into, and records a row per feed", () => {
    const loaded = {
      config: config([
        { name: 'a', to: 'SN-A', cron: '0 2 * * *' },
        { name: 'routed', to: ['SN-A', 'SN-B'], cron: '0 2 * * *' },
        { name: 'c', to: 'SN-B', cron: '0 2 * * *' },
      ]),
      file: '/tmp/test.yaml',
      dir: '/tmp',
    };
    const [group] = plannedSchedules(loaded.config, QUEUE_NAMES);
    const payload = ListingSyncPayload.parse(group!.data);
    expect([...new Set(listingSync.chatbots!(payload, loaded))].sort()).toEqual(['SN-A', 'SN-B']);
    expect(listingSync.target(payload, loaded)).toEqual({ feeds: ['a', 'routed', 'c'] });
    // a failure before any lane reported: the same report under each feed, each under its first chatbot
    const rows = listingSync.historyRows!(payload, { outcome: 'error', summary: 'down' }, loaded);
    expect(rows.map((r) => r.target)).toEqual([
      { feed: 'a', chatbot: 'SN-A' },
      { feed: 'routed', chatbot: 'SN-A' },
      { feed: 'c', chatbot: 'SN-B' },
    ]);
  });

  it('a group job names its feeds: exactly one of feed, feeds and chatbot', () => {
    expect(ListingSyncPayload.safeParse({ feeds: ['a', 'b'] }).success).toBe(true);
    expect(ListingSyncPayload.safeParse({ feeds: ['a'], feed: 'a' }).success).toBe(false);
    expect(ListingSyncPayload.safeParse({ feeds: [] }).success).toBe(false);
  });
});

describe('applySchedules with groups (real Redis)', () => {
  const q = useQueues();

  it('replaces the schedulers of feeds that now run together, keeps a feed alone on its own id, and back', async () => {
    const keys = async () => (await q.queues.sync.getJobSchedulers()).map((s) => [s.key, s.template?.data]).sort();
    const apart: F[] = [
      { name: 'a', to: 'SN-A', cron: '0 2 * * *' },
      { name: 'b', to: 'SN-A', cron: '0 3 * * *' },
      { name: 'c', to: 'SN-C', cron: '0 2 * * *' },
    ];
    await applySchedules(q.redis, q.queues, plannedSchedules(config(apart), QUEUE_NAMES), {
      root: q.prefix,
      logger: silentLogger,
    });
    expect(await keys()).toEqual([
      ['sync:a', { feed: 'a' }],
      ['sync:b', { feed: 'b' }],
      ['sync:c', { feed: 'c' }],
    ]);
    // b moves to a's cron: a and b share one scheduler; c, alone, keeps its own
    const together = apart.map((f) => (f.name === 'b' ? { ...f, cron: '0 2 * * *' } : f));
    const changes = await applySchedules(q.redis, q.queues, plannedSchedules(config(together), QUEUE_NAMES), {
      root: q.prefix,
      logger: silentLogger,
    });
    expect(changes.removed.sort()).toEqual(['sync:a', 'sync:b']);
    expect(await keys()).toEqual([
      ['sync:a+b', { feeds: ['a', 'b'] }],
      ['sync:c', { feed: 'c' }],
    ]);
    // and back apart
    await applySchedules(q.redis, q.queues, plannedSchedules(config(apart), QUEUE_NAMES), {
      root: q.prefix,
      logger: silentLogger,
    });
    expect((await keys()).map(([k]) => k)).toEqual(['sync:a', 'sync:b', 'sync:c']);
  });
});
