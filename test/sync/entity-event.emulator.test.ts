// Issue 38, point 2: `source.changes: entityEvent` against a RESO server keeping an EntityEvent log as
// RESO RCP-027 describes it (test/helpers/reso-server.ts `entityEvents`: EntityEventSequence rising
// with gaps, ResourceName, ResourceRecordKey, no event type and no payload; a delete is inferred when
// the record's key is asked for and not returned). Sources: RESO RCP-027 (EntityEvent resource,
// ratified December 2023); docs/reso-paging.md "Change feeds".
import { describe, expect, it } from 'vitest';
import { FeedConfig } from '../../src/config/schema.js';
import type { TestEmulator } from '../helpers/emulator.js';
import { startResoServer } from '../helpers/reso-server.js';
import { SN, type SyncEnv, useEmulatorSync } from './helpers/feed.js';
import { keyedResoRecords } from './helpers/reso-records.js';
import { pushedAsk, reconcileAsk } from '../../src/feeds/reso/reso-asks.js';

let te: TestEmulator;
let env: SyncEnv;
const emulator = useEmulatorSync((t, e) => {
  te = t;
  env = e;
});

const records = (n: number) => keyedResoRecords(n, 382);

const held = async () => new Map((await te.listings(SN)).map((l) => [String(l.MLSNumber), l]));

describe('source.changes: entityEvent', () => {
  it('the first pull starts the log at the sequence read before it; then a no-change poll is one request, and a change, a hard delete and lost visibility arrive with one poll and one fetch', async () => {
    const data = records(30);
    const server = emulator.closeAfterTest(
      await startResoServer({ records: data, maxPageSize: 10, entityEvents: true }),
    );
    // events before the first pull: the pull reads those records anyway
    server.event('K-01');
    server.event('K-02');
    server.event('K-03');
    const feed = FeedConfig.parse({
      name: 'mls',
      chatbot: SN,
      source: {
        kind: 'reso',
        url: server.url,
        incremental: true,
        changes: 'entityEvent',
        filter: "PropertyType eq 'Residential'",
        retries: 0,
        timeoutMs: 10_000,
        photosTimestampField: null,
      },
      mapping: {
        preset: 'reso',
        fields: { MLSNumber: { from: 'ListingKey' }, Url: { template: 'https://broker.test/l/{ListingKey}' } },
      },
      deletes: { maxFraction: 0.5, maxCount: 100 },
    });
    const first = await env.sync(te, feed);
    expect(first.outcome, first.message).toBe('ok');
    expect(first.source.mode).toBe('full');
    expect((await held()).size).toBe(30);

    const quiet = await env.sync(te, feed);
    expect(quiet.outcome, quiet.message).toBe('ok');
    expect(quiet.source.mode).toBe('incremental');
    expect(quiet.source.requests).toBe(1);
    expect(quiet.source.events).toEqual({ read: 0, keys: 0, fetched: 0, gone: 0 });
    expect(quiet.counts.created + quiet.counts.updated + quiet.counts.deleted).toBe(0);

    server.touch('K-05', { ListPrice: 555_555 });
    server.touch('K-05', { ListPrice: 555_556 }); // twice: one key, fetched once
    server.remove('K-07');
    server.records = server.records.map((r) => (r.ListingKey === 'K-09' ? { ...r, PropertyType: 'Land' } : r));
    server.event('K-09');
    const before = server.requests.length;
    const changed = await env.sync(te, feed);
    expect(changed.outcome, changed.message).toBe('ok');
    expect(changed.counts.updated).toBe(1);
    expect(changed.counts.deleted).toBe(2);
    // a key the source no longer returns is the source's word, 'removed' (counted toward the delete
    // limits), not a display rule's removal, even on an idx feed (docs/display-rules.md)
    expect(changed.deletedByReason).toEqual({ removed: 2 });
    expect(changed.source.events).toEqual({ read: 4, keys: 3, fetched: 1, gone: 2 });
    const now = await held();
    expect(now.get('K-05')!.SalePrice).toBe(555_556);
    expect(now.has('K-07')).toBe(false);
    expect(now.has('K-09')).toBe(false);
    // one poll, one fetch of the three keys: no pull
    const asked = server.requests.slice(before).map((r) => decodeURIComponent(r.url).split('?')[0]!.split('/').pop());
    expect(asked).toEqual(['EntityEvent', 'Property']);
    expect(server.requests.slice(before).some((r) => r.filter?.includes('ModificationTimestamp'))).toBe(false);

    // the mark moved past those events: the next poll finds nothing
    const after = await env.sync(te, feed);
    expect(after.source.events).toEqual({ read: 0, keys: 0, fetched: 0, gone: 0 });
    expect(after.source.requests).toBe(1);
  });

  it('a run whose commit fails after its writes keeps the old sequence: the next poll replays the events, and no listing is doubled', async () => {
    const data = records(12);
    const server = emulator.closeAfterTest(
      await startResoServer({ records: data, maxPageSize: 10, entityEvents: true }),
    );
    const feed = FeedConfig.parse({
      name: 'mls',
      chatbot: SN,
      source: {
        kind: 'reso',
        url: server.url,
        incremental: true,
        changes: 'entityEvent',
        retries: 0,
        timeoutMs: 10_000,
        photosTimestampField: null,
      },
      mapping: {
        preset: 'reso',
        fields: { MLSNumber: { from: 'ListingKey' }, Url: { template: 'https://broker.test/l/{ListingKey}' } },
      },
      deletes: { maxFraction: 0.5, maxCount: 100 },
    });
    expect((await env.sync(te, feed)).outcome).toBe('ok');
    const template = server.records[0]!;
    server.records = [
      ...server.records,
      { ...template, ListingKey: 'K-NEW', ModificationTimestamp: new Date().toISOString() },
    ];
    server.event('K-NEW');
    server.touch('K-03', { ListPrice: 333_333 });

    // the writes go out, then the state's commit fails (as a process killed between them leaves it)
    const apply = env.store.apply.bind(env.store);
    env.store.apply = async () => {
      throw new Error('killed before the commit');
    };
    await env.sync(te, feed).catch(() => undefined);
    env.store.apply = apply;
    expect((await held()).has('K-NEW')).toBe(true);

    const replay = await env.sync(te, feed);
    expect(replay.outcome, replay.message).toBe('ok');
    expect(replay.source.events?.keys).toBe(2);
    expect(replay.counts.created).toBe(0);
    const listings = await te.listings(SN);
    expect(listings.filter((l) => l.MLSNumber === 'K-NEW')).toHaveLength(1);
    expect(listings).toHaveLength(13);
  });
});

