// Issue 35, point 5: after `undo`, the report says what the next incremental pull and the next full
// pull will do with the undone changes, and they do that: over real HTTP, an incremental RESO feed
// (a RESO test server, the emulator), a run of price changes undone; the next incremental pull
// leaves the undone prices as they are (it reads only what changed after the mark), the next full
// pull writes the feed's prices again. A CSV feed is read whole by every sync: the report says so.
import { describe, expect, it } from 'vitest';
import { generateResoRecords } from '../../fixtures/generate.js';
import { feedsyncCommand } from '../../src/format/invocation.js';
import { formatUndoReport } from '../../src/undo/index.js';
import type { TestEmulator } from '../helpers/emulator.js';
import { startResoServer } from '../helpers/reso-server.js';
import { SN } from '../sync/helpers/feed.js';
import { createStory, goodRows, inProcess, resoUndoConfig, useUndoEmulator } from './helpers.js';

const cmd = feedsyncCommand().replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

let te: TestEmulator;
const { dirs } = useUndoEmulator((t) => (te = t));

const priceOf = async (id: string) => (await te.listings(SN)).find((l) => l.MLSNumber === id)?.SalePrice;

describe('undo says what the next pulls will do', () => {
  it(
    'an incremental RESO feed: the next incremental pull does not redo the undone changes, the next full pull does',
    { timeout: 60_000 },
    async () => {
      const records = generateResoRecords(12, { seed: 5 })
        .filter((r) => r.MlgCanView !== false && r.StandardStatus === 'Active')
        .map((r, i): Record<string, unknown> => ({
          ...r,
          ModificationTimestamp: new Date(Date.UTC(2025, 0, 1, 0, i)).toISOString(),
        }));
      const server = await startResoServer({ records, maxPageSize: 4 });
      const config = await resoUndoConfig(te.url, server.url, dirs);
      try {
        await inProcess(config, async (ops) => {
          expect((await ops.sync()).outcome).toBe('ok');
          const [a, b] = records;
          const was = await priceOf(String(a!.ListingId));
          // changes stamped in the past, and a later record touched without a change the chatbot sees: the mark passes the two
          server.touch(String(a!.ListingKey), {
            ListPrice: 111_111,
            ModificationTimestamp: '2025-02-01T00:00:00.000Z',
          });
          server.touch(String(b!.ListingKey), {
            ListPrice: 222_222,
            ModificationTimestamp: '2025-02-01T00:01:00.000Z',
          });
          server.touch(String(records[2]!.ListingKey), { ModificationTimestamp: '2025-02-01T00:02:00.000Z' });
          const changed = await ops.sync();
          expect(changed.source.mode).toBe('incremental');
          expect(changed.counts.updated).toBe(2);

          const undo = await ops.undo(changed.runId);
          expect(undo.outcome).toBe('ok');
          expect(undo.next.incremental).toMatch(
            /^the next incremental pull reads only records changed from 2025-02-01T00:02:00.000Z on: it does not redo the 2 change\(s\) undone/,
          );
          expect(undo.next.full).toMatch(
            new RegExp(
              `^the next full pull \\(${cmd} sync --full, or schedule\\.full\\) reads every record and redoes what the feed still says: up to 2 change\\(s\\) undone`,
            ),
          );
          const text = formatUndoReport(undo);
          expect(text).toContain(undo.next.incremental!);
          expect(text).toContain(undo.next.full);
          expect(await priceOf(String(a!.ListingId))).toBe(was);

          // what it said: the incremental pull leaves the undone price, the full pull puts the feed's back
          const incremental = await ops.sync();
          expect(incremental.source.mode).toBe('incremental');
          expect(incremental.counts).toMatchObject({ created: 0, updated: 0, deleted: 0 });
          expect(await priceOf(String(a!.ListingId))).toBe(was);
          const full = await ops.sync({ full: true });
          expect(full.counts.updated).toBe(2);
          expect(await priceOf(String(a!.ListingId))).toBe(111_111);
        });
      } finally {
        await server.close();
      }
    },
  );

  it('a CSV feed: every sync reads it whole and redoes what the feed still says', async () => {
    const s = await createStory(te.url);
    dirs.push(s.dir);
    await inProcess(s.config, async (ops) => {
      await s.writeFeed(goodRows(5));
      await ops.sync();
      await s.writeFeed(goodRows(5).map((r, i) => (i === 0 ? { ...r, SalePrice: 1 } : r)));
      const changed = await ops.sync();
      const undo = await ops.undo(changed.runId);
      expect(undo.next.incremental).toBeUndefined();
      expect(undo.next.full).toMatch(
        /^the next sync reads the feed whole and redoes what the feed still says: up to 1 change\(s\) undone/,
      );
    });
  });
});
