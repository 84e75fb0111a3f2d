// /metrics of a feed whose run was rejected (issue 50): its rejected records counted, the run's
// outcome named, the alert it fired shown firing for its lane, and the last good sync left where it
// was. A real sync (runLanes, as the worker's job runs it) against the emulator, its alert state in
// the store the worker's scrape reads.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createCallCounter } from '../../src/api/call-counter.js';
import { loadConfig } from '../../src/config/load.js';
import { runLanes } from '../../src/runs/run-lanes.js';
import { createMetrics } from '../../src/server/metrics.js';
import { lanesOf } from '../../src/sync/index.js';
import { TEST_SECRET_KEY, TEST_SESSION_KEY } from '../helpers/emulator.js';
import { csv, homesConfigYaml, lanesDeps, rows, useEmulatorSync } from '../sync/helpers/feed.js';

const sync = useEmulatorSync();

describe('metrics of a rejected run', () => {
  it('count its rejected records, name its outcome, show feed-rejected firing, and keep the last success', async () => {
    const env = sync.env();
    const file = join(env.dir, 'feedsync.yaml');
    await writeFile(
      file,
      homesConfigYaml(
        sync.te().url,
        { secretKey: TEST_SECRET_KEY, sessionKey: TEST_SESSION_KEY },
        { deletes: '{ maxFraction: 0.5 }' },
      ),
    );
    const loaded = await loadConfig(file);
    const feed = loaded.config.feeds[0]!;
    const metrics = createMetrics({}, { defaultMetrics: false });
    metrics.watchAlerts(
      lanesOf(feed).map((l) => ({ feed: feed.name, lane: l.id })),
      env.store,
    );
    const runOnce = async () => {
      const calls = createCallCounter();
      const [report] = await runLanes(
        lanesOf(feed),
        lanesDeps(loaded, sync.te().client({ onCall: calls.onCall }), env.store, { calls }),
        {},
        { config: loaded },
      );
      metrics.onRun({ job: 'listing-sync', report: report! });
      return report!;
    };

    await writeFile(join(env.dir, 'homes.csv'), csv(rows(6)));
    expect((await runOnce()).outcome).toBe('ok');
    const lastSuccess = /feedsync_feed_last_success_timestamp_seconds\{feed="homes"\} (\S+)/.exec(
      await metrics.registry.metrics(),
    )?.[1];
    expect(lastSuccess).toBeDefined();

    await writeFile(join(env.dir, 'homes.csv'), csv(rows(6).map((r) => ({ ...r, YearBuilt: 'old' }))));
    expect((await runOnce()).outcome).toBe('rejected');
    const text = await metrics.registry.metrics();
    expect(text).toContain('feedsync_records_rejected_total{feed="homes"} 6');
    expect(text).toContain('feedsync_runs_total{job="listing-sync",outcome="rejected"} 1');
    expect(text).toContain('feedsync_alerts_firing{feed="homes",lane="homes",condition="feed-rejected"} 1');
    // (and more than 10% of the records rejected: the rejected-fraction rule's alert beside it)
    expect(text).toContain('feedsync_alerts_firing{feed="homes",lane="homes",condition="rejected"} 1');
    expect(/feedsync_feed_last_success_timestamp_seconds\{feed="homes"\} (\S+)/.exec(text)?.[1]).toBe(lastSuccess);

    // fixed: the alerts resolve once clear for closeAfterMinutes (60 by default), the success moves
    await writeFile(join(env.dir, 'homes.csv'), csv(rows(6)));
    expect((await runOnce()).outcome).toBe('ok');
    expect(
      /feedsync_feed_last_success_timestamp_seconds\{feed="homes"\} (\S+)/.exec(await metrics.registry.metrics())?.[1],
    ).not.toBe(lastSuccess);
  });
});
