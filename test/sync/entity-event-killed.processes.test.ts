// Issue 38, point 2/4: a `feedsync sync` polling the RESO EntityEvent log (RCP-027; the RESO test
// server's log, test/helpers/reso-server.ts) killed by SIGKILL after some of its writes reached the
// chatbot and before its state's commit stored the new sequence. The next run reads the same events
// again from the old sequence (the mark is stored with the lane's commit), and the chatbot ends
// with every listing once: a listing written before the kill is matched by key, not created twice.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { generateResoRecords } from '../../fixtures/generate.js';
import { startResoServer } from '../helpers/reso-server.js';
import { feedsync } from '../settings/run-cli.js';
import { apiYaml, requests, settledCount, SN, syncKilledAfter, total, useEmulatorSync } from './helpers/feed.js';
import { NOT_SHOWN } from './helpers/reso-records.js';

const FIRST = 30;
const ADDED = 40;

const sync = useEmulatorSync({ perFile: true, emulator: { chatbots: [SN] } });

function records(n: number, from: number): Record<string, unknown>[] {
  const shown = generateResoRecords(n * 3, { seed: 383 + from }).filter(
    (r) => r.MlgCanView !== false && !NOT_SHOWN.has(String(r.StandardStatus)),
  );
  return shown.slice(0, n).map((r, i) => ({
    ...r,
    ListingKey: `K-${String(from + i + 1).padStart(3, '0')}`,
    ModificationTimestamp: new Date(Date.UTC(2025, 0, 1, 0, from + i)).toISOString(),
  }));
}

describe('an EntityEvent run killed between its writes and its commit', () => {
  it(
    'the next run replays the events from the stored sequence, and no listing is doubled',
    { timeout: 120_000 },
    async () => {
      const server = sync.closeAfterTest(
        await startResoServer({ records: records(FIRST, 0), maxPageSize: 50, entityEvents: true }),
      );
      const config = join(sync.env().dir, 'feedsync.yaml');
      const yaml = [
        ...apiYaml(sync.te().url),
        '  ratePerSecond: 1000',
        'feeds:',
        '  - name: mls',
        `    chatbot: ${SN}`,
        `    source: { kind: reso, url: "${server.url}", incremental: true, changes: entityEvent, retries: 0, photosTimestampField: null }`,
        '    deletes: { maxFraction: 1 }',
        '    mapping: { preset: reso, fields: { MLSNumber: { from: ListingKey }, Url: { template: "https://broker.test/l/{ListingKey}" } } }',
      ].join('\n');
      await writeFile(config, yaml);
      const first = await feedsync(['sync', '--config', config, '--json']);
      expect(first.code, first.stderr).toBe(0);
      expect(await sync.te().listings(SN)).toHaveLength(FIRST);

      // new records, each with its event (a change the log names)
      for (const r of records(ADDED, 100)) {
        server.records = [...server.records, r];
        server.event(String(r.ListingKey));
      }
      sync.te().emulator.configure({ latencyMs: 40 });
      await syncKilledAfter(config, () => requests(sync.te(), 'RealEstateCreate').then(total), 5);
      sync.te().emulator.configure({ latencyMs: 0 });
      // a create the killed process sent may still be in the emulator's 40 ms latency: count once
      // every create it received has been answered
      const written =
        (await settledCount(() =>
          sync
            .te()
            .listings(SN)
            .then((l) => l.length),
        )) - FIRST;
      expect(written).toBeGreaterThan(0);
      expect(written).toBeLessThan(ADDED);

      const replay = await feedsync(['sync', '--config', config, '--json']);
      expect(replay.code, replay.stderr).toBe(0);
      const report = JSON.parse(replay.stdout).reports[0];
      expect(report.outcome).toBe('ok');
      // the same events again: the sequence the killed run reached was never stored
      expect(report.source.events).toMatchObject({ read: ADDED, keys: ADDED, fetched: ADDED, gone: 0 });
      expect(report.counts.created).toBe(ADDED - written);
      const listings = await sync.te().listings(SN);
      const keys = listings.map((l) => String(l.MLSNumber));
      expect(listings).toHaveLength(FIRST + ADDED);
      expect(new Set(keys).size).toBe(FIRST + ADDED);

      const after = await feedsync(['sync', '--config', config, '--json']);
      expect(JSON.parse(after.stdout).reports[0].source.events).toEqual({ read: 0, keys: 0, fetched: 0, gone: 0 });
    },
  );
});
