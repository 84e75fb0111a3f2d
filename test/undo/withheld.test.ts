// Issue 49, point 6: undo puts a listing back as the feed's display rules allow it now. Over real
// HTTP: an idx RESO feed (a RESO test server serving records with the display flags,
// test/helpers/flagged-reso.ts) synced into the emulator; the seller of FL-02 withdraws the address
// (InternetAddressDisplayYN false), an incremental run takes the street and pin off; undoing that
// run does not put them back, nor does the next incremental run, and neither the change log file,
// `runs show`, `history` nor the status run page holds the street address from the run that
// withheld it on.
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { openChangeLog } from '../../src/change-log/open.js';
import { renderRun } from '../../src/server/status/status-page.js';
import { changeLogFile, stateFile } from '../../src/state/paths.js';
import { formatSyncReport } from '../../src/sync/report/report-format.js';
import { formatUndoReport } from '../../src/undo/index.js';
import type { TestEmulator } from '../helpers/emulator.js';
import { flaggedRecord } from '../helpers/flagged-reso.js';
import { startResoServer } from '../helpers/reso-server.js';
import { feedsync } from '../settings/run-cli.js';
import { SN } from '../sync/helpers/feed.js';
import { inProcess, resoUndoConfig, useUndoEmulator } from './helpers.js';

let te: TestEmulator;
const { dirs } = useUndoEmulator((t) => (te = t));

const STREET = '102 Oak Street';
/** FL-02's latitude as the RESO server sends it (30.26 + 2/1000) */
const LATITUDE = '30.262';
const listing = async (mls: string) => (await te.listings(SN)).find((l) => l.MLSNumber === mls);

describe('undo of a run that withheld an address (InternetAddressDisplayYN false)', () => {
  it(
    'does not put the street and pin back, and no output from that run on holds them',
    { timeout: 90_000 },
    async () => {
      const server = await startResoServer({ records: [1, 2, 3].map((i) => flaggedRecord(i)) });
      const config = await resoUndoConfig(te.url, server.url, dirs);
      try {
        const runs = await inProcess(config, async (ops) => {
          expect((await ops.sync()).counts.created).toBe(3);
          expect((await listing('FL-02'))!.Address).toBe(STREET);

          // the seller withdraws the address; the price changes too, so the undo has something to put back
          server.touch('F-02', {
            InternetAddressDisplayYN: false,
            ListPrice: 499_000,
            ModificationTimestamp: '2025-02-01T00:00:00.000Z',
          });
          const withheld = await ops.sync();
          expect(withheld.source.mode).toBe('incremental');
          expect(withheld.counts.updated).toBe(1);
          expect(formatSyncReport(withheld)).not.toContain(STREET);
          const after = (await listing('FL-02'))!;
          expect([after.Address, after.Latitude, after.Longitude, after.Location]).toEqual([
            undefined,
            undefined,
            undefined,
            undefined,
          ]);

          const undo = await ops.undo(withheld.runId);
          expect(undo.outcome, undo.message).toBe('ok');
          expect(formatUndoReport(undo)).not.toContain(STREET);
          const undone = (await listing('FL-02'))!;
          expect(undone.SalePrice).toBe(402_000);
          expect([undone.Address, undone.Latitude, undone.Longitude, undone.Location]).toEqual([
            undefined,
            undefined,
            undefined,
            undefined,
          ]);
          expect(undone.City).toBe('Austin');

          // the next incremental pull reads nothing new, and leaves the listing as the undo left it
          const next = await ops.sync();
          expect(next.source.mode).toBe('incremental');
          const later = (await listing('FL-02'))!;
          expect([later.Address, later.Latitude, later.Longitude]).toEqual([undefined, undefined, undefined]);
          // the other listings keep their addresses
          expect((await listing('FL-01'))!.Address).toBe('101 Oak Street');
          return {
            first: (await openRunIds(config))[0]!,
            withheld: withheld.runId,
            undo: undo.runId,
            next: next.runId,
          };
        });

        // the change log file: no line from the run that withheld it on holds the street or the pin
        const loaded = await loadConfig(config);
        const lines = (await readFile(changeLogFile(stateFile(loaded)), 'utf8'))
          .split('\n')
          .filter((l) => l !== '' && !l.includes(`"${runs.first}"`));
        expect(lines.length).toBeGreaterThan(2);
        for (const l of lines) {
          expect(l).not.toContain(STREET);
          expect(l).not.toContain(LATITUDE);
        }
        for (const run of [runs.withheld, runs.undo]) {
          const show = await feedsync(['runs', 'show', run, '--config', config]);
          expect(show.code, show.stderr).toBe(0);
          expect(show.stdout).toContain('FL-02');
          expect(show.stdout).not.toContain(STREET);
          const json = await feedsync(['runs', 'show', run, '--config', config, '--json']);
          expect(json.stdout).not.toContain(STREET);
          const log = await openChangeLog(loaded);
          const found = await log.run(run, 100);
          await log.close();
          expect(renderRun(run, found, 100)).not.toContain(STREET);
        }
        // history: the listing's whole story, the create from before the address was withheld too
        const history = await feedsync(['history', '--config', config, '--feed', 'mls', '--key', 'FL-02']);
        expect(history.code, history.stderr).toBe(0);
        expect(history.stdout).toMatch(/~ FL-02 update: .*Address \(withheld\) → \(unset\)/);
        expect(history.stdout).not.toContain(STREET);
        expect(
          (await feedsync(['history', '--config', config, '--feed', 'mls', '--key', 'FL-02', '--json'])).stdout,
        ).not.toContain(STREET);
      } finally {
        await server.close();
      }
    },
  );
});

/** the runs the change log holds, oldest first */
async function openRunIds(config: string): Promise<string[]> {
  const log = await openChangeLog(await loadConfig(config));
  try {
    return (await log.runs(undefined, 100)).map((r) => r.runId).reverse();
  } finally {
    await log.close();
  }
}