const mapping = {
  preset: 'reso',
  fields: { MLSNumber: { from: 'ListingKey' }, Url: { template: 'https://broker.test/l/{ListingKey}' } },
};
/** the reso preset's own keying (MLSNumber from ListingId, else ListingKey) */
const presetKeyed = { preset: 'reso', fields: { Url: { template: 'https://broker.test/l/{ListingKey}' } } };
const feedOf = (url: string, source: Record<string, unknown> = {}, map: Record<string, unknown> = mapping) =>
  FeedConfig.parse({
    name: 'mls',
    chatbot: SN,
    source: {
      kind: 'reso',
      url,
      incremental: true,
      retries: 0,
      timeoutMs: 10_000,
      photosTimestampField: null,
      ...source,
    },
    mapping: map,
    deletes: { maxFraction: 0.5, maxCount: 100 },
  });

describe('source.changes: auto (the default)', () => {
  it("uses EntityEvent where the server's $metadata offers it: the first pull reads $metadata and the log's newest sequence, then a no-change poll is one request", async () => {
    const server = emulator.closeAfterTest(
      await startResoServer({ records: records(12), maxPageSize: 10, entityEvents: true }),
    );
    server.event('K-01');
    const feed = feedOf(server.url);
    expect(feed.source.kind === 'reso' && feed.source.changes).toBe('auto');
    const first = await env.sync(te, feed);
    expect(first.outcome, first.message).toBe('ok');
    expect(first.source.mode).toBe('full');
    expect(server.metadataRequests).toBe(1);
    // the newest sequence read before the pull's first page
    const asked = server.requests.map((r) => decodeURIComponent(r.url).split('?')[0]!.split('/').pop());
    expect(asked[0]).toBe('EntityEvent');
    expect(asked.slice(1).every((a) => a === 'Property')).toBe(true);

    const quiet = await env.sync(te, feed);
    expect(quiet.source.mode).toBe('incremental');
    expect(quiet.source.requests).toBe(1);
    expect(quiet.source.events).toEqual({ read: 0, keys: 0, fetched: 0, gone: 0 });
    server.remove('K-04');
    const gone = await env.sync(te, feed);
    expect(gone.deletedByReason).toEqual({ removed: 1 });
    expect((await held()).has('K-04')).toBe(false);
  });

  it('goes by timestamps where $metadata has no EntityEvent, and reads $metadata again only at a full pull', async () => {
    const server = emulator.closeAfterTest(await startResoServer({ records: records(12), maxPageSize: 10 }));
    const feed = feedOf(server.url);
    const first = await env.sync(te, feed);
    expect(first.outcome, first.message).toBe('ok');
    expect(server.metadataRequests).toBe(1);
    server.touch('K-03', { ListPrice: 303_303 });
    const next = await env.sync(te, feed);
    expect(next.outcome, next.message).toBe('ok');
    expect(next.source.mode).toBe('incremental');
    expect(next.source.events).toBeUndefined();
    expect(next.counts.updated).toBe(1);
    expect(server.requests.some((r) => r.url.includes('EntityEvent'))).toBe(false);
    expect(server.metadataRequests).toBe(1);
  });
});

