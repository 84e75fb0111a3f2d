// Issue 35, point 3: `onInvalid: default` tries the rule's next source before its default. The
// stock `reso` preset reads LotArea from LotSizeArea, else LotSizeSquareFeet (else LotSizeAcres), and
// DaysOnMarket from DaysOnMarket, else CumulativeDaysOnMarket; real servers carry junk in the first
// (LotSizeArea 3e15, DaysOnMarket 72,725 on the RESO reference server). Over real
// HTTP against a RESO test server: the usable second source is what the chatbot gets, only a
// listing with no usable source at all gets the default, "values replaced" counts only those, and a
// second run writes nothing.
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

describe('onInvalid: default with more sources (the reso preset)', () => {
  it('a junk first source gives the next source’s value; the default only when none is usable; the rerun writes nothing', async () => {
    const [a, b, c] = generateResoRecords(12, { seed: 3 }).filter(
      (r) => r.MlgCanView !== false && r.StandardStatus === 'Active',
    );
    const junk = { LotSizeArea: 3e15, LotSizeUnits: 'Square Feet', DaysOnMarket: 72_725 };
    const records = [
      // junk first sources, usable second ones
      { ...a!, ...junk, LotSizeSquareFeet: 5000, LotSizeAcres: null, CumulativeDaysOnMarket: 30 },
      // junk everywhere: the defaults
      { ...b!, ...junk, LotSizeSquareFeet: 4e15, LotSizeAcres: null, CumulativeDaysOnMarket: 99_999 },
      // usable first sources
      {
        ...c!,
        LotSizeArea: 7000,
        LotSizeUnits: 'Square Feet',
        LotSizeSquareFeet: 1,
        DaysOnMarket: 12,
        CumulativeDaysOnMarket: 40,
      },
    ];
    const server = emulator.closeAfterTest(await startResoServer({ records, maxPageSize: 2 }));
    const feed = env.feed({
      source: { kind: 'reso', url: server.url, retries: 0, photosTimestampField: null },
      mapping: { preset: 'reso', fields: { Url: { template: 'https://broker.test/l/{ListingId}' } } },
      deletes: { maxFraction: 1 },
    });
    const first = await env.sync(te, feed);
    expect(first.outcome).toBe('ok');
    expect(first.counts.created).toBe(3);
    expect(first.valuesReplaced).toEqual(
      expect.arrayContaining([
        { field: 'LotArea', count: 1 },
        { field: 'DaysOnMarket', count: 1 },
      ]),
    );
    expect(first.valuesReplaced).toHaveLength(2);
    const byId = new Map((await te.listings(SN)).map((l) => [String(l.MLSNumber), l]));
    expect(byId.get(String(a!.ListingId))).toMatchObject({ LotArea: 5000, DaysOnMarket: 30 });
    expect(byId.get(String(b!.ListingId))).toMatchObject({ LotArea: 0, DaysOnMarket: 0 });
    expect(byId.get(String(c!.ListingId))).toMatchObject({ LotArea: 7000, DaysOnMarket: 12 });
    const before = await writeCounts(te);
    const again = await env.sync(te, feed);
    expect(again.counts).toMatchObject({ created: 0, updated: 0, deleted: 0 });
    expect(await writeCounts(te)).toEqual(before);
  });
});
