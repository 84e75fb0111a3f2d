// Open houses end to end (issue 40, point 2): a RESO server that expands OpenHouse into Property (as
// Trestle does; test/helpers/reso-server.ts cites its reference) → the sync → the emulator, on a
// fixed clock. An open house added shows on its listing (Tours OpenHouse, the entry OpenHouses in the
// MLS's time zone); a cancelled one goes; when the last one has ended the next run updates the
// listing although the server sent the same record; the other listings are left alone.
import { describe, expect, it } from 'vitest';
import { generateResoRecords } from '../../fixtures/generate.js';
import { FeedConfig } from '../../src/config/schema.js';
import type { TestEmulator } from '../helpers/emulator.js';
import { startResoServer } from '../helpers/reso-server.js';
import { SN, type SyncEnv, useEmulatorSync, writeCounts } from './helpers/feed.js';
import { at, SAT as SATURDAY, SUN as SUNDAY } from './helpers/open-house-slots.js';

let te: TestEmulator;
let env: SyncEnv;
const emulator = useEmulatorSync((t, e) => {
  te = t;
  env = e;
});

const feedOf = (url: string, expandOpenHouse = true) =>
  FeedConfig.parse({
    name: 'mls',
    chatbot: SN,
    source: {
      kind: 'reso',
      url,
      maxPageSize: 5,
      retries: 1,
      timeoutMs: 10_000,
      expandOpenHouse,
      timeZone: 'America/Chicago',
    },
    mapping: { preset: 'reso', fields: { Url: { template: 'https://broker.test/l/{ListingId}' } } },
    deletes: { maxFraction: 0.5 },
  });

const SAT = { OpenHouseKey: 'oh-1', ...SATURDAY };
const SUN = { OpenHouseKey: 'oh-2', ...SUNDAY };

describe('open houses over HTTP, against the clock', () => {
  it('added, cancelled and ended: Tours and the entry follow the server and the clock; no other listing written', async () => {
    const records: Record<string, unknown>[] = generateResoRecords(8, { seed: 3 }).map((r) => ({
      ...r,
      StandardStatus: 'Active',
      MlgCanView: true,
      OpenHouse: [],
    }));
    const [a, b] = records;
    a!.OpenHouse = [SAT, SUN];
    const server = emulator.closeAfterTest(await startResoServer({ records }));
    const feed = feedOf(server.url);
    const tours = async () => {
      const held = await te.listings(SN);
      return Object.fromEntries(
        held
          .filter((l) => l.Tours !== undefined)
          .map((l) => [l.MLSNumber, [l.Tours, l.ExtensionColumn?.find((e) => e.Key === 'OpenHouses')?.value]]),
      );
    };

    expect((await env.sync(te, feed, at('2026-11-27T12:00:00Z'))).outcome).toBe('ok');
    expect(await tours()).toEqual({
      [String(a!.ListingId)]: ['OpenHouse', 'Sat, Nov 28, 1:00 PM – 3:00 PM; Sun, Nov 29, 11:00 AM – 1:00 PM'],
    });
    expect((await te.listings(SN)).length).toBe(records.length);

    // an open house added to b, a's Saturday one cancelled
    server.touch(String(b!.ListingKey), { OpenHouse: [SUN] });
    server.touch(String(a!.ListingKey), { OpenHouse: [{ ...SAT, OpenHouseStatus: 'Cancelled' }, SUN] });
    const before = await writeCounts(te);
    expect((await env.sync(te, feed, at('2026-11-27T13:00:00Z'))).outcome).toBe('ok');
    const sun = 'Sun, Nov 29, 11:00 AM – 1:00 PM';
    expect(await tours()).toEqual({
      [String(a!.ListingId)]: ['OpenHouse', sun],
      [String(b!.ListingId)]: ['OpenHouse', sun],
    });
    const after = await writeCounts(te);
    expect(after.update - before.update).toBe(2);

    // the same records, run after Sunday's has ended: both listings lose it, nothing else is written
    const third = await env.sync(te, feed, at('2026-11-29T20:00:00Z'));
    expect(third.outcome).toBe('ok');
    expect(await tours()).toEqual({});
    const ended = await writeCounts(te);
    expect([ended.update - after.update, ended.create - after.create, ended.delete - after.delete]).toEqual([2, 0, 0]);
    expect((await te.listings(SN)).length).toBe(records.length);

    // and a run after that writes nothing
    await env.sync(te, feed, at('2026-11-29T21:00:00Z'));
    expect((await writeCounts(te)).update).toBe(ended.update);
  });

  it('a source that does not expand OpenHouse is not sent them, and its listings have no Tours', async () => {
    const records = generateResoRecords(3, { seed: 4 }).map((r) => ({
      ...r,
      StandardStatus: 'Active',
      OpenHouse: [SAT],
    }));
    const server = emulator.closeAfterTest(await startResoServer({ records }));
    expect((await env.sync(te, feedOf(server.url, false), at('2026-11-27T12:00:00Z'))).outcome).toBe('ok');
    const held = await te.listings(SN);
    expect(held.length).toBe(3);
    expect(held.filter((l) => l.Tours !== undefined)).toEqual([]);
  });
});