describe('a Media event', () => {
  it("refreshes the listing whose photo it names: the Media record's ResourceRecordKey, that Property fetched by key with its Media", async () => {
    const data = records(12);
    const server = emulator.closeAfterTest(
      await startResoServer({ records: data, maxPageSize: 10, entityEvents: true }),
    );
    const feed = feedOf(server.url, { changes: 'entityEvent' });
    expect((await env.sync(te, feed)).outcome).toBe('ok');
    const target = server.records.find((r) => r.ListingKey === 'K-06')!;
    const media = (target.Media as Array<Record<string, unknown>>).map((m) => ({ ...m }));
    const photo = media.find((m) => m.MediaCategory === 'Photo')!;
    photo.MediaURL = 'https://photos.test/k06-new.jpg';
    // the photo changed, the Property's ModificationTimestamp did not
    server.records = server.records.map((r) => (r.ListingKey === 'K-06' ? { ...r, Media: media } : r));
    server.event(String(photo.MediaKey), 'Media');
    const before = server.requests.length;
    const run = await env.sync(te, feed);
    expect(run.outcome, run.message).toBe('ok');
    expect(run.counts.updated).toBe(1);
    expect(run.source.events).toEqual({ read: 1, keys: 1, media: 1, fetched: 1, gone: 0 });
    expect((await held()).get('K-06')!.Images).toContain('https://photos.test/k06-new.jpg');
    const asked = server.requests.slice(before).map((r) => decodeURIComponent(r.url).split('?')[0]!.split('/').pop());
    expect(asked).toEqual(['EntityEvent', 'Media', 'Property']);
  });
});

describe('a purged log', () => {
  for (const refuse of [undefined, 410] as const) {
    it(`${refuse ? `refused (HTTP ${refuse})` : 'purged silently past the mark'}: a keys-only reconcile runs instead (a hard delete the purge hid is found and deleted), and the log goes on from its newest sequence`, async () => {
      const server = emulator.closeAfterTest(
        await startResoServer({
          records: records(20),
          maxPageSize: 10,
          entityEvents: true,
          ...(refuse && { refusePurged: refuse }),
        }),
      );
      const feed = feedOf(server.url, { changes: 'entityEvent' });
      server.event('K-01');
      expect((await env.sync(te, feed)).outcome).toBe('ok');
      server.remove('K-04');
      server.touch('K-05', { ListPrice: 505_505 });
      server.purge(Number(server.events.at(-1)!.EntityEventSequence)); // the log lost those events
      server.touch('K-06', { ListPrice: 606_606 }); // one it still holds
      const run = await env.sync(te, feed);
      expect(run.outcome, run.message).toBe('ok');
      expect(run.source.events?.purged).toMatch(
        refuse ? /refused the EntityEvent log from sequence \d+/ : /no longer holds sequence \d+/,
      );
      expect(run.source.reconcile?.keys).toBe(19);
      // a reconcile's absence, confirmed with the source: 'absent' (counted toward the delete limits, as 'removed' is)
      expect(run.deletedByReason).toEqual({ absent: 1 });
      const now = await held();
      expect(now.has('K-04')).toBe(false);
      expect(now.get('K-05')!.SalePrice).toBe(505_505);
      expect(now.get('K-06')!.SalePrice).toBe(606_606);
      expect(now.size).toBe(19);
      // from the newest sequence on: a quiet poll again, one request
      const quiet = await env.sync(te, feed);
      expect(quiet.outcome, quiet.message).toBe('ok');
      expect(quiet.source.events).toEqual({ read: 0, keys: 0, fetched: 0, gone: 0 });
      expect(quiet.source.requests).toBe(1);
    });
  }
});

