// Alerts per chatbot for a routed feed (issue 26, point 2: each chatbot its own alerts): one feed
// routed to SN-ANN and SN-BOB by agent. Bob's listings vanish from the export, so SN-BOB's delete
// guard holds run after run while SN-ANN syncs fine. With `openAfterRuns: 2` the guard alerts on
// the second run, for SN-BOB only: SN-ANN's good runs must not reset SN-BOB's count (they did when
// the alert state was kept per feed), and the status page has a row per chatbot, SN-BOB's with
// its guard and SN-ANN's without. Real syncs
// through the CLI against the emulator; a webhook receiver started here gets the alerts.
import '../setup/needs-redis.js';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { createFileChangeLog } from '../../src/change-log/file-change-log.js';
import { closeQueues, createQueues } from '../../src/queue/index.js';
import { gatherStatus } from '../../src/server/status/status-data.js';
import { createFileStore } from '../../src/state/file-store.js';
import { changeLogFile, stateFile } from '../../src/state/paths.js';
import { dropPrefix, testRedis, uniquePrefix } from '../queue/helpers.js';
import { feedsync } from '../settings/run-cli.js';
import { useEmulatorSync } from '../sync/helpers/feed.js';
import { agentCsv, annBobConfigYaml } from '../sync/helpers/routed.js';
import { startHttpReceiver } from './receivers.js';

let hook: Awaited<ReturnType<typeof startHttpReceiver>>;
let config: string;

const sync = useEmulatorSync({ perFile: true });
beforeAll(async () => {
  hook = await startHttpReceiver();
  config = join(sync.env().dir, 'feedsync.yaml');
  const top = [
    'alerts:',
    '  rules: { openAfterRuns: 2, closeAfterMinutes: 0 }',
    '  channels:',
    `    - { kind: webhook, url: "${hook.url}/alerts", secret: whsec-routed-7d1 }`,
  ];
  await writeFile(config, annBobConfigYaml(sync.te().url, { name: 'brokerage', top }));
});
afterAll(async () => {
  await hook.close();
});

describe('alerts of a routed feed', () => {
  it("a chatbot's guard alerts after openAfterRuns of its own runs, whatever its sibling chatbot's runs did; the status page has a row per chatbot", async () => {
    const homes = join(sync.env().dir, 'homes.csv');
    const agents = ['ann', 'ann', 'ann', 'ann', 'ann', 'bob', 'bob', 'bob', 'bob', 'bob'];
    await writeFile(homes, agentCsv(agents));
    expect((await feedsync(['sync', '--config', config])).code).toBe(0);

    // bob's five listings leave the export; ann's stay as they were
    await writeFile(homes, agentCsv(agents.map((a) => (a === 'bob' ? 'carol' : a))));
    for (let run = 0; run < 2; run++) expect((await feedsync(['sync', '--config', config])).code).toBe(3);
    expect(await sync.te().listings('SN-BOB')).toHaveLength(5); // the guard held: nothing deleted
    expect(await sync.te().listings('SN-ANN')).toHaveLength(5);

    const seen = hook.received.map(
      (r) => JSON.parse(r.body) as { condition: string; status: string; feed: string; chatbot: string },
    );
    // (its valid records fell to none: the drop rule holds beside the guard, for SN-BOB too)
    expect(seen.map((a) => `${a.status} ${a.condition} ${a.chatbot}`).sort()).toEqual([
      'firing dropped SN-BOB',
      'firing guard SN-BOB',
    ]);
    expect(seen[0]).toMatchObject({ feed: 'brokerage' });

    // the status page's rows of the feed
    const loaded = await loadConfig(config);
    const redis = testRedis();
    const prefix = uniquePrefix();
    const queues = createQueues(redis, prefix);
    try {
      const path = stateFile(loaded);
      const status = await gatherStatus({
        feeds: loaded.config.feeds,
        changeLog: await createFileChangeLog(changeLogFile(path)),
        queues,
        store: await createFileStore(path),
        staleHours: 24,
      });
      // a row per chatbot, each with its own runs and alerts
      const rows = status.feeds.map((f) => ({
        lane: f.lane,
        chatbot: f.chatbot,
        runs: f.runs.length,
        last: f.last?.outcome,
        alerts: f.alerts.map((a) => a.condition).sort(),
      }));
      expect(rows).toEqual([
        { lane: 'brokerage>SN-ANN', chatbot: 'SN-ANN', runs: 3, last: 'ok', alerts: [] },
        { lane: 'brokerage>SN-BOB', chatbot: 'SN-BOB', runs: 3, last: 'guard', alerts: ['dropped', 'guard'] },
      ]);
    } finally {
      await closeQueues(queues);
      await dropPrefix(redis, prefix);
      await redis.quit();
    }
  }, 90_000);
});
