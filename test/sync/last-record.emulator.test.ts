// Issue 35, point 1: one listing per key whatever order its records come in. The later record of a
// key decides: when it is off the market (the mapping's `skip`), the key is absent — not created,
// deleted if the chatbot holds it — on every run, full or incremental, and the report counts that
// delete apart (deletedByReason['off-market']). Each case runs twice (or more) to show it settles:
// the second run writes nothing. The property test does the same for any sequence of records
// sharing keys (fast-check), over real HTTP against the emulator.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { generateResoRecords } from '../../fixtures/generate.js';
import type { SyncReport } from '../../src/sync/index.js';
import type { TestEmulator } from '../helpers/emulator.js';
import { startResoServer } from '../helpers/reso-server.js';
import { createSyncEnv, row, rows, SN, type SyncEnv, useEmulatorSync, writeCounts, type Row } from './helpers/feed.js';

let te: TestEmulator;
let env: SyncEnv;
const emulator = useEmulatorSync((t, e) => {
  te = t;
  env = e;
});

const writes = () => writeCounts(te);
const held = async () => (await te.listings(SN)).map((l) => String(l.MLSNumber)).sort();

/** the test CSV columns, Status with a skip list as a preset's is (a Withdrawn record is off the market) */
const csvFeed = (e: SyncEnv) =>
  e.feed({
    mapping: {
      fields: {
        ...Object.fromEntries(Object.keys(row(1)).map((c) => [c, c])),
        Status: { from: 'Status', skip: ['Withdrawn'] },
      },
    },
    deletes: { maxFraction: 1, batchSize: 3 },
  });

/** valid = created + updated + unchanged + the documented others, in every report (point 4) */
function addsUp(r: SyncReport): void {
  const c = r.counts;
  expect(c.valid).toBe(
    c.created +
      c.updated +
      c.unchanged +
      (c.unwritten ?? 0) +
      (c.unplanned ?? 0) -
      (c.rewritten ?? 0) -
      (c.writtenThenGone ?? 0),
  );
}

describe('a key whose later record is off the market (CSV)', () => {
  it('Active then Withdrawn: never created, and every rerun writes nothing', async () => {
    await env.writeFeed([row(1), row(2), row(3, { Status: 'Active' }), row(4), row(3, { Status: 'Withdrawn' })]);
    const feed = csvFeed(env);
    const first = await env.sync(te, feed);
    expect(first.outcome).toBe('ok');
    expect(first.counts).toMatchObject({ valid: 3, created: 3, deleted: 0, skipped: 1 });
    addsUp(first);
    expect(await held()).toEqual(['MLS0001', 'MLS0002', 'MLS0004']);
    for (let run = 0; run < 2; run++) {
      const before = await writes();
      const again = await env.sync(te, feed);
      expect(again.counts).toMatchObject({ created: 0, updated: 0, deleted: 0 });
      addsUp(again);
      expect(await writes()).toEqual(before);
    }
  });

  it('Withdrawn then Active: created once, and every rerun writes nothing', async () => {
    await env.writeFeed([row(1), row(3, { Status: 'Withdrawn' }), row(2), row(3, { Status: 'Active' })]);
    const feed = csvFeed(env);
    const first = await env.sync(te, feed);
    expect(first.counts).toMatchObject({ valid: 3, created: 3, deleted: 0 });
    addsUp(first);
    expect(await held()).toEqual(['MLS0001', 'MLS0002', 'MLS0003']);
    const before = await writes();
    const again = await env.sync(te, feed);
    expect(again.counts).toMatchObject({ created: 0, updated: 0, deleted: 0 });
    expect(await writes()).toEqual(before);
  });

  it('the chatbot holds the key and the feed now ends with its Withdrawn record: deleted as off-market (no confirmation), then nothing', async () => {
    await env.writeFeed([row(1), row(2), row(3)]);
    const feed = csvFeed(env);
    await env.sync(te, feed);
    await env.writeFeed([row(1), row(3, { Status: 'Active' }), row(2), row(3, { Status: 'Withdrawn' })]);
    const second = await env.sync(te, feed);
    expect(second.counts).toMatchObject({ created: 0, updated: 0, deleted: 1 });
    expect(second.deletedByReason).toEqual({ 'off-market': 1 });
    addsUp(second);
    expect(await held()).toEqual(['MLS0001', 'MLS0002']);
    const before = await writes();
    const third = await env.sync(te, feed);
    expect(third.counts).toMatchObject({ created: 0, updated: 0, deleted: 0 });
    expect(await writes()).toEqual(before);
  });

  it('Active and Withdrawn far apart (past the pending window): what the first run wrote it deletes in the same run; the rerun writes nothing', async () => {
    const feedRows: Row[] = [row(1, { SalePrice: 7 }), ...rows(1100, 2), row(1, { Status: 'Withdrawn' })];
    await env.writeFeed(feedRows);
    const feed = csvFeed(env);
    const opts = { api: { pageSize: 100, concurrency: 8 } };
    const first = await env.sync(te, feed, opts);
    expect(first.outcome).toBe('ok');
    expect(first.counts.valid).toBe(1100);
    expect(first.deletedByReason).toEqual({ 'off-market': 1 });
    addsUp(first);
    expect((await te.listings(SN)).some((l) => l.MLSNumber === 'MLS0001')).toBe(false);
    const before = await writes();
    const again = await env.sync(te, feed, opts);
    expect(again.outcome).toBe('ok');
    expect(again.counts).toMatchObject({ created: 0, updated: 0, deleted: 0 });
    addsUp(again);
    expect(await writes()).toEqual(before);
  }, 90_000);
});

