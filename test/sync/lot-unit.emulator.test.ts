// Issue 54's "done when", the first point, end to end: the record of the issue (LotSizeArea 1e15 in
// Square Feet, junk; LotSizeSquareFeet 10763.91; LivingAreaUnits Square Meters) served over HTTP by a
// RESO test server and synced with the stock `reso` preset reaches the chatbot as a listing in Square
// Meters with LotArea 1000: the fallback's square feet converted to the listing's AreaUnit, as every
// other source of an area is (test/mapping/area-units.test.ts has the property over every fallback
// order). A rerun writes nothing.
import { describe, expect, it } from 'vitest';
import { generateResoRecords } from '../../fixtures/generate.js';
import type { TestEmulator } from '../helpers/emulator.js';
import { startResoServer } from '../helpers/reso-server.js';
import { SN, type SyncEnv, useEmulatorSync, writeCounts } from './helpers/feed.js';

let te: TestEmulator;
let env: SyncEnv;
const emulator = useEmulatorSync((t, e) => {
  te = t;
  env = e;
});

describe("the lot record of issue 54 over HTTP (the reso preset's LotArea fallback)", () => {
  it('LotSizeArea 1e15 in Square Feet, LotSizeSquareFeet 10763.91, LivingAreaUnits Square Meters: LotArea 1000 in Square Meters; the rerun writes nothing', async () => {
    const [lot, other] = generateResoRecords(12, { seed: 54 }).filter(
      (r) => r.MlgCanView !== false && r.StandardStatus === 'Active' && !String(r.PropertyType).includes('Lease'),
    );
    const records = [
      {
        ...lot!,
        LivingArea: 100,
        LivingAreaUnits: 'Square Meters',
        LotSizeArea: 1e15,
        LotSizeUnits: 'Square Feet',
        LotSizeSquareFeet: 10763.91,
        LotSizeAcres: null,
      },
      { ...other!, LivingArea: 1500, LivingAreaUnits: 'Square Feet', LotSizeArea: 5000, LotSizeUnits: 'Square Feet' },
    ];
    const server = emulator.closeAfterTest(await startResoServer({ records }));
    const feed = env.feed({
      source: { kind: 'reso', url: server.url, retries: 0, photosTimestampField: null },
      mapping: { preset: 'reso', fields: { Url: { template: 'https://broker.test/l/{ListingId}' } } },
      deletes: { maxFraction: 1 },
    });
    const first = await env.sync(te, feed);
    expect(first.outcome, first.message).toBe('ok');
    expect(first.counts.created).toBe(2);
    const byId = new Map((await te.listings(SN)).map((l) => [String(l.MLSNumber), l]));
    expect(byId.get(String(lot!.ListingId))).toMatchObject({ AreaUnit: 'Square Meters', LotArea: 1000 });
    expect(byId.get(String(other!.ListingId))).toMatchObject({ AreaUnit: 'Square Feet', LotArea: 5000 });
    const before = await writeCounts(te);
    const again = await env.sync(te, feed);
    expect(again.counts).toMatchObject({ created: 0, updated: 0, deleted: 0 });
    expect(await writeCounts(te)).toEqual(before);
  });
});
