// Issue 54's "done when", the third point, as a user meets it: `feedsync sync` run as a process
// (state in the file store beside the config, no Redis) over a RESO test server, the emulator as the
// chatbot. An existing feed without `display`, synced before the idx default existed (its store holds
// no rules, as the version before rules were kept left it), after the upgrade: the full pull would
// remove 8 of 25 listings (32 %) by the new default's statuses, past deletes.maxFraction 25 %; it
// stops at the delete limits, exits 3 (a delete guard held deletes back), and its report says which
// rule changed, what it would remove and how to accept it; `--force` removes them and exits 0.
// (test/sync/rule-change.emulator.test.ts has the same run in process, with the report's fields.)
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EXIT } from '../../src/cli/exit.js';
import { createFileStore } from '../../src/state/file-store.js';
import { RULES_NAMESPACE } from '../../src/sync/model/state-names.js';
import { flaggedRecord } from '../helpers/flagged-reso.js';
import { startResoServer } from '../helpers/reso-server.js';
import { feedsync } from '../settings/run-cli.js';
import { apiYaml, SN, useEmulatorSync } from './helpers/feed.js';
import { expectUpgradeStopSaid } from './helpers/upgrade-stop.js';

const sync = useEmulatorSync({ perFile: true });

/** the config: the feed of flagged records at `url`, with `display` when given (none: the idx default) */
async function writeConfig(url: string, display?: Record<string, unknown>): Promise<string> {
  const config = join(sync.env().dir, 'feedsync.yaml');
  const feed = {
    name: 'mls',
    chatbot: SN,
    source: { kind: 'reso', url, incremental: true, maxPageSize: 50, retries: 0 },
    mapping: { preset: 'reso', fields: { Url: { template: 'https://broker.test/l/{ListingId}' } } },
    deletes: { maxFraction: 0.25 },
    ...(display && { display }),
  };
  // (a JSON object is a YAML flow mapping)
  await writeFile(
    config,
    [...apiYaml(sync.te().url), '  ratePerSecond: 1000', 'feeds:', `  - ${JSON.stringify(feed)}`].join('\n'),
  );
  return config;
}

const held = async () => (await sync.te().listings(SN)).length;

describe('feedsync sync after an upgrade whose new default display rules would remove 32 % of the listings', () => {
  it('stops at the delete limits: exit 3, the report names the changed rule, what it would remove and --force; --force removes them, exit 0', async () => {
    // 25 listings, 8 of them Coming Soon: shown before the idx default (purpose internal), hidden by it
    const records = Array.from({ length: 25 }, (_, i) =>
      flaggedRecord(i + 1, i < 8 ? { StandardStatus: 'Coming Soon' } : {}),
    );
    const s = sync.closeAfterTest(await startResoServer({ records }));
    const before = await writeConfig(s.url, { purpose: 'internal' });
    const first = await feedsync(['sync', '--config', before, '--full']);
    expect(first.code, first.stderr).toBe(EXIT.ok);
    expect(await held()).toBe(25);

    // the store as the version before rules were kept left it: no rules recorded for the feed
    const store = await createFileStore(join(sync.env().dir, '.feedsync', 'state.lmdb'));
    await store.delete(RULES_NAMESPACE, ['mls']);
    await store.close();

    // the upgrade: the same feed, no `display`, so the idx default applies
    const after = await writeConfig(s.url);
    const stopped = await feedsync(['sync', '--config', after, '--full']);
    expect(stopped.code, stopped.stderr).toBe(EXIT.guard);
    expect(await held()).toBe(25);
    expectUpgradeStopSaid(stopped.stderr + stopped.stdout);

    const forced = await feedsync(['sync', '--config', after, '--full', '--force']);
    expect(forced.code, forced.stderr).toBe(EXIT.ok);
    expect(await held()).toBe(17);
  }, 120_000);
});
