// `feedsync undo` end to end, as ops would use it after a bad feed: real `feedsync` processes against
// the emulator over HTTP, state and change log in files (no Redis). The bad export's run is undone
// to byte-equal listings (IDs aside), and a rerun of the good feed then writes nothing; conflicts
// (a later run, a change on the service) are named and left alone unless forced; an undo is undone;
// a run whose whole listings were not kept is refused unless forced.
import '../setup/needs-redis.js';
import { createServer, type AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import type { TestEmulator } from '../helpers/emulator.js';
import { feedsync } from '../settings/run-cli.js';
import { requests, SN, total } from '../sync/helpers/feed.js';
import type { FeedRunReport } from '../../src/runs/run-lanes.js';
import type { SyncOptions } from '../../src/sync/index.js';
import { formatUndoReport } from '../../src/undo/index.js';
import {
  badRows,
  createStory,
  goodRows,
  inProcess,
  listingsAsText,
  runIdOf,
  type Story,
  useUndoEmulator,
} from './helpers.js';

let te: TestEmulator;
const { dirs } = useUndoEmulator((t) => (te = t));

async function story(top: string[] = []): Promise<Story> {
  const s = await createStory(te.url, top);
  dirs.push(s.dir);
  return s;
}

/** the good feed synced, then the bad one: the chatbot as it was before, and the bad run's id */
async function badSync(s: Story): Promise<{ before: string[]; bad: string }> {
  await s.writeFeed(goodRows());
  expect((await feedsync(['sync', '--config', s.config])).code).toBe(0);
  const before = listingsAsText(await te.listings(SN));
  await s.writeFeed(badRows());
  const bad = await feedsync(['sync', '--config', s.config]);
  expect(bad.code).toBe(0);
  expect(bad.stderr).toMatch(/2 created, 7 updated, 2 deleted/);
  return { before, bad: runIdOf(bad.stderr)! };
}

const writes = async () =>
  total(await requests(te, 'RealEstateCreate')) +
  total(await requests(te, 'RealEstateUpdate')) +
  total(await requests(te, 'RealEstateDelete'));

describe('feedsync undo', () => {
  // (several `feedsync` processes one after the other: on a loaded machine this takes a while)
  it(
    'puts the chatbot back as it was before the bad export, and a rerun of the good feed writes nothing',
    { timeout: 120_000 },
    async () => {
      const s = await story();
      const { before, bad } = await badSync(s);
      expect(listingsAsText(await te.listings(SN))).not.toEqual(before);

      const writesBefore = await writes();
      const dry = await feedsync(['undo', bad, '--dry-run', '--config', s.config]);
      expect(dry.code).toBe(0);
      expect(dry.stderr).toContain(
        `would undo run ${bad} of homes → ${SN}: 2 deleted, 7 updated back, 2 created again`,
      );
      expect(dry.stderr).toMatch(/~ MLS0001 would update back: SalePrice 3010000 → 301000/);
      expect(dry.stderr).toContain('~ MLS0006 would update back: fields the list does not return');
      expect(dry.stderr).toContain(`+ MLS0019 would create again (as it was before ${bad})`);
      expect(dry.stderr).toContain(`- MLS0021 would delete (${bad} created it)`);
      expect(await writes()).toBe(writesBefore); // the dry run wrote nothing

      const undo = await feedsync(['undo', bad, '--config', s.config, '--json']);
      expect(undo.code).toBe(0);
      const report = JSON.parse(undo.stdout).report;
      expect(report).toMatchObject({
        outcome: 'ok',
        undoOf: bad,
        counts: { deleted: 2, updated: 7, created: 2, conflicts: 0, cannot: 0 },
      });
      // every listing as it was before the bad run, every field (Location and the long descriptions too)
      expect(listingsAsText(await te.listings(SN))).toEqual(before);

      // the sync state is as if the bad run had not happened: the good feed again writes nothing
      await s.writeFeed(goodRows());
      const afterUndo = await writes();
      const rerun = await feedsync(['sync', '--config', s.config, '--json']);
      expect(rerun.code).toBe(0);
      expect(JSON.parse(rerun.stdout).reports[0].counts).toMatchObject({ created: 0, updated: 0, deleted: 0 });
      expect(await writes()).toBe(afterUndo);

      // the undo is a run of the change log, with its own changes
      const shown = await feedsync(['runs', 'show', report.runId, '--config', s.config]);
      expect(shown.stdout).toContain(`run ${report.runId}: homes → ${SN}, ok`);
      expect(shown.stdout).toContain('- MLS0021 delete (feedsync undo: the undone run created it)');
      expect(shown.stdout).toContain(`an undo of run ${bad}`);
      expect(shown.stdout).toMatch(/kept for undo: 9 whole listing\(s\), \d+ bytes/);
    },
  );

  it('fails without touching anything when the configured Redis does not answer', { timeout: 60_000 }, async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    const s = await story([`redis: { url: "redis://127.0.0.1:${port}", prefix: fstest-undo-noredis }`]);
    const out = await feedsync(['undo', 'some-run', '--config', s.config, '--json']);
    expect(out.code).toBe(1);
    expect(JSON.parse(out.stdout).error.code).toBe('REDIS_UNAVAILABLE');
    expect(await writes()).toBe(0);
  });

  it('names an unknown run as a usage error', async () => {
    const s = await story();
    const unknown = await feedsync(['undo', 'no-such-run', '--config', s.config]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('no run "no-such-run" in the change log');
  });
});

// The same story in this process (syncs and undos over real HTTP, the lock aside), for the cases.
describe('undoRun', () => {
  /** the good feed synced, then the bad one, in this process */
  async function badRun(
    s: Story,
    ops: { sync(opts?: SyncOptions): Promise<FeedRunReport> },
  ): Promise<{ before: string[]; bad: string }> {
    await s.writeFeed(goodRows());
    expect((await ops.sync()).outcome).toBe('ok');
    const before = listingsAsText(await te.listings(SN));
    await s.writeFeed(badRows());
    const bad = await ops.sync();
    expect(bad.counts).toMatchObject({ created: 2, updated: 7, deleted: 2 });
    return { before, bad: bad.runId };
  }

  it('a 1% rerun reads no listing back (its list calls are its pages) and its undo restores every field', async () => {
    const s = await story();
    await inProcess(s.config, async (ops) => {
      const good = goodRows(100);
      await s.writeFeed(good);
      expect((await ops.sync()).outcome).toBe('ok');
      const before = listingsAsText(await te.listings(SN));
      // one listing changed in listed fields and in Location (which the list does not return), one gone
      await s.writeFeed(
        good
          .slice(0, 99)
          .map((r, k) =>
            k === 0
              ? { ...r, SalePrice: Number(r.SalePrice) * 10, Location: 'Somewhere Else', Description: 'changed' }
              : r,
          ),
      );
      const lists = total(await requests(te, 'RealEstateList'));
      const rerun = await ops.sync();
      expect(rerun.counts).toMatchObject({ updated: 1, deleted: 1, created: 0 });
      // the minimum: the paging's pages and nothing else (no read-back of the listing before each change)
      expect(total(await requests(te, 'RealEstateList')) - lists).toBe(rerun.remote.pages);
      const undo = await ops.undo(rerun.runId);
      expect(undo).toMatchObject({ outcome: 'ok', counts: { updated: 1, created: 1, deleted: 0 } });
      expect(listingsAsText(await te.listings(SN))).toEqual(before);
    });
  });

  it('leaves a listing a later run changed as a conflict, and reverts it with --force', async () => {
    const s = await story();
    await inProcess(s.config, async (ops) => {
      const { bad } = await badRun(s, ops);
      // the vendor fixes MLS0002's price by hand in a third export: a later run writes it
      await s.writeFeed(badRows().map((r) => (r.MLSNumber === 'MLS0002' ? { ...r, SalePrice: 999 } : r)));
      const later = await ops.sync();
      expect(later.counts.updated).toBe(1);

      const undo = await ops.undo(bad);
      expect(undo.outcome).toBe('partial');
      expect(undo.conflicts).toEqual([
        {
          key: 'MLS0002',
          action: 'update',
          reason: expect.stringMatching(
            new RegExp(`^changed by a later run: run ${later.runId} of homes at \\S+ made a update$`),
          ),
        },
      ]);
      const byKey = new Map((await te.listings(SN)).map((l) => [l.MLSNumber, l]));
      expect(byKey.get('MLS0002')?.SalePrice).toBe(999); // left as the later run wrote it
      expect(byKey.get('MLS0001')?.SalePrice).toBe(301000); // the rest reverted
      expect(byKey.has('MLS0021')).toBe(false);

      const forced = await ops.undo(bad, { force: true });
      // again with --force: what the first undo put back reads as already back; the conflict is reverted
      expect(forced.conflicts).toEqual([expect.objectContaining({ key: 'MLS0002', forced: true })]);
      // (MLS0006 and MLS0007 changed only Location, which the list does not show: sent again)
      expect(forced.counts).toMatchObject({ updated: 3, deleted: 0, created: 0, unchanged: 8 });
      expect((await te.listings(SN)).find((l) => l.MLSNumber === 'MLS0002')?.SalePrice).toBe(302000);
    });
  });

  it('leaves a listing changed on the service since the run as a conflict naming the field', async () => {
    const s = await story();
    await inProcess(s.config, async (ops) => {
      const { bad } = await badRun(s, ops);
      const { ID: _id, ...listing } = (await te.listings(SN)).find((l) => l.MLSNumber === 'MLS0003')!;
      await te.api.updateListing({ ...listing, Bedrooms: 9, Key: 'MLS0003', KeyType: 'MLSNumber' });

      const dry = await ops.undo(bad, { dryRun: true });
      expect(dry.conflicts).toEqual([
        { key: 'MLS0003', action: 'update', reason: 'changed on the service since the run: Bedrooms' },
      ]);
      expect(formatUndoReport(dry)).toContain(
        '! MLS0003 conflict (left alone; --force to revert it): changed on the service since the run: Bedrooms',
      );
      expect((await ops.undo(bad)).outcome).toBe('partial');
      expect((await te.listings(SN)).find((l) => l.MLSNumber === 'MLS0003')).toMatchObject({
        Bedrooms: 9,
        SalePrice: 3030000,
      });
      // and a listing the run deleted that is back on the service is not created twice
      expect((await te.listings(SN)).filter((l) => l.MLSNumber === 'MLS0019')).toHaveLength(1);
    });
  });

  it('undoes an undo: the chatbot is back as the undone run left it', async () => {
    const s = await story();
    await inProcess(s.config, async (ops) => {
      const { before, bad } = await badRun(s, ops);
      const afterBad = listingsAsText(await te.listings(SN));
      const undo = await ops.undo(bad);
      expect(undo.outcome).toBe('ok');
      expect(listingsAsText(await te.listings(SN))).toEqual(before);
      const again = await ops.undo(undo.runId);
      expect(again).toMatchObject({ outcome: 'ok', counts: { deleted: 2, updated: 7, created: 2 } });
      expect(listingsAsText(await te.listings(SN))).toEqual(afterBad);
    });
  });

  it('refuses a run whose listings were not kept whole, saying which; --force undoes the rest', async () => {
    const s = await story(['changeLog: { maxWholeBytesPerRun: 0 }']);
    await inProcess(s.config, async (ops) => {
      const { bad } = await badRun(s, ops);
      const writesBefore = await writes();
      const undo = await ops.undo(bad);
      expect(undo.outcome).toBe('guard');
      expect(undo.message).toContain('nothing was done (--force undoes the rest)');
      expect(undo.cannot).toContainEqual({
        key: 'MLS0001',
        reason: expect.stringMatching(
          /^its listing before the update was not kept: the run's whole listings passed changeLog.maxWholeBytesPerRun/,
        ),
      });
      expect(undo.cannot).toContainEqual({
        key: 'MLS0019',
        reason: expect.stringMatching(/^its listing before the delete was not kept/),
      });
      expect(await writes()).toBe(writesBefore); // nothing written

      const forced = await ops.undo(bad, { force: true });
      expect(forced).toMatchObject({ outcome: 'partial', counts: { deleted: 2, updated: 0, created: 0, cannot: 9 } });
      expect((await te.listings(SN)).map((l) => l.MLSNumber)).not.toContain('MLS0021');
    });
  });

  it('undoes an update of listings its state had no record of, found in step (a crash between ack and record, a lost state)', async () => {
    // the good feed synced from another folder: the chatbot holds it, this folder's state knows nothing of it
    const other = await story();
    await other.writeFeed(goodRows());
    await inProcess(other.config, async (ops) => expect((await ops.sync()).outcome).toBe('ok'));
    const s = await story();
    await inProcess(s.config, async (ops) => {
      await s.writeFeed(goodRows());
      const found = await ops.sync();
      expect(found.counts).toMatchObject({ created: 0, updated: 0, unchanged: 20 });
      const before = listingsAsText(await te.listings(SN));
      await s.writeFeed(badRows());
      const bad = await ops.sync();
      expect(bad.counts).toMatchObject({ created: 2, updated: 7, deleted: 2 });
      // the Location (unlisted) of each listing it updated is known: the run that found them in step recorded it
      const undo = await ops.undo(bad.runId);
      expect(undo.cannot).toEqual([]);
      expect(undo.outcome).toBe('ok');
      expect(listingsAsText(await te.listings(SN))).toEqual(before);
    });
  });

  it('refuses a dry run as the run to undo: it wrote nothing', async () => {
    const s = await story();
    await s.writeFeed(goodRows(3));
    await inProcess(s.config, async (ops) => {
      const dry = await ops.sync({ dryRun: true });
      await expect(ops.undo(dry.runId)).rejects.toThrow(
        `run ${dry.runId} was a dry run: it wrote nothing, there is nothing to undo`,
      );
    });
  });
});