describe('RESO, the stock preset keyed by ListingId: two records share a ListingId', () => {
  const base = () =>
    generateResoRecords(12, { seed: 35 }).filter((r) => r.MlgCanView !== false && r.StandardStatus === 'Active');

  for (const order of ['active first', 'withdrawn first'] as const) {
    it(`${order}, full pulls and an incremental: the later record decides on every run, the second run writes nothing`, async () => {
      const records = base();
      const twin = records[1]!;
      // the pull by key reads ListingKey order: the suffix puts the Withdrawn record after the Active one, or before it
      const withdrawn = {
        ...twin,
        ListingKey: order === 'active first' ? `${String(twin.ListingKey)}-Z` : `0-${String(twin.ListingKey)}`,
        StandardStatus: 'Withdrawn',
        ModificationTimestamp: new Date(
          Date.parse(String(twin.ModificationTimestamp)) + (order === 'active first' ? 1000 : -1000),
        ).toISOString(),
      };
      const reso = emulator.closeAfterTest(await startResoServer({ records: [...records, withdrawn], maxPageSize: 3 }));
      const feed = env.feed({
        source: { kind: 'reso', url: reso.url, retries: 0, incremental: true, photosTimestampField: null },
        mapping: { preset: 'reso', fields: { Url: { template: 'https://broker.test/l/{ListingId}' } } },
        deletes: { maxFraction: 1 },
      });
      const id = String(twin.ListingId);
      const expectHeld = order === 'active first' ? false : true;
      const reports: SyncReport[] = [];
      for (let run = 0; run < 3; run++) {
        const before = await writes();
        const r = await env.sync(te, feed, { full: true });
        reports.push(r);
        expect(r.outcome).toBe('ok');
        addsUp(r);
        expect((await held()).includes(id)).toBe(expectHeld);
        if (run > 0) expect(await writes()).toEqual(before);
      }
      expect(reports[0]!.counts.created).toBe(reports[0]!.counts.valid);
      // an incremental pull that reads both again (both touched, in the same order of time)
      reso.touch(String(twin.ListingKey), { ListPrice: 1 });
      reso.touch(String(withdrawn.ListingKey), {});
      if (order === 'withdrawn first') {
        // read in time order: the Withdrawn record first, then the Active one
        reso.touch(String(twin.ListingKey), { ListPrice: 2 });
      }
      for (let run = 0; run < 2; run++) {
        const r = await env.sync(te, feed);
        expect(r.outcome).toBe('ok');
        addsUp(r);
        expect((await held()).includes(id)).toBe(expectHeld);
      }
    });
  }
});

/**
 * Issue 54 point 4: a RESO server holding two on-market records of one ListingId (the stock preset's
 * key), the later in ListingKey order (the full pull's) priced 654,321, the earlier 123,456; a feed
 * over it (incremental by timestamps, or by the EntityEvent log) after one full pull.
 */
async function twoRecordsOneKey(changes: 'timestamp' | 'entityEvent') {
  const records = generateResoRecords(12, { seed: 54 }).filter(
    (r) => r.MlgCanView !== false && r.StandardStatus === 'Active' && !String(r.PropertyType).includes('Lease'),
  );
  const later: Record<string, unknown> = { ...records[1]!, ListPrice: 654_321 };
  // the same ListingId, earlier in ListingKey order (the full pull's order), also on the market
  const earlier: Record<string, unknown> = {
    ...later,
    ListingKey: `0-${String(later.ListingKey)}`,
    ListPrice: 123_456,
  };
  const reso = emulator.closeAfterTest(
    await startResoServer({
      records: [...records.filter((r) => r !== records[1]), later, earlier],
      maxPageSize: 3,
      entityEvents: changes === 'entityEvent',
    }),
  );
  const feed = env.feed({
    source: {
      kind: 'reso',
      url: reso.url,
      retries: 0,
      incremental: true,
      photosTimestampField: null,
      ...(changes === 'entityEvent' && { changes }),
    },
    mapping: { preset: 'reso', fields: { Url: { template: 'https://broker.test/l/{ListingId}' } } },
    deletes: { maxFraction: 1 },
  });
  const id = String(later.ListingId);
  const price = async () => (await te.listings(SN)).find((l) => String(l.MLSNumber) === id)?.SalePrice;
  const full = await env.sync(te, feed, { full: true });
  expect(full.outcome, full.message).toBe('ok');
  // the full pull's rule: the later record of the key decides
  expect(await price()).toBe(654_321);
  return { reso, feed, id, price, earlier: String(earlier.ListingKey), single: records[2]! };
}

