// Issue 53, points 1 and 3: under the stock reso preset (the listing key MLSNumber from ListingId,
// else ListingKey) an EntityEvent names the record's ListingKey, not the listing's key. The source
// keeps, per lane, the record key beside the listing key of every record it reads
// (feeds/reso/reso-key-map.ts), so an event for a record hard-deleted at the source deletes its
// listing in the next event run. Over real HTTP against test/helpers/reso-server.ts (EntityEvent log
// as RESO RCP-027 describes it) and the chatbot emulator.
import { describe, expect, it } from 'vitest';
import { FeedConfig } from '../../src/config/schema.js';
import type { TestEmulator } from '../helpers/emulator.js';
import { startResoServer } from '../helpers/reso-server.js';
import { SN, type SyncEnv, useEmulatorSync } from './helpers/feed.js';
import { keyedResoRecords } from './helpers/reso-records.js';

let te: TestEmulator;
let env: SyncEnv;
const emulator = useEmulatorSync((t, e) => {
  te = t;
  env = e;
});

const held = async () => new Set((await te.listings(SN)).map((l) => String(l.MLSNumber)));

const stockFeed = (url: string) =>
  FeedConfig.parse({
    name: 'mls',
    chatbot: SN,
    source: {
      kind: 'reso',
      url,
      incremental: true,
      changes: 'entityEvent',
      retries: 0,
      timeoutMs: 10_000,
      photosTimestampField: null,
    },
    // the stock keying; the Data Dictionary has no listing URL, so a feed gives one (presets/reso.ts)
    mapping: { preset: 'reso', fields: { Url: { template: 'https://broker.test/l/{ListingId}' } } },
    deletes: { maxFraction: 0.5, maxCount: 100 },
  });

/** the lane's copies of the key map (lane id `mls`: one chatbot) */
const KEY_NAMESPACES = ['keys:record:mls', 'keys:listing:mls'];

describe('event deletes under the stock reso preset (issue 53)', () => {
  it('3 records hard-deleted at the source with their events: the next event run deletes exactly those 3 listings', async () => {
    const server = emulator.closeAfterTest(
      await startResoServer({ records: keyedResoRecords(20, 382), maxPageSize: 10, entityEvents: true }),
    );
    const feed = stockFeed(server.url);
    const first = await env.sync(te, feed);
    expect(first.outcome, first.message).toBe('ok');
    const before = await held();
    expect(before.size).toBe(20);
    expect(before.has('L-04')).toBe(true);

    // hard deletes: each appends its EntityEvent (ResourceRecordKey = the ListingKey)
    for (const key of ['K-04', 'K-11', 'K-17']) server.remove(key);
    const run = await env.sync(te, feed);
    expect(run.outcome, run.message).toBe('ok');
    expect(run.source.mode).toBe('incremental');
    expect(run.counts.deleted).toBe(3);
    expect(run.counts.created + run.counts.updated).toBe(0);
    expect(run.deletedByReason).toEqual({ removed: 3 });
    expect(run.source.events).toEqual({ read: 3, keys: 3, fetched: 0, gone: 3 });
    const after = await held();
    expect([...before].filter((k) => !after.has(k)).sort()).toEqual(['L-04', 'L-11', 'L-17']);
    expect(after.size).toBe(17);
  });

  it('a store written before the key map: an event delete stays unnamed until a full pull fills the map, then resolves', async () => {
    const server = emulator.closeAfterTest(
      await startResoServer({ records: keyedResoRecords(12, 382), maxPageSize: 10, entityEvents: true }),
    );
    const feed = stockFeed(server.url);
    expect((await env.sync(te, feed)).outcome).toBe('ok');
    // the store as an older feedsync left it: no key map
    for (const ns of KEY_NAMESPACES) {
      const entries = await env.store.getAll(ns);
      expect(entries.size, ns).toBe(12);
      await env.store.delete(ns, [...entries.keys()]);
    }

    server.remove('K-02');
    const unknown = await env.sync(te, feed);
    expect(unknown.outcome, unknown.message).toBe('ok');
    expect(unknown.counts.deleted).toBe(0);
    expect(unknown.source.events).toMatchObject({ keys: 1, fetched: 0, gone: 1, unnamed: 1 });
    expect((await held()).has('L-02')).toBe(true);

    // the next full pull fills the map (and deletes L-02 as absent, confirmed)
    const full = await env.sync(te, feed, { full: true });
    expect(full.outcome, full.message).toBe('ok');
    expect((await env.store.getAll('keys:record:mls')).get('K-05')).toBe('L-05');
    expect((await env.store.getAll('keys:listing:mls')).get('L-05')).toBe('K-05');
    expect((await env.store.getAll('keys:record:mls')).size).toBe(11);

    server.remove('K-05');
    server.remove('K-09');
    const resolved = await env.sync(te, feed);
    expect(resolved.outcome, resolved.message).toBe('ok');
    expect(resolved.deletedByReason).toEqual({ removed: 2 });
    expect(resolved.source.events).toEqual({ read: 2, keys: 2, fetched: 0, gone: 2 });
    const now = await held();
    expect(now.has('L-05') || now.has('L-09')).toBe(false);
    expect(now.size).toBe(9);
    // the deleted listings' entries go with them
    expect((await env.store.getAll('keys:record:mls')).has('K-05')).toBe(false);
    expect((await env.store.getAll('keys:listing:mls')).has('L-09')).toBe(false);
  });
});
