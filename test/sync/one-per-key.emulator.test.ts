// Invariant 2 over HTTP against the emulator: one listing per key. A key the feed repeats is
// written once with its later record, never created twice in a run, and a rerun writes nothing;
// copies the service holds of one key are reduced to one without losing the listing.
import { describe, expect, it } from 'vitest';
import { generateResoRecords } from '../../fixtures/generate.js';
import type { TestEmulator } from '../helpers/emulator.js';
import { startResoServer } from '../helpers/reso-server.js';
import { row, rows, SN, type SyncEnv, useEmulatorSync, writeCounts } from './helpers/feed.js';

let te: TestEmulator;
let env: SyncEnv;
const emulator = useEmulatorSync((t, e) => {
  te = t;
  env = e;
});

const writes = () => writeCounts(te);
const copiesOf = async (key: string) => (await te.listings(SN)).filter((l) => l.MLSNumber === key);

describe('a key the feed repeats', () => {
  it('CSV with a key three times: one create with the last record, and a rerun writes nothing', async () => {
    const data = [
      row(1),
      row(2, { SalePrice: 1 }),
      row(3),
      row(4),
      row(2, { SalePrice: 2 }),
      row(5),
      row(6),
      row(2, { SalePrice: 3 }),
    ];
    await env.writeFeed(data);
    const first = await env.sync(te);
    expect(first.counts).toMatchObject({ created: 6, feedDuplicates: 2, deleted: 0 });
    expect(await writes()).toEqual({ create: 6, update: 0, delete: 0 });
    expect((await copiesOf('MLS0002')).map((l) => l.SalePrice)).toEqual([3]);

    for (let run = 0; run < 2; run++) {
      const again = await env.sync(te);
      expect(again.counts).toMatchObject({ created: 0, updated: 0, deleted: 0, duplicatesRemoved: 0 });
      expect(await writes()).toEqual({ create: 6, update: 0, delete: 0 });
    }
    expect((await te.listings(SN)).length).toBe(6);
  });

  it('a key repeated far apart (past the pending window) is never created twice, and a rerun writes nothing', async () => {
    const data = [row(1, { SalePrice: 1 }), ...rows(1100, 2), row(1, { SalePrice: 2 })];
    await env.writeFeed(data);
    const first = await env.sync(te, env.feed({ deletes: { maxFraction: 1, batchSize: 100 } }), {
      api: { pageSize: 100, concurrency: 8 },
    });
    expect(first.counts.feedDuplicates).toBe(1);
    expect((await copiesOf('MLS0001')).map((l) => l.SalePrice)).toEqual([2]);
    expect((await writes()).create).toBe(1101);
    const before = await writes();
    const again = await env.sync(te, env.feed({ deletes: { maxFraction: 1, batchSize: 100 } }), {
      api: { pageSize: 100, concurrency: 8 },
    });
    expect(again.counts).toMatchObject({ created: 0, updated: 0, deleted: 0 });
    expect(await writes()).toEqual(before);
  });

  it('RESO with a repeated ListingId: one listing, the later record wins, a rerun writes nothing', async () => {
    const records = generateResoRecords(8, { seed: 9 }).filter(
      (r) => r.MlgCanView !== false && r.StandardStatus === 'Active',
    );
    const twin = {
      ...records[1]!,
      ListingKey: `${String(records[1]!.ListingKey)}-B`,
      ListPrice: 123456,
      ModificationTimestamp: '2099-01-01T00:00:00Z',
    };
    const reso = await startResoServer({ records: [...records, twin], maxPageSize: 3 });
    emulator.closeAfterTest(reso);
    const feed = env.feed({
      source: { kind: 'reso', url: reso.url, retries: 0 },
      mapping: { preset: 'reso', fields: { Url: { template: 'https://broker.test/l/{ListingId}' } } },
      deletes: { maxFraction: 1 },
    });
    const first = await env.sync(te, feed);
    expect(first.counts.feedDuplicates).toBe(1);
    const id = String(records[1]!.ListingId);
    expect((await copiesOf(id)).map((l) => l.SalePrice)).toEqual([123456]);
    expect((await writes()).create).toBe(records.length);
    const before = await writes();
    const again = await env.sync(te, feed);
    expect(again.counts).toMatchObject({ created: 0, updated: 0, deleted: 0 });
    expect(await writes()).toEqual(before);
    expect(await copiesOf(id)).toHaveLength(1);
  });
});

describe('copies the service holds of one key', () => {
  it('are reduced to one, and the listing stays', async () => {
    await env.writeFeed(rows(3));
    await env.sync(te);
    const [copy] = await copiesOf('MLS0002');
    const { ID: _id, ...listing } = copy!;
    await te.api.createListing({ ...listing, SalePrice: 7 });
    const report = await env.sync(te);
    expect(report.counts).toMatchObject({ duplicatesRemoved: 1, created: 0 });
    expect(await copiesOf('MLS0002')).toHaveLength(1);
    expect((await te.listings(SN)).length).toBe(3);
    const rerun = await env.sync(te);
    expect(rerun.counts).toMatchObject({ duplicatesRemoved: 0, created: 0, updated: 0, deleted: 0 });
  });
});