describe('a compacted log (RCP-027: "EntityEventSequence numbers MAY be hidden from feeds as long as at least one later record contains a final record for that resource name and key")', () => {
  it("the mark's own event hidden by a later event of its record: the poll goes on from the log (no reconcile), and the report says compaction, not purge", async () => {
    const server = emulator.closeAfterTest(
      await startResoServer({ records: records(200), maxPageSize: 50, entityEvents: true, compact: true }),
    );
    const feed = feedOf(server.url, { changes: 'entityEvent' });
    server.event('K-01');
    server.event('K-02'); // the newest event when the first pull begins: the mark
    expect((await env.sync(te, feed)).outcome).toBe('ok');
    const mark = Number(server.events.at(-1)!.EntityEventSequence);
    server.touch('K-02', { ListPrice: 202_202 }); // K-02 changes again: its event at the mark is compacted away
    server.touch('K-07', { ListPrice: 707_707 });
    expect(server.events.some((e) => e.EntityEventSequence === mark)).toBe(false);
    const [requests, bytes] = [server.requests.length, server.bytesSent];
    const run = await env.sync(te, feed);
    expect(run.outcome, run.message).toBe('ok');
    const sent = { requests: server.requests.length - requests, bytes: server.bytesSent - bytes };
    console.log(`compacted log: ${sent.requests} requests, ${sent.bytes} bytes at the server`);
    // the poll, one request that shows the log still holds an event before the mark (no purge reached it), the
    // fetch: 3 requests, 4,632 bytes (a reconcile instead, before this: 8 requests, 20,244 bytes)
    expect(sent.requests).toBe(3);
    expect(sent.bytes).toBeLessThan(6_000);
    expect(run.source.mode).toBe('incremental');
    expect(run.source.reconcile).toBeUndefined();
    expect(run.source.events).toMatchObject({ read: 2, keys: 2, fetched: 2, gone: 0 });
    expect(run.source.events?.purged).toBeUndefined();
    expect(run.source.events?.compacted).toMatch(/compacted/);
    expect(run.counts.updated).toBe(2);
    const now = await held();
    expect(now.get('K-02')!.SalePrice).toBe(202_202);
    expect(now.get('K-07')!.SalePrice).toBe(707_707);
    // and on from the highest sequence read: a quiet poll, one request
    const quiet = await env.sync(te, feed);
    expect(quiet.source.events).toEqual({ read: 0, keys: 0, fetched: 0, gone: 0 });
    expect(quiet.source.requests).toBe(1);
  });

  it('a log that compacts and was purged past the mark still runs the reconcile, reported as purged', async () => {
    const server = emulator.closeAfterTest(
      await startResoServer({ records: records(20), maxPageSize: 10, entityEvents: true, compact: true }),
    );
    const feed = feedOf(server.url, { changes: 'entityEvent' });
    server.event('K-01');
    server.event('K-02');
    expect((await env.sync(te, feed)).outcome).toBe('ok');
    server.remove('K-04');
    server.touch('K-02', { ListPrice: 202_202 });
    server.purge(Number(server.events.at(-1)!.EntityEventSequence)); // every event up to K-02's new one lost
    server.touch('K-06', { ListPrice: 606_606 });
    const run = await env.sync(te, feed);
    expect(run.outcome, run.message).toBe('ok');
    expect(run.source.events?.compacted).toBeUndefined();
    expect(run.source.events?.purged).toMatch(
      /no longer holds sequence \d+ nor any event before it \(purged past it\)/,
    );
    expect(run.source.reconcile?.keys).toBe(19);
    expect(run.deletedByReason).toEqual({ absent: 1 });
    const now = await held();
    expect(now.has('K-04')).toBe(false);
    expect(now.get('K-02')!.SalePrice).toBe(202_202);
  });
});

