// Issue 23, bounded bytes: the CLI's --json report is bounded like the stored one (the first items of
// each list, an `omitted` count), so a feed of many rejected records still prints one document; an
// unmapped value keeps an 80-character excerpt, and so does an alert built from it.
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AlertRules } from '../../src/alerts/config-schema.js';
import { afterRun, emptyState } from '../../src/alerts/rules.js';
import { createUnmappedTally } from '../../src/mapping/unmapped.js';
import { REPORT_LIST_ITEMS } from '../../src/queue/report-size.js';
import { startTestEmulator, TEST_SECRET_KEY, TEST_SESSION_KEY, type TestEmulator } from '../helpers/emulator.js';
import { feedsync } from '../settings/run-cli.js';
import { createSyncEnv, csv, homesConfigYaml, row, type SyncEnv } from './helpers/feed.js';

let te: TestEmulator;
let env: SyncEnv;
beforeAll(async () => {
  te = await startTestEmulator();
  env = await createSyncEnv();
});
afterAll(async () => {
  await te.close();
  await rm(env.dir, { recursive: true, force: true });
});

describe('the CLI report is bounded', () => {
  it('--json keeps the first rejected records and counts the rest under omitted', async () => {
    const rejected = REPORT_LIST_ITEMS + 30;
    const data = [
      row(1),
      ...Array.from({ length: rejected }, (_, i) => row(100 + i, { SalePrice: `not a price ${'z'.repeat(500)}` })),
    ];
    await writeFile(join(env.dir, 'homes.csv'), csv(data));
    const config = join(env.dir, 'feedsync.yaml');
    await writeFile(
      config,
      homesConfigYaml(
        te.url,
        { secretKey: TEST_SECRET_KEY, sessionKey: TEST_SESSION_KEY },
        { deletes: '{ maxFraction: 1 }' },
      ),
    );
    const run = await feedsync(['sync', '--config', config, '--json']);
    const report = JSON.parse(run.stdout).reports[0];
    expect(report.counts).toMatchObject({ created: 1, rejected });
    expect(report.rejected).toHaveLength(REPORT_LIST_ITEMS);
    expect(report.omitted).toMatchObject({ rejected: 30 });
    expect(JSON.stringify(report.rejected[0])).not.toContain('z'.repeat(100)); // the value is an excerpt
  });
});

describe('unmapped values and alerts keep excerpts', () => {
  it('a 200 KB unmapped value is kept as 80 characters and its length, in the tally and the alert', () => {
    const tally = createUnmappedTally();
    const long = 'Q'.repeat(200_000);
    tally.add({ field: 'PropertyType', from: 'PropertyType', value: long });
    tally.add({ field: 'PropertyType', from: 'PropertyType', value: long });
    const [u] = tally.list();
    expect(u).toEqual({ field: 'PropertyType', value: `${'Q'.repeat(80)}… (200000 chars)`, count: 2 });
    const values = Array.from({ length: 12 }, (_, i) => `PropertyType: ${String(i).repeat(100_000)}`);
    const { holding } = afterRun(
      emptyState(),
      {
        runId: 'r',
        at: '2026-01-01T00:00:00Z',
        outcome: 'ok',
        records: 1,
        valid: 1,
        rejected: 0,
        unmapped: values,
        message: 'm'.repeat(1_000_000),
      },
      AlertRules.parse({}),
    );
    const message = holding.get('unmapped')!;
    expect(message.length).toBeLessThan(2000);
    expect(message).toMatch(/and 2 more$/);
  });
});
