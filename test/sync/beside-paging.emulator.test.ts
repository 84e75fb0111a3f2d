// A feed read beside its chatbot's paging (src/sync/read/beside-paging.ts): a record taken while
// the chatbot is still paged is remembered against the one copy of its key paged so far, so what
// the paging learns later (a second copy of the key on a later page, a changed record, a key the
// chatbot lacks) must still come to the outcome the plain path reaches once paging is over. Each
// case runs one history on two emulators that page slowly (many small pages, latency a page):
// the last run reads the feed beside the paging on one, only after it on the other; both must make
// the same writes, leave the same listings and state, and report the same counts.
import { describe, expect, it } from 'vitest';
import { mulberry32 } from '../../src/emulator/prng.js';
import { fingerprintNamespace, stampNamespace } from '../../src/sync/model/state-names.js';
import type { TestEmulator } from '../helpers/emulator.js';
import { row, rows, SN, writeCounts, type Row, useTwoSides, type Side } from './helpers/feed.js';

const N = 240;
/** small pages, a few at a time, each 8 ms: the feed is read long before the paging ends */
const API = { pageSize: 10, concurrency: 3 };

const sides = useTwoSides(8);

/** What a case does between the first sync and the rerun: the feed's new rows and the chatbot's edits behind the sync's back. */
interface Case {
  feed: Row[];
  behind(te: TestEmulator): Promise<void>;
}

function caseOf(seed: number): Case {
  // (seeded: the same case on both sides, and again on a rerun of the test)
  const rnd = mulberry32(seed);
  const pick = () => 1 + Math.floor(rnd() * N);
  let feed = rows(N);
  // records changed, dropped, repeated (the later one wins), new keys
  for (let i = 0; i < 1 + Math.floor(rnd() * 4); i++) feed[pick() - 1] = row(pick(), { SalePrice: 1000 + i });
  feed = feed.filter(() => rnd() > 0.01);
  feed.push({ ...feed[Math.floor(rnd() * feed.length)]!, City: 'Elsewhere' }, feed[Math.floor(rnd() * feed.length)]!);
  if (rnd() < 0.7) feed.push(...rows(3, N + 1));
  const edited = [pick(), pick()];
  const copied = [1, pick()]; // MLS0001's record is read long before its copy's page (the newest ID) comes
  const deleted = pick();
  return {
    feed,
    async behind(te) {
      const listings = await te.listings(SN);
      const byNumber = (n: number) => listings.find((l) => l.MLSNumber === row(n).MLSNumber);
      for (const n of edited) {
        const l = byNumber(n);
        if (l) await te.api.updateListing({ ...withoutId(l), SalePrice: 5, Key: l.MLSNumber!, KeyType: 'MLSNumber' });
      }
      for (const n of copied) {
        const l = byNumber(n);
        if (l) await te.api.createListing(withoutId(l));
      }
      const gone = byNumber(deleted);
      if (gone) await te.api.deleteListings({ SerialNumber: SN, Keys: [String(gone.ID)], KeyType: 'NewOaks' });
    },
  };
}

function withoutId<T extends { ID?: unknown }>(l: T): Omit<T, 'ID'> {
  const { ID: _id, ...rest } = l;
  return rest;
}

/** One history on a side: a first sync of the base feed, a no-change rerun (stamps stored), the case, and the run compared. */
async function history(side: Side, c: Case, besidePaging: boolean) {
  const { te, env } = side;
  te.reset();
  for (const ns of [fingerprintNamespace('test-feed'), stampNamespace('test-feed')])
    await env.store.delete(ns, [...(await env.store.getAll(ns)).keys()]);
  await env.writeFeed(rows(N));
  const feed = env.feed({ deletes: { maxFraction: 0.5, batchSize: 10 } });
  await env.sync(te, feed, { api: API });
  await env.sync(te, feed, { api: API });
  await env.writeFeed(c.feed);
  await c.behind(te);
  const before = await writeCounts(te);
  // (the rerun reads its feed: a no-change case would otherwise be counted by the seal the run before stored)
  const report = await env.sync(te, feed, { api: API, besidePaging, seal: false });
  const after = await writeCounts(te);
  const listings = (await te.listings(SN))
    .map(withoutId)
    .sort(
      (a, b) => String(a.MLSNumber).localeCompare(String(b.MLSNumber)) || Number(a.SalePrice) - Number(b.SalePrice),
    );
  const state = await Promise.all(
    [fingerprintNamespace('test-feed'), stampNamespace('test-feed')].map(async (ns) =>
      [...(await env.store.getAll(ns))].sort(),
    ),
  );
  return {
    report,
    writes: {
      create: after.create - before.create,
      update: after.update - before.update,
      delete: after.delete - before.delete,
    },
    listings,
    state,
  };
}

describe('a feed read beside the paging', () => {
  // case 7: MLS0001 twice in the feed (the later record changed) and twice on the chatbot; its first
  // record is taken against the first copy while paging, the later one planned after: the copies
  // judged once (before, the paging's rule kept the first and the later record's the newest, both
  // deleted, in 1 run of 4 to 6 as the pages and the pending window met): run five times
  it.each([1, 2, 3, 4, 5, 7, 7, 7, 7, 7])(
    'comes to what the plain path comes to (case %i): writes, listings, state and counts',
    async (seed) => {
      const c = caseOf(seed);
      const [beside, plain] = await Promise.all([history(sides()[0], c, true), history(sides()[1], c, false)]);
      expect(beside.writes).toEqual(plain.writes);
      expect(beside.listings).toEqual(plain.listings);
      expect(beside.state).toEqual(plain.state);
      const { besidePaging, unchangedByStamp: _b, ...counts } = beside.report.counts;
      const { unchangedByStamp: _p, ...plainCounts } = plain.report.counts;
      expect(counts).toEqual(plainCounts);
      expect(beside.report.outcome).toBe(plain.report.outcome);
      // the case was read beside the paging: most of its records were taken before the paging ended
      expect(besidePaging).toBeGreaterThan(N / 2);
      expect(plain.report.counts.besidePaging).toBeUndefined();
      // MLS0001 was copied behind the sync's back: the copy is deleted both ways (the listing too when the feed dropped it)
      expect(plain.writes.delete).toBeGreaterThan(0);
      expect(beside.listings.filter((l) => l.MLSNumber === 'MLS0001')).toHaveLength(
        c.feed.some((r) => r.MLSNumber === 'MLS0001') ? 1 : 0,
      );
    },
  );

  it('a no-change rerun takes nearly every record while the chatbot is paged, and writes nothing', async () => {
    const side = sides()[0];
    const run = await history(side, { feed: rows(N), behind: async () => {} }, true);
    expect(run.writes).toEqual({ create: 0, update: 0, delete: 0 });
    expect(run.report.counts).toMatchObject({ unchanged: N, unchangedByStamp: N });
    expect(run.report.counts.besidePaging).toBeGreaterThan(N * 0.9);
  });
});
