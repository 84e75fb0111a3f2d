// Issue 38, point 1: a keys-only reconcile (`sync --reconcile`) of a RESO feed against a server
// where, since the last sync, records were hard-deleted without a trace, others left the feed's
// filter without a new ModificationTimestamp (visibility lost), some changed (new timestamp) and one
// was added. One reconcile: the gone listings are deleted (confirmed with the server, under the
// guards), the changed and new records are fetched by key and written, no record body is read for an
// unchanged key, and the reconcile reads at most a tenth of the bytes a full pull of the same feed
// reads. Over real HTTP (test/helpers/reso-server.ts) into the emulator.
import { describe, expect, it } from 'vitest';
import { FeedConfig } from '../../src/config/schema.js';
import type { TestEmulator } from '../helpers/emulator.js';
import { startResoServer } from '../helpers/reso-server.js';
import { SN, type SyncEnv, useEmulatorSync } from './helpers/feed.js';
import { keyedResoRecords } from './helpers/reso-records.js';
import { reconcileAsk } from '../../src/feeds/reso/reso-asks.js';

let te: TestEmulator;
let env: SyncEnv;
const emulator = useEmulatorSync((t, e) => {
  te = t;
  env = e;
});

const N = 1000;
const PAGE = 100;
/** K-0001… and L-0001…, a second apart */
const records = (n: number) => keyedResoRecords(n, 381, { digits: 4, everyMs: 1000 });

const held = async () => new Map((await te.listings(SN)).map((l) => [String(l.MLSNumber), l]));

describe('sync --reconcile', () => {
  it('deletes what was hard-deleted or left the filter without a new timestamp, fetches only what changed, and reads ≤ 1/10 of a full pull', async () => {
    const data = records(N);
    const server = emulator.closeAfterTest(await startResoServer({ records: data, maxPageSize: PAGE }));
    const feed = FeedConfig.parse({
      name: 'mls',
      chatbot: SN,
      source: {
        kind: 'reso',
        url: server.url,
        incremental: true,
        filter: "PropertyType eq 'Residential'",
        retries: 0,
        timeoutMs: 10_000,
        photosTimestampField: null,
      },
      mapping: { preset: 'reso', fields: { Url: { template: 'https://broker.test/l/{ListingId}' } } },
      deletes: { maxFraction: 0.05, maxCount: 100 },
    });
    const first = await env.sync(te, feed);
    expect(first.outcome, first.message).toBe('ok');
    expect((await held()).size).toBe(N);

    // since then: 3 hard deletes, 2 records out of the filter with their old timestamp, 2 changed, 1 new
    for (const k of ['K-0010', 'K-0500', 'K-0999']) server.remove(k);
    server.records = server.records.map((r) =>
      r.ListingKey === 'K-0020' || r.ListingKey === 'K-0600' ? { ...r, PropertyType: 'Land' } : r,
    );
    // (changed a minute ago: a mark never passes the server's clock at the read's start, less a second)
    const past = new Date(Date.now() - 60_000).toISOString();
    server.touch('K-0030', { ListPrice: 111_111, ModificationTimestamp: past });
    server.touch('K-0700', { ListPrice: 222_222, ModificationTimestamp: past });
    server.records = [
      ...server.records,
      { ...data[0]!, ListingKey: 'K-NEW1', ListingId: 'L-NEW1', ModificationTimestamp: past },
    ];
    const before = server.requests.length;

    const reconcile = await env.sync(te, feed, { ask: reconcileAsk });
    expect(reconcile.outcome, reconcile.message).toBe('ok');
    expect(reconcile.counts.deleted).toBe(5);
    expect(reconcile.counts.updated).toBe(2);
    expect(reconcile.counts.created).toBe(1);
    const now = await held();
    for (const gone of ['L-0010', 'L-0500', 'L-0999', 'L-0020', 'L-0600']) expect(now.has(gone)).toBe(false);
    expect(now.get('L-0030')!.SalePrice).toBe(111_111);
    expect(now.get('L-0700')!.SalePrice).toBe(222_222);
    expect(now.has('L-NEW1')).toBe(true);
    expect(now.size).toBe(N - 5 + 1);
    const keys = N - 5 + 1;
    expect(reconcile.source.reconcile).toEqual({ keys, fetched: 3 });

    // no record body for an unchanged key: every request selects fields, none expands Media, but the fetch and the confirmation
    const asked = server.requests.slice(before);
    const keysOnly = asked.filter(
      (r) => r.select !== undefined && !r.url.includes('%24expand') && !r.url.includes('$expand'),
    );
    const byKey = asked.filter((r) => !keysOnly.includes(r));
    // ceil(keys / page) pages, and the one empty page that ends a keyset pull of the standard profile
    expect(keysOnly.length).toBe(Math.ceil(keys / PAGE) + 1);
    // the fetch (3 keys, by ListingKey) and the confirmation (5 listings, by ListingId): no other record is asked for
    const named = byKey.flatMap((r) =>
      [...(r.filter ?? '').matchAll(/ListingId eq '([^']+)'|ListingKey eq '([^']+)'/g)].map((m) => m[1] ?? m[2]),
    );
    expect(new Set(named)).toEqual(
      new Set(['K-0030', 'K-0700', 'K-NEW1', 'L-0010', 'L-0500', 'L-0999', 'L-0020', 'L-0600']),
    );

    // the same feed pulled whole, dry: the reconcile's bytes are at most a tenth of it
    const full = await env.sync(te, feed, { full: true, dryRun: true });
    expect(full.outcome).toBe('ok');
    expect(full.counts.created + full.counts.updated + full.counts.deleted).toBe(0);
    const ratio = reconcile.source.bytes! / full.source.bytes!;
    console.log(
      `reconcile: ${reconcile.source.bytes} bytes, ${reconcile.source.requests} requests; full pull: ${full.source.bytes} bytes, ${full.source.requests} requests; ratio ${ratio.toFixed(4)}`,
    );
    expect(ratio).toBeLessThanOrEqual(0.1);

    // nothing changed since: the reconcile moved the mark, so the next one fetches nothing and writes nothing
    const quiet = await env.sync(te, feed, { ask: reconcileAsk });
    expect(quiet.outcome, quiet.message).toBe('ok');
    expect(quiet.counts.created + quiet.counts.updated + quiet.counts.deleted).toBe(0);
    expect(quiet.source.reconcile).toEqual({ keys, fetched: 0 });
  });

  it('a reconcile that would delete past deletes.maxFraction holds every delete (guard), as a full pull would', async () => {
    const data = records(40);
    const server = emulator.closeAfterTest(await startResoServer({ records: data, maxPageSize: 10 }));
    const feed = FeedConfig.parse({
      name: 'mls',
      chatbot: SN,
      source: {
        kind: 'reso',
        url: server.url,
        incremental: true,
        retries: 0,
        timeoutMs: 10_000,
        photosTimestampField: null,
      },
      mapping: { preset: 'reso', fields: { Url: { template: 'https://broker.test/l/{ListingId}' } } },
      deletes: { maxFraction: 0.1, maxCount: 100 },
    });
    expect((await env.sync(te, feed)).outcome).toBe('ok');
    for (const r of data.slice(0, 10)) server.remove(String(r.ListingKey));
    const reconcile = await env.sync(te, feed, { ask: reconcileAsk });
    expect(reconcile.outcome).toBe('guard');
    expect(reconcile.counts.deleted).toBe(0);
    expect((await held()).size).toBe(40);
  });
});
