// Issue 55, point 1: what the API acknowledged is never sent again. A `feedsync sync` killed by
// SIGKILL in the middle of its updates has recorded the updates acknowledged so far (in batches,
// settle/acked.ts); the next run finds those listings unchanged and sends only the rest: at most the
// updates it had not made, those in flight when it died (≤ api.concurrency) and the last batch of
// acknowledgements not yet recorded (those of ACK_EVERY_MS). Counted at the emulator, not timed.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ACK_EVERY_MS } from '../../src/sync/settle/acked.js';
import { TEST_SECRET_KEY, TEST_SESSION_KEY } from '../helpers/emulator.js';
import { feedsync } from '../settings/run-cli.js';
import {
  csv,
  homesConfigYaml,
  requests,
  row,
  rows,
  settledCount,
  SN,
  syncKilledAfter,
  total,
  useEmulatorSync,
} from './helpers/feed.js';

const FEED = 200;
const CONCURRENCY = 4;
/** updates the killed run has had answered (at least) when it is killed */
const KILL_AFTER = 100;
const LATENCY_MS = 40;
/**
 * acknowledgements that may wait for their batch: those of ACK_EVERY_MS and of one apply under way
 * (taken as long again), at most CONCURRENCY a LATENCY_MS (the emulator answers no faster): 50
 */
const UNRECORDED = Math.ceil((CONCURRENCY * 2 * ACK_EVERY_MS) / LATENCY_MS);

const sync = useEmulatorSync({ perFile: true, emulator: { chatbots: [SN] } });

const updates = async () => total(await requests(sync.te(), 'RealEstateUpdate'));
const creates = async () => total(await requests(sync.te(), 'RealEstateCreate'));

describe('a run killed in the middle of its updates', () => {
  it(
    'the next run sends only the updates not acknowledged before the kill (+ in flight, + one batch)',
    { timeout: 120_000 },
    async () => {
      const config = join(sync.env().dir, 'feedsync.yaml');
      const yaml = homesConfigYaml(
        sync.te().url,
        { secretKey: TEST_SECRET_KEY, sessionKey: TEST_SESSION_KEY },
        { top: [`  concurrency: ${CONCURRENCY}`] },
      );
      await writeFile(config, yaml);
      const feed = join(sync.env().dir, 'homes.csv');
      await writeFile(feed, csv(rows(FEED)));
      const first = await feedsync(['sync', '--config', config, '--json']);
      expect(first.code, first.stderr).toBe(0);
      expect(await sync.te().listings(SN)).toHaveLength(FEED);

      // every listing's price changes: FEED updates to make
      const changed = Array.from({ length: FEED }, (_, i) => row(i + 1, { SalePrice: 900000 + i }));
      await writeFile(feed, csv(changed));
      const createsBefore = await creates();
      const updatesBefore = await updates();
      sync.te().emulator.configure({ latencyMs: LATENCY_MS });
      await syncKilledAfter(config, updates, KILL_AFTER);
      sync.te().emulator.configure({ latencyMs: 0 });
      // updates the killed run sent, once those still in the emulator's latency are answered
      const sent = (await settledCount(updates)) - updatesBefore;
      expect(sent).toBeGreaterThanOrEqual(KILL_AFTER);
      expect(sent).toBeLessThan(FEED);

      const rerun = await feedsync(['sync', '--config', config, '--json']);
      expect(rerun.code, rerun.stderr).toBe(0);
      const report = JSON.parse(rerun.stdout).reports[0];
      expect(report.outcome).toBe('ok');
      const resent = (await updates()) - updatesBefore - sent;
      expect(report.counts.updated).toBe(resent);
      // every update the killed run had not sent, and of those it sent at most the ones in flight
      // and the last batch of acknowledgements it had not recorded yet (today's figure: all 200 again)
      expect(resent).toBeGreaterThanOrEqual(FEED - sent);
      expect(resent - (FEED - sent)).toBeLessThanOrEqual(CONCURRENCY + UNRECORDED);
      // creates never doubled: every listing once, at its new price
      expect(await creates()).toBe(createsBefore);
      const listings = await sync.te().listings(SN);
      expect(listings).toHaveLength(FEED);
      expect(new Set(listings.map((l) => l.SalePrice)).size).toBe(FEED);
      expect(Math.min(...listings.map((l) => Number(l.SalePrice)))).toBe(900000);

      const after = await feedsync(['sync', '--config', config, '--json']);
      expect(JSON.parse(after.stdout).reports[0].counts).toMatchObject({ created: 0, updated: 0 });
    },
  );
});
