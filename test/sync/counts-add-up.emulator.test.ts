// Issue 35, point 4: the counts of every report add up, whatever the run's outcome:
// valid = created + updated + unchanged + unwritten + unplanned − rewritten − writtenThenGone
// (report.ts validFromWrites; docs/runbook.md "The counts add up"). Each outcome a run can end with
// is produced over real HTTP (the emulator, a RESO test server) and its report checked; a run
// whose confirmation recovers records plans them (they were left waiting in the pending window).
import { describe, expect, it } from 'vitest';
import { FeedConfig } from '../../src/config/schema.js';
import { validFromWrites, type SyncReport } from '../../src/sync/report/report.js';
import type { TestEmulator } from '../helpers/emulator.js';
import { startResoServer, type ResoServer } from '../helpers/reso-server.js';
import { row, rows, SN, type SyncEnv, useEmulatorSync } from './helpers/feed.js';
import { keyedResoRecords } from './helpers/reso-records.js';
import { reconcileAsk } from '../../src/feeds/reso/reso-asks.js';

let te: TestEmulator;
let env: SyncEnv;
const emulator = useEmulatorSync((t, e) => {
  te = t;
  env = e;
});

const seen = new Set<SyncReport['outcome'] | 'dry run'>();
function addsUp(r: SyncReport): void {
  expect(r.counts.valid).toBe(validFromWrites(r.counts));
  seen.add(r.dryRun ? 'dry run' : r.outcome);
}

const resoRecords = (n: number) => keyedResoRecords(n, 35);
const resoFeed = (server: ResoServer, source: Record<string, unknown> = {}, fields: Record<string, unknown> = {}) =>
  FeedConfig.parse({
    name: 'mls',
    chatbot: SN,
    source: {
      kind: 'reso',
      url: server.url,
      maxPageSize: 5,
      retries: 0,
      timeoutMs: 5000,
      photosTimestampField: null,
      ...source,
    },
    mapping: { preset: 'reso', fields: { Url: { template: 'https://broker.test/l/{ListingId}' }, ...fields } },
    deletes: { maxFraction: 1, maxCount: 10_000 },
  });