describe('a gone key under the reso preset (MLSNumber from ListingId, else ListingKey)', () => {
  it("resolves through the key map (issue 53): the event's ListingKey K-01 deletes the listing it was read with, L-01, never K-02's listing whose ListingId is K-01", async () => {
    const data = records(10); // ListingId L-01…
    // K-02's ListingId is the ListingKey of K-01: the listing the bare key would name is another's
    data[1] = { ...data[1]!, ListingId: 'K-01' };
    const server = emulator.closeAfterTest(
      await startResoServer({ records: data, maxPageSize: 10, entityEvents: true }),
    );
    const feed = feedOf(server.url, { changes: 'entityEvent' }, presetKeyed);
    expect((await env.sync(te, feed)).outcome).toBe('ok');
    expect([...(await held()).keys()].sort()).toEqual([
      'K-01',
      'L-01',
      'L-03',
      'L-04',
      'L-05',
      'L-06',
      'L-07',
      'L-08',
      'L-09',
      'L-10',
    ]);
    server.remove('K-01'); // the record whose listing is L-01
    const run = await env.sync(te, feed);
    expect(run.outcome, run.message).toBe('ok');
    expect(run.counts.deleted).toBe(1);
    expect(run.deletedByReason).toEqual({ removed: 1 });
    expect(run.source.events).toEqual({ read: 1, keys: 1, fetched: 0, gone: 1 });
    const now = await held();
    expect(now.has('L-01')).toBe(false);
    expect(now.has('K-01')).toBe(true); // K-02's listing, still on the server
    expect(now.size).toBe(9);
    // nothing left for the reconcile
    const reconcile = await env.sync(te, feed, { ask: reconcileAsk });
    expect(reconcile.outcome, reconcile.message).toBe('ok');
    expect(reconcile.counts.deleted).toBe(0);
  });

  it('a key the store never saw names no listing: counted unnamed, warned, and left to the next reconcile, which removes it', async () => {
    const server = emulator.closeAfterTest(
      await startResoServer({ records: records(10), maxPageSize: 10, entityEvents: true }),
    );
    const feed = feedOf(server.url, { changes: 'entityEvent' }, presetKeyed);
    expect((await env.sync(te, feed)).outcome).toBe('ok');
    // the store as a feedsync before the key map left it
    for (const ns of ['keys:record:mls', 'keys:listing:mls'])
      await env.store.delete(ns, [...(await env.store.getAll(ns)).keys()]);
    server.remove('K-01');
    const run = await env.sync(te, feed);
    expect(run.outcome, run.message).toBe('ok');
    expect(run.counts.deleted).toBe(0);
    expect(run.source.events).toMatchObject({ keys: 1, fetched: 0, gone: 1, unnamed: 1 });
    expect((run.source.warnings ?? []).join('\n')).toMatch(
      /1 key\(s\) the EntityEvent log says are gone name no listing/,
    );
    expect((await held()).has('L-01')).toBe(true);
    // the reconcile finds L-01 absent, confirms it and deletes it
    const reconcile = await env.sync(te, feed, { ask: reconcileAsk });
    expect(reconcile.outcome, reconcile.message).toBe('ok');
    expect(reconcile.deletedByReason).toEqual({ absent: 1 });
    expect((await held()).has('L-01')).toBe(false);
    expect((await held()).size).toBe(9);
    // and fills the key map from its key rows, keeping the log's sequence in the mark (a reconcile
    // once dropped it, so the next run restarted the log at its newest event and skipped this delete):
    // the next event delete resolves
    expect((await env.store.getAll('keys:record:mls')).get('K-03')).toBe('L-03');
    server.remove('K-03');
    const next = await env.sync(te, feed);
    expect(next.deletedByReason).toEqual({ removed: 1 });
    expect((await held()).has('L-03')).toBe(false);
  });
});

describe('pushed events (RCP-028) beside the EntityEvent poll', () => {
  it('a pushed run fetches by key and moves no mark: the next poll reads the same events from the stored sequence, and writes nothing for the record already in step', async () => {
    const server = emulator.closeAfterTest(
      await startResoServer({ records: records(10), maxPageSize: 10, entityEvents: true }),
    );
    const feed = feedOf(server.url, { changes: 'entityEvent' });
    expect((await env.sync(te, feed)).outcome).toBe('ok');
    server.touch('K-04', { ListPrice: 404_404 });
    const before = server.requests.length;
    const pushed = await env.sync(te, feed, { ask: pushedAsk({ keys: ['K-04'], media: [], events: 1 }) });
    expect(pushed.outcome, pushed.message).toBe('ok');
    expect(pushed.counts.updated).toBe(1);
    expect(pushed.source.events).toEqual({ read: 1, keys: 1, fetched: 1, gone: 0, pushed: true });
    // no EntityEvent poll and no pull: the by-key fetch alone
    expect(server.requests.slice(before).map((r) => decodeURIComponent(r.url).split('?')[0]!.split('/').pop())).toEqual(
      ['Property'],
    );
    expect((await held()).get('K-04')!.SalePrice).toBe(404_404);
    // the poll goes on from the sequence stored before the push: it reads the event, fetches the record, writes nothing
    const poll = await env.sync(te, feed);
    expect(poll.outcome, poll.message).toBe('ok');
    expect(poll.source.events).toEqual({ read: 1, keys: 1, fetched: 1, gone: 0 });
    expect(poll.counts.created + poll.counts.updated + poll.counts.deleted).toBe(0);
  });
});
