// `feedsync undo` of one chatbot's lane of a routed run, end to end: real `feedsync` processes
// against the emulator over HTTP, state and change log in files. One feed routed by agent to two
// chatbots; its bad export changes both; undoing SN-ANN's run puts SN-ANN back as it was, listing
// for listing, and leaves SN-BOB as the bad run left it; the sync state of SN-ANN's lane is as if
// the bad run had not happened (the good feed then writes nothing to SN-ANN), and SN-BOB's lane is
// untouched (the good feed then reverts SN-BOB's changes as any run would).
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FeedRunReport } from '../../src/runs/run-lanes.js';
import { startTestEmulator, type TestEmulator } from '../helpers/emulator.js';
import { feedsync } from '../settings/run-cli.js';
import { COLUMNS, csv } from '../sync/helpers/feed.js';
import { annBobConfigYaml } from '../sync/helpers/routed.js';
import { badRows, goodRows, listingsAsText } from './helpers.js';

let te: TestEmulator;
let dir: string | undefined;
beforeAll(async () => {
  te = await startTestEmulator();
});
afterAll(async () => {
  await te.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const HEADER = [...COLUMNS, 'Description', 'Agent'] as const;
/** odd MLS numbers are Ann's, even ones Bob's */
const withAgents = (rows: ReturnType<typeof goodRows>) =>
  rows.map((r) => ({ ...r, Agent: Number(String(r.MLSNumber).slice(3)) % 2 ? 'ann' : 'bob' }));

async function sync(config: string): Promise<FeedRunReport[]> {
  const out = await feedsync(['sync', '--config', config, '--json']);
  expect(out.code, out.stderr).toBe(0);
  return JSON.parse(out.stdout).reports as FeedRunReport[];
}

describe('feedsync undo of one lane of a routed run', () => {
  it(
    "puts that chatbot back and leaves the feed's other chatbot and its lane untouched",
    { timeout: 120_000 },
    async () => {
      dir = await mkdtemp(join(tmpdir(), 'feedsync-undo-routed-'));
      const config = join(dir, 'feedsync.yaml');
      await writeFile(config, annBobConfigYaml(te.url, { name: 'homes', columns: [...COLUMNS, 'Description'] }));
      const write = (rows: ReturnType<typeof goodRows>) =>
        writeFile(join(dir!, 'homes.csv'), csv(withAgents(rows), HEADER));

      await write(goodRows());
      await sync(config);
      const annBefore = listingsAsText(await te.listings('SN-ANN'));
      const bobBefore = listingsAsText(await te.listings('SN-BOB'));
      expect([annBefore.length, bobBefore.length]).toEqual([10, 10]);

      await write(badRows());
      const bad = await sync(config);
      // Ann: prices of 1, 3, 5, Location of 7, 19 gone, 21 new; Bob: prices of 2, 4, Location of 6, 20 gone, 22 new
      expect(bad.map((r) => [r.chatbot, r.counts.created, r.counts.updated, r.counts.deleted])).toEqual([
        ['SN-ANN', 1, 4, 1],
        ['SN-BOB', 1, 3, 1],
      ]);
      const bobAfterBad = listingsAsText(await te.listings('SN-BOB'));

      const undo = await feedsync(['undo', bad[0]!.runId, '--config', config, '--json']);
      expect(undo.code, undo.stderr).toBe(0);
      expect(JSON.parse(undo.stdout).report).toMatchObject({
        outcome: 'ok',
        feed: 'homes',
        chatbot: 'SN-ANN',
        counts: { deleted: 1, updated: 4, created: 1 },
      });
      expect(listingsAsText(await te.listings('SN-ANN'))).toEqual(annBefore);
      expect(listingsAsText(await te.listings('SN-BOB'))).toEqual(bobAfterBad);

      // Ann's lane state is as if the bad run had not happened; Bob's is as the bad run left it
      await write(goodRows());
      const rerun = await sync(config);
      expect(rerun.map((r) => [r.chatbot, r.outcome, r.counts.created, r.counts.updated, r.counts.deleted])).toEqual([
        ['SN-ANN', 'ok', 0, 0, 0],
        ['SN-BOB', 'ok', 1, 3, 1],
      ]);
      expect(listingsAsText(await te.listings('SN-BOB'))).toEqual(bobBefore);
    },
  );
});