/** an incremental run of the feed: ok, incremental, its counts adding up */
async function incrementalRun(feed: Parameters<SyncEnv['sync']>[1]): Promise<SyncReport> {
  const r = await env.sync(te, feed);
  expect(r.outcome, r.message).toBe('ok');
  expect(r.source.mode).toBe('incremental');
  addsUp(r);
  return r;
}

describe('RESO, issue 54 point 4: two on-market records share a ListingId, the earlier one (in key order) goes off the market', () => {
  for (const changes of ['timestamp', 'entityEvent'] as const) {
    it(`an incremental run (${changes}) asks the source for the key's other records: the listing stays, showing the later one, and nothing is deleted`, async () => {
      const { reso, feed, id, price, earlier } = await twoRecordsOneKey(changes);
      reso.touch(earlier, { StandardStatus: 'Withdrawn' });
      const before = await writes();
      const r = await incrementalRun(feed);
      expect(await price()).toBe(654_321);
      expect(r.counts.deleted).toBe(0);
      expect((await writes()).delete).toBe(before.delete);
      // one by-key query on ListingId for the other records
      expect(reso.requests.some((q) => q.filter?.includes(`ListingId eq '${id}'`))).toBe(true);
      // and it settles: the next run writes nothing
      const settled = await writes();
      const again = await env.sync(te, feed);
      expect(again.outcome, again.message).toBe('ok');
      expect(await writes()).toEqual(settled);
      expect(await price()).toBe(654_321);
    });
  }
});

describe('RESO, issue 54 point 4: two on-market records share a ListingId, the earlier one (in key order) changes while on the market', () => {
  for (const changes of ['timestamp', 'entityEvent'] as const) {
    it(`an incremental run (${changes}) asks the source for the key's other records: the listing keeps showing the later one, and nothing is written`, async () => {
      const { reso, feed, id, price, earlier, single } = await twoRecordsOneKey(changes);
      for (const changed of [111_111, 222_222]) {
        // the earlier record changes, still on the market: a full pull would still show the later one
        reso.touch(earlier, { ListPrice: changed });
        const from = reso.requests.length;
        const before = await writes();
        await incrementalRun(feed);
        expect(await price()).toBe(654_321);
        expect(await writes()).toEqual(before);
        // one by-key query on ListingId for the key's other records
        expect(reso.requests.slice(from).filter((q) => q.filter?.includes(`ListingId eq '${id}'`))).toHaveLength(1);
      }
      // a record of a key the source holds once changes: no by-key query for its key's others
      reso.touch(String(single.ListingKey), { ListPrice: 777_777 });
      const from = reso.requests.length;
      const r = await env.sync(te, feed);
      expect(r.outcome, r.message).toBe('ok');
      expect(r.counts.updated).toBe(1);
      const ofSingle = `ListingId eq '${String(single.ListingId)}'`;
      expect(reso.requests.slice(from).filter((q) => q.filter?.includes(ofSingle))).toHaveLength(0);
    });
  }
});

describe('property: any sequence of records sharing keys', () => {
  it('two consecutive runs converge: the chatbot holds each key whose last record is on the market, with that record, and the second run writes nothing', async () => {
    const record = fc.record({
      key: fc.integer({ min: 1, max: 4 }),
      off: fc.boolean(),
      price: fc.integer({ min: 1, max: 3 }),
    });
    const toRow = (r: { key: number; off: boolean; price: number }) =>
      row(r.key, { Status: r.off ? 'Withdrawn' : 'Active', SalePrice: 100_000 * r.price });
    await fc.assert(
      fc.asyncProperty(
        fc.array(record, { maxLength: 8 }),
        fc.array(record, { minLength: 1, maxLength: 10 }),
        async (before, now) => {
          await te.reset();
          const e = await createSyncEnv();
          try {
            const feed = csvFeed(e);
            // whatever the chatbot holds from an earlier feed
            // (key 9 always on the market: a full feed with no valid listing trips the empty-feed guard, rightly)
            const anchor = row(9);
            await e.writeFeed([anchor, ...before.map(toRow)]);
            await e.sync(te, feed);
            await e.writeFeed([anchor, ...now.map(toRow)]);
            const first = await e.sync(te, feed);
            expect(first.outcome).toBe('ok');
            addsUp(first);
            const last = new Map<number, { off: boolean; price: number }>();
            for (const r of now) last.set(r.key, r);
            const want = [
              [anchor.MLSNumber, anchor.SalePrice],
              ...[...last].filter(([, r]) => !r.off).map(([k, r]) => [row(k).MLSNumber, 100_000 * r.price]),
            ].sort();
            const got = (await te.listings(SN)).map((l) => [l.MLSNumber, l.SalePrice]).sort();
            expect(got).toEqual(want);
            const w = await writes();
            const second = await e.sync(te, feed);
            expect(second.counts).toMatchObject({ created: 0, updated: 0, deleted: 0 });
            addsUp(second);
            expect(await writes()).toEqual(w);
          } finally {
            await e.cleanup();
          }
        },
      ),
      { numRuns: 40, seed: 35 },
    );
  }, 120_000);
});
