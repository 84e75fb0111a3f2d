// `feedsync sync` as a user runs it: a child process against the emulator over HTTP, the config and
// the CSV feed in a temp dir, state in .feedsync/state.lmdb beside the config.
import { readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { TEST_SECRET_KEY } from '../helpers/emulator.js';
import { feedsync } from '../settings/run-cli.js';
import { csv, homesConfigYaml, rows, SN, useEmulatorSync, writeHomesConfig } from './helpers/feed.js';

let config: string;
const sync = useEmulatorSync({ perFile: true });
beforeAll(async () => {
  config = await writeHomesConfig(sync, { deletes: '{ maxFraction: 0.3, batchSize: 2 }' });
});

describe('feedsync sync', () => {
  it('syncs, prints one JSON document with --json, and keeps state beside the config', async () => {
    await writeFile(join(sync.env().dir, 'homes.csv'), csv(rows(12)));
    const run = await feedsync(['sync', '--config', config, '--json']);
    expect(run.code).toBe(0);
    const { reports } = JSON.parse(run.stdout);
    expect(reports).toHaveLength(1);
    expect(reports[0]).toMatchObject({
      feed: 'homes',
      outcome: 'ok',
      counts: { created: 12 },
      stateLocation: join(sync.env().dir, '.feedsync', 'state.lmdb'),
    });
    const state = JSON.parse((await feedsync(['state', 'export', '--config', config])).stdout);
    expect(Object.keys(state['fp:homes'])).toHaveLength(12);
    expect((await sync.te().listings(SN)).length).toBe(12);
  });

  it('a rerun in a new process takes the listings it paged last time from the page echo file', async () => {
    const again = async () => JSON.parse((await feedsync(['sync', '--config', config, '--json'])).stdout).reports[0];
    const first = await again(); // pages the 12 listings created above, decoding them, and keeps them in a file
    expect(first).toMatchObject({ outcome: 'ok', counts: { unchanged: 12 } });
    expect(first.remote.recalled ?? 0).toBe(0);
    expect(await readdir(join(sync.env().dir, '.feedsync', 'page-echo'))).toHaveLength(1);
    const second = await again();
    expect(second).toMatchObject({ outcome: 'ok', counts: { unchanged: 12 }, remote: { recalled: 12 } });
  });

  it('prints the plan on a dry run as a table on stderr, and writes nothing', async () => {
    await writeFile(
      join(sync.env().dir, 'homes.csv'),
      csv(rows(11).map((r, i) => (i === 0 ? { ...r, SalePrice: 5 } : r))),
    );
    const run = await feedsync(['sync', '--config', config, '--dry-run']);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain('DRY RUN');
    expect(run.stderr).toContain('~ MLS0001: SalePrice 301000 → 5');
    expect(run.stderr).toContain('- MLS0012 (absent)');
    expect((await sync.te().listings(SN)).find((l) => l.MLSNumber === 'MLS0001')?.SalePrice).toBe(301000);
  });

  it('exits 3 when a guard holds deletes back, naming what it would delete', async () => {
    await writeFile(join(sync.env().dir, 'homes.csv'), csv(rows(2)));
    // the dry run's plan comes with the outcome a real run would have: it is no plan that would succeed
    const dry = await feedsync(['sync', '--config', config, '--dry-run']);
    expect(dry.code).toBe(3);
    expect(dry.stderr).toMatch(
      /^dry run homes → SN-SYNC \(a real run would end "synced homes → SN-SYNC, deletes held by the delete guard"\): would create 0, update 0, delete 0;/m,
    );
    const run = await feedsync(['sync', '--config', config]);
    expect(run.code).toBe(3);
    expect(run.stderr).toContain('would have deleted 10 listing(s)');
    expect(run.stderr).toContain('--force');
    expect((await sync.te().listings(SN)).length).toBe(12);
    const forced = await feedsync(['sync', '--config', config, '--force', '--json']);
    expect(forced.code).toBe(0);
    expect(JSON.parse(forced.stdout).reports[0].counts.deleted).toBe(10);
  });

  it('exits 4 when a record has no key: the valid listings are written, the feed was not read whole', async () => {
    await writeFile(join(sync.env().dir, 'homes.csv'), csv([...rows(3), { ...rows(4)[3], MLSNumber: '' }]));
    const run = await feedsync(['sync', '--config', config, '--json']);
    expect(run.code).toBe(4);
    expect(JSON.parse(run.stdout).reports[0]).toMatchObject({
      outcome: 'partial',
      source: { complete: false },
      counts: { created: 1 },
    });
    expect((await sync.te().listings(SN)).map((l) => l.MLSNumber).sort()).toEqual(['MLS0001', 'MLS0002', 'MLS0003']);
  });

  it('exits 1 when the service refuses the credentials, naming the key to check', async () => {
    const refused = join(sync.env().dir, 'refused.yaml');
    await writeFile(
      refused,
      homesConfigYaml(
        sync.te().url,
        { secretKey: TEST_SECRET_KEY, sessionKey: 'not-the-session-key' },
        { deletes: '{ maxFraction: 0.3 }' },
      ),
    );
    const run = await feedsync(['sync', '--config', refused]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('api.sessionKey');
    expect((await sync.te().listings(SN)).length).toBe(3);
  });

  it('exits 2 for an unknown --feed and lists the known ones', async () => {
    const run = await feedsync(['sync', '--config', config, '--feed', 'nope']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('unknown feed nope; feeds in');
    expect(run.stderr).toContain('homes');
  });
});