describe('valid = created + updated + unchanged + the documented others', () => {
  it('ok, dry run, guard: a CSV feed', async () => {
    await env.writeFeed([...rows(10), row(3, { SalePrice: 1 })]);
    addsUp(await env.sync(te, env.feed(), { dryRun: true }));
    const ok = await env.sync(te);
    expect(ok.outcome).toBe('ok');
    addsUp(ok);
    await env.writeFeed(rows(2));
    const guard = await env.sync(te);
    expect(guard.outcome).toBe('guard');
    addsUp(guard);
  });

  it('partial: the records a confirmation recovers are planned (here unchanged), not left waiting unplanned', async () => {
    const data = resoRecords(23);
    // the highest key stored on the first page: the keyset pull by key ends there and looks complete
    const server = emulator.closeAfterTest(
      await startResoServer({
        records: [...data.slice(0, 4), data[22]!, ...data.slice(4, 22)],
        maxPageSize: 5,
        order: 'storage',
      }),
    );
    // the chatbot holds every listing but the last five: the missed ones it holds are absences to confirm
    server.order = 'honour';
    server.records = data.slice(0, 18);
    await env.sync(te, resoFeed(server), { full: true });
    server.records = [...data.slice(0, 4), data[22]!, ...data.slice(4, 22)];
    server.order = 'storage';
    const r = await env.sync(te, resoFeed(server), { full: true });
    expect(r.outcome).toBe('partial');
    expect(r.message).toMatch(/the server's paging missed 14 records/);
    addsUp(r);
    expect(r.counts.unchanged).toBe(18);
    // the missed records the chatbot lacked (L-19 … L-22) are not absences: only a following full pull finds them
    expect((await te.listings(SN)).length).toBe(19);
  });

  it('failed writes (the service answers 500 to some writes, no retries): partial, the writes not made counted', async () => {
    await env.writeFeed(rows(30));
    let faulty = false;
    // faults from the first write on: the chatbot's paging (before the feed is read) answered whole
    const onProgress = (p: { phase: string }) => {
      if (p.phase !== 'write' || faulty) return;
      faulty = true;
      te.emulator.configure({ faultRate: 0.3, faults: ['500'], seed: 35 });
    };
    const r = await env.sync(te, env.feed(), { api: { retries: 0, concurrency: 1 }, onProgress });
    te.emulator.configure({ faultRate: 0 });
    expect(r.outcome).toBe('partial');
    expect(r.counts.failed).toBeGreaterThan(0);
    expect(r.counts.unwritten).toBe(r.counts.failed);
    addsUp(r);
  });

  it('failed and partial reads: a RESO server that stops answering after some pages', async () => {
    const server = emulator.closeAfterTest(
      await startResoServer({ records: resoRecords(20), maxPageSize: 5, failPages: { from: 3, status: 500 } }),
    );
    const r = await env.sync(te, resoFeed(server), { full: true });
    expect(r.outcome).toBe('partial');
    addsUp(r);
    const none = emulator.closeAfterTest(
      await startResoServer({ records: resoRecords(5), maxPageSize: 5, failPages: { from: 1, status: 500 } }),
    );
    const f = await env.sync(te, resoFeed(none), { full: true });
    expect(f.outcome).toBe('failed');
    addsUp(f);
  });

  it('a keys-only reconcile (--reconcile) and an EntityEvent poll (source.changes: entityEvent): a change, a hard delete, a record gone off the market', async () => {
    const data = resoRecords(20);
    const server = emulator.closeAfterTest(
      await startResoServer({ records: data, maxPageSize: 5, entityEvents: true }),
    );
    // keyed by ListingKey: an EntityEvent names the ListingKey of a record deleted, and nothing more
    const byKey = { MLSNumber: { from: 'ListingKey' } };
    const feed = resoFeed(server, { incremental: true }, byKey);
    addsUp(await env.sync(te, feed));
    server.touch('K-04', { ListPrice: 222_222 });
    server.touch('K-05', { StandardStatus: 'Withdrawn' });
    server.remove('K-11');
    const reconcile = await env.sync(te, feed, { ask: reconcileAsk });
    expect(reconcile.outcome, reconcile.message).toBe('ok');
    expect(reconcile.source.reconcile).toMatchObject({ keys: 19, fetched: 2 });
    expect(reconcile.counts).toMatchObject({ updated: 1, deleted: 2 });
    addsUp(reconcile);
    addsUp(await env.sync(te, feed, { ask: reconcileAsk, dryRun: true }));

    const events = resoFeed(server, { incremental: true, changes: 'entityEvent' }, byKey);
    addsUp(await env.sync(te, events, { full: true }));
    server.touch('K-06', { ListPrice: 333_333 });
    server.touch('K-07', { StandardStatus: 'Withdrawn' });
    server.remove('K-12');
    const poll = await env.sync(te, events);
    expect(poll.outcome, poll.message).toBe('ok');
    expect(poll.source.events).toMatchObject({ fetched: 2, gone: 1 });
    expect(poll.counts).toMatchObject({ updated: 1, deleted: 2 });
    addsUp(poll);
  });

  it('aborted: the run stopped while it wrote', async () => {
    await env.writeFeed(rows(40));
    const ac = new AbortController();
    const r = await env.sync(te, env.feed(), {
      signal: ac.signal,
      onProgress: (p) => p.phase === 'write' && (p.done ?? 0) >= 3 && ac.abort(),
      api: { concurrency: 1 },
    });
    expect(r.outcome).toBe('aborted');
    addsUp(r);
    expect(seen).toEqual(new Set(['ok', 'dry run', 'guard', 'partial', 'failed', 'aborted']));
  });
});
