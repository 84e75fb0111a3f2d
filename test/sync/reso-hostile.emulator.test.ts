// Issue 22 over real HTTP: RESO servers that page the way real ones sometimes do (test/helpers/
// reso-server.ts: `order`, `failPages`, hard deletes between pages) never make feedsync delete a
// listing the server still has. Each case: the chatbot first holds every listing (a sync against the
// server behaving), then the hostile run, then: zero live listings deleted (the emulator's stored
// listings), the run's outcome and exit status, and a following full pull that creates nothing.
import { describe, expect, it } from 'vitest';
import { exitForOutcome } from '../../src/cli/exit.js';
import { FeedConfig } from '../../src/config/schema.js';
import type { ListingChange } from '../../src/sync/model/changes.js';
import type { SyncReport } from '../../src/sync/index.js';
import type { TestEmulator } from '../helpers/emulator.js';
import { startResoServer, type ResoServer, type ResoServerOptions } from '../helpers/reso-server.js';
import { requests, SN, type SyncEnv, total, useEmulatorSync } from './helpers/feed.js';
import { keyedResoRecords } from './helpers/reso-records.js';

let te: TestEmulator;
let env: SyncEnv;
const emulator = useEmulatorSync((t, e) => {
  te = t;
  env = e;
});

const PAGE = 5;
/** `n` on-market records, keys K-01… in key order, ListingId L-01… (the chatbot's MLSNumber). */
const records = (n: number) => keyedResoRecords(n, 22);

/** Changes made before a pull, in the past (the mark never passes the server's clock at the pull's start, less a second). */
const changedAt = (i: number) => new Date(Date.UTC(2025, 1, 1, 0, i)).toISOString();

function feedOf(server: ResoServer, source: Record<string, unknown> = {}, deletes: Record<string, unknown> = {}) {
  return FeedConfig.parse({
    name: 'mls',
    chatbot: SN,
    source: {
      kind: 'reso',
      url: server.url,
      maxPageSize: PAGE,
      retries: 0,
      timeoutMs: 5000,
      photosTimestampField: null,
      ...source,
    },
    mapping: { preset: 'reso', fields: { Url: { template: 'https://broker.test/l/{ListingId}' } } },
    // no limit hides a wrong delete here: the guard's fraction is not what keeps the listings
    deletes: { maxFraction: 1, maxCount: 10_000, ...deletes },
  });
}

const held = async () => (await te.listings(SN)).map((l) => String(l.MLSNumber)).sort();
const deleteCalls = async () => total(await requests(te, 'RealEstateDelete'));

/** A server holding `data`, and a chatbot that holds all of it (synced while the server behaved). */
async function seeded(
  data: Record<string, unknown>[],
  opts: Partial<ResoServerOptions> = {},
  source: Record<string, unknown> = {},
) {
  const server = emulator.closeAfterTest(await startResoServer({ records: data, maxPageSize: PAGE, ...opts }));
  const wanted = server.order;
  server.order = 'honour';
  const first = await env.sync(te, feedOf(server, source), { full: true });
  expect(first.outcome).toBe('ok');
  expect(await held()).toEqual(data.map((r) => String(r.ListingId)).sort());
  server.order = wanted;
  return server;
}

/** The following full pull against the server behaving: nothing to create, nothing to delete. */
async function followingFullPull(
  server: ResoServer,
  source: Record<string, unknown> = {},
  deleted = 0,
): Promise<SyncReport> {
  server.order = 'honour';
  server.beforePage = undefined;
  const next = await env.sync(te, feedOf(server, source), { full: true });
  expect(next.outcome).toBe('ok');
  expect(next.counts.created).toBe(0);
  expect(next.counts.deleted).toBe(deleted);
  return next;
}

describe('a server that ignores $orderby', () => {
  it('storage order with the highest key stored early: a keyset pull that looks complete misses records; they are asked for by key and kept (partial, exit 4)', async () => {
    const data = records(23);
    // the highest key stored last on the first page, the rest in key order: the pull by key asks for
    // the keys after it next, finds none, and looks complete
    const stored = [...data.slice(0, 4), data[22]!, ...data.slice(4, 22)];
    const server = await seeded(stored, { order: 'storage' });
    const before = await deleteCalls();
    const report = await env.sync(te, feedOf(server), { full: true });
    expect(await deleteCalls()).toBe(before);
    expect(await held()).toEqual(data.map((r) => String(r.ListingId)).sort());
    expect(report.outcome).toBe('partial');
    expect(exitForOutcome(report.outcome)).toBe(4);
    expect(report.source.complete).toBe(false);
    expect(report.message).toMatch(
      /the server's paging missed 18 records that it still has \(L-05, L-06, L-07, L-08, L-09, … 13 more\)/,
    );
    expect(report.message).toMatch(/paging in use: source\.paging: keyset; set source\.paging: nextLink/);
    // the confirmation asked by key (ListingId, and ListingKey, which the preset falls back on), in URLs of at most 2,048 characters
    const asked = server.requests.filter((r) => r.filter?.includes("ListingId eq '"));
    // (its answer pages by nextLink, which is followed: 18 records, 5 a page)
    expect(asked).toHaveLength(4);
    for (const r of asked) expect(`${server.origin}${r.url}`.length).toBeLessThanOrEqual(2048);
    expect([...new Set(asked.flatMap((r) => r.filter!.match(/ListingId eq '[^']+'/g) ?? []))].sort()).toEqual(
      data.slice(4, 22).map((r) => `ListingId eq '${String(r.ListingId)}'`),
    );
    await followingFullPull(server);
  });

  it('storage order out of key order within a page: noticed on that page, the pull stops there (partial, exit 4), nothing deleted', async () => {
    const data = records(23);
    const stored = [data[0]!, data[1]!, data[22]!, ...data.slice(2, 22)];
    const server = await seeded(stored, { order: 'storage' });
    const report = await env.sync(te, feedOf(server), { full: true });
    expect(await held()).toEqual(data.map((r) => String(r.ListingId)).sort());
    expect(report.outcome).toBe('partial');
    expect(exitForOutcome(report.outcome)).toBe(4);
    expect(report.message).toMatch(
      /page 1: record "K-03" came after "K-23", out of order: the server ignores \$orderby=ListingKey/,
    );
    expect(report.message).toMatch(/set source\.paging: nextLink/);
    expect(server.requests.at(-1)?.filter).toBeUndefined(); // no page after the first was asked for
    await followingFullPull(server);
  });

  it('a server that scrambles every answer, paged by nextLink: the records its pages missed are asked for by key and kept, the run says so (partial, exit 4)', async () => {
    const data = records(23);
    const server = await seeded(data, { order: 'scramble', seed: 7 }, { paging: 'nextLink' });
    const before = await deleteCalls();
    const report = await env.sync(te, feedOf(server, { paging: 'nextLink' }), { full: true });
    expect(await deleteCalls()).toBe(before);
    expect(await held()).toEqual(data.map((r) => String(r.ListingId)).sort());
    expect(report.counts.deleted).toBe(0);
    expect(report.outcome).toBe('partial');
    expect(exitForOutcome(report.outcome)).toBe(4);
    // its pages repeat records (a full pull is then not read whole) and miss others (asked for by key)
    expect(report.message).toMatch(/came twice in one pull|the server's paging missed \d+ records? that it still has/);
    await followingFullPull(server, { paging: 'nextLink' });
  });

  it('a scrambling server paged by key: noticed on the first page, nothing deleted', async () => {
    const data = records(23);
    const server = await seeded(data, { order: 'scramble', seed: 3 });
    const report = await env.sync(te, feedOf(server), { full: true });
    expect(await held()).toEqual(data.map((r) => String(r.ListingId)).sort());
    expect(report.outcome).toBe('partial');
    expect(report.message).toMatch(/ignores \$orderby/);
    await followingFullPull(server);
  });
});

describe('$skip paging (nextLink) with a hard delete during the pull', () => {
  it('full: the record the shift hid is asked for by key and kept (partial, exit 4); the one the server deleted goes once a pull confirms it gone', async () => {
    const data = records(17);
    const server = await seeded(data, {}, { paging: 'nextLink' });
    const start = server.requests.length;
    // before page 2 (request 1 is page 1): K-02, already read, is deleted;
    // page 2 now starts one record later and K-06 is never paged
    server.beforePage = (n, srv) => n === start + 2 && srv.remove('K-02');
    const report = await env.sync(te, feedOf(server, { paging: 'nextLink' }), { full: true });
    expect(await held()).toEqual(data.map((r) => String(r.ListingId)).sort());
    expect(report.counts.deleted).toBe(0);
    expect(report.outcome).toBe('partial');
    expect(exitForOutcome(report.outcome)).toBe(4);
    expect(report.message).toMatch(/the server's paging missed 1 record that it still has \(L-06\)/);
    expect(report.message).toMatch(
      /paging in use: source\.paging: nextLink \(\$skip links\); set source\.paging: keyset/,
    );
    const asked = server.requests.filter((r) => r.filter?.includes("ListingId eq 'L-06'"));
    expect(asked).toHaveLength(1);
    await followingFullPull(server, { paging: 'nextLink' }, 1);
    expect(await held()).toEqual(
      data
        .map((r) => String(r.ListingId))
        .filter((id) => id !== 'L-02')
        .sort(),
    );
  });

  it('incremental: the change the shift hid is not lost: the mark stays before it and the next pull brings it', async () => {
    const data = records(17);
    const server = await seeded(data, {}, { paging: 'nextLink', incremental: true });
    ['K-03', 'K-05', 'K-07', 'K-09', 'K-11', 'K-13', 'K-15'].forEach((k, i) =>
      server.touch(k, { ListPrice: 777_000, ModificationTimestamp: changedAt(i) }),
    );
    const start = server.requests.length;
    // the pull from the mark: K-17 (at the mark: ge), then the seven changed; page 1 is K-17, K-03, K-05,
    // K-07, K-09; before page 2, K-05 (read) is deleted: K-11 shifts onto page 1's place and $skip passes it
    server.beforePage = (n, srv) => n === start + 2 && srv.remove('K-05');
    const inc = await env.sync(te, feedOf(server, { paging: 'nextLink', incremental: true }));
    server.beforePage = undefined;
    expect(inc.source.mode).toBe('incremental');
    expect(inc.outcome).toBe('ok');
    expect(await held()).toContain('L-05'); // an incremental pull deletes nothing that is merely absent
    const price = async (id: string) => (await te.listings(SN)).find((l) => l.MLSNumber === id)?.SalePrice;
    expect(await price('L-15')).toBe(777_000);
    const next = await env.sync(te, feedOf(server, { paging: 'nextLink', incremental: true }));
    expect(next.outcome).toBe('ok');
    for (const id of ['L-03', 'L-07', 'L-09', 'L-11', 'L-13', 'L-15']) expect(await price(id), id).toBe(777_000);
    const full = await env.sync(te, feedOf(server, { paging: 'nextLink', incremental: true }), { full: true });
    expect(full.counts.created).toBe(0);
    expect(full.counts.deleted).toBe(1); // K-05, confirmed gone
    expect(await held()).toEqual(
      data
        .map((r) => String(r.ListingId))
        .filter((id) => id !== 'L-05')
        .sort(),
    );
  });
});

describe('an incremental pull with a record changed again during it', () => {
  it('the record that comes twice is its later version: the run is ok, the mark advances, nothing deleted', async () => {
    const data = records(17);
    const server = await seeded(data, {}, { incremental: true });
    ['K-02', 'K-04', 'K-06', 'K-08', 'K-10', 'K-12', 'K-14'].forEach((k, i) =>
      server.touch(k, { ListPrice: 650_000, ModificationTimestamp: changedAt(i) }),
    );
    const start = server.requests.length;
    server.beforePage = (n, srv) => n === start + 2 && srv.touch('K-02', { ListPrice: 660_000 });
    const inc = await env.sync(te, feedOf(server, { incremental: true }));
    server.beforePage = undefined;
    expect(inc.outcome).toBe('ok');
    expect(inc.source.complete).toBe(true);
    const listings = await te.listings(SN);
    expect(listings.find((l) => l.MLSNumber === 'L-02')?.SalePrice).toBe(660_000);
    expect(listings).toHaveLength(17);
    // the mark advanced to the latest change the pull began with (K-14's): K-02's second change is after it
    const next = await env.sync(te, feedOf(server, { incremental: true }));
    expect(next.outcome).toBe('ok');
    expect(next.counts.feedRecords).toBe(2); // K-14 (at the mark: ge) and K-02's second change
    await followingFullPull(server, { incremental: true });
  });
});

describe('a server that fails from page 2 on', () => {
  it.each([500, 400])(
    'HTTP %i: nothing deleted, outcome partial (exit 4), never guard; the message names the answer and the page; one change-log entry for the run',
    async (status) => {
      const data = records(17);
      const server = await seeded(data);
      const changes: ListingChange[] = [];
      const start = server.pages;
      const failing = emulator.closeAfterTest(
        await startResoServer({ records: server.records, maxPageSize: PAGE, failPages: { from: 2, status } }),
      );
      expect(start).toBeGreaterThan(0);
      const report = await env.sync(te, feedOf(failing), { full: true, changes: (c) => changes.push(c) });
      expect(await held()).toEqual(data.map((r) => String(r.ListingId)).sort());
      expect(report.outcome).toBe('partial');
      expect(exitForOutcome(report.outcome)).toBe(4);
      expect(report.message).toContain(`HTTP ${status}`);
      expect(report.message).toMatch(/page 2/);
      expect(report.message).not.toMatch(/maxFraction/);
      expect(changes.filter((c) => c.op === 'delete')).toEqual([]);
      const run = changes.filter((c) => c.op === 'withheld');
      expect(run).toEqual([{ op: 'withheld', count: 12, reason: expect.stringMatching(/read not whole/) }]);
      await followingFullPull(server);
    },
  );

  it('a full pull capped by source.top: one change-log entry for the run, not one per listing kept', async () => {
    const data = records(17);
    const server = await seeded(data);
    const changes: ListingChange[] = [];
    const report = await env.sync(te, feedOf(server, { top: 6 }), { full: true, changes: (c) => changes.push(c) });
    expect(await held()).toHaveLength(17);
    expect(report.outcome).toBe('partial');
    expect(changes.filter((c) => c.op === 'delete')).toEqual([]);
    expect(changes.filter((c) => c.op === 'withheld')).toEqual([
      {
        op: 'withheld',
        count: 11,
        reason: expect.stringMatching(/^deletes withheld: read not whole \(.*source\.top = 6/),
      },
    ]);
  });

  it('HTTP 500 on the first page: nothing could be used, outcome failed (exit 1)', async () => {
    const data = records(7);
    const server = await seeded(data);
    const failing = emulator.closeAfterTest(
      await startResoServer({ records: server.records, maxPageSize: PAGE, failPages: { from: 1, status: 500 } }),
    );
    const report = await env.sync(te, feedOf(failing), { full: true });
    expect(await held()).toHaveLength(7);
    expect(report.outcome).toBe('failed');
    expect(exitForOutcome(report.outcome)).toBe(1);
    expect(report.message).toMatch(/HTTP 500.*page 1|page 1.*HTTP 500/);
    await followingFullPull(server);
  });
});

describe('the confirmation itself', () => {
  it('only keys the server confirms absent or off the market are deleted: gone, withdrawn and MlgCanView false go, the missed one stays', async () => {
    const data = records(12);
    const stored = [...data.slice(0, 4), data[11]!, ...data.slice(4, 11)];
    const server = await seeded(stored, { order: 'storage' });
    // the pull (storage order) misses K-05..K-11; of those the server has deleted K-05, withdrawn K-06,
    // hidden K-07 (MlgCanView false); it still has K-08..K-11 on the market
    server.remove('K-05');
    server.records = server.records.map((r) =>
      r.ListingKey === 'K-06'
        ? { ...r, StandardStatus: 'Withdrawn' }
        : r.ListingKey === 'K-07'
          ? { ...r, MlgCanView: false }
          : r,
    );
    const report = await env.sync(te, feedOf(server), { full: true });
    expect(await held()).toEqual(
      data
        .map((r) => String(r.ListingId))
        .filter((id) => !['L-05', 'L-06', 'L-07'].includes(id))
        .sort(),
    );
    expect(report.counts.deleted).toBe(3);
    expect(report.outcome).toBe('partial');
    expect(report.message).toMatch(/the server's paging missed 4 records that it still has \(L-08, L-09, L-10, L-11\)/);
    await followingFullPull(server);
  });

  it('a confirmation that fails deletes nothing (partial, exit 4), naming the answer', async () => {
    const data = records(12);
    const stored = [...data.slice(0, 4), data[11]!, ...data.slice(4, 11)];
    const server = await seeded(stored, { order: 'storage' });
    const pages = server.pages;
    const failing = emulator.closeAfterTest(
      await startResoServer({
        records: server.records,
        order: 'storage',
        maxPageSize: PAGE,
        failPages: { from: 3, status: 503 },
      }),
    );
    const report = await env.sync(te, feedOf(failing), { full: true });
    expect(pages).toBeGreaterThan(0);
    expect(failing.requests.map((r) => r.status)).toEqual([200, 200, 503]); // page 1, page 2 (empty), the confirmation
    expect(await held()).toEqual(data.map((r) => String(r.ListingId)).sort());
    expect(report.counts.deleted).toBe(0);
    expect(report.outcome).toBe('partial');
    expect(exitForOutcome(report.outcome)).toBe(4);
    expect(report.message).toMatch(
      /absence\(s\) could not be confirmed with the source \(.*confirmation request 1: the server answered HTTP 503/,
    );
    await followingFullPull(server);
  });

  it('a dry run asks too, and plans no delete for a record the server still has', async () => {
    const data = records(12);
    const stored = [...data.slice(0, 4), data[11]!, ...data.slice(4, 11)];
    const server = await seeded(stored, { order: 'storage' });
    const report = await env.sync(te, feedOf(server), { full: true, dryRun: true });
    expect(report.counts.deleted).toBe(0);
    expect(report.plan?.deletes).toEqual([]);
    expect(report.outcome).toBe('partial');
    expect(report.message).toMatch(/missed 7 records that it still has/);
  });

  it('more absences than deletes.maxCount are not asked for: the guard holds them (exit 3), as for any feed that shrank', async () => {
    const data = records(12);
    const server = await seeded(data);
    server.records = server.records.slice(0, 4);
    const asked = server.requests.length;
    const report = await env.sync(te, feedOf(server, {}, { maxCount: 5 }), { full: true });
    expect(server.requests.slice(asked).some((r) => r.filter?.includes(' eq '))).toBe(false);
    expect(report.outcome).toBe('guard');
    expect(exitForOutcome(report.outcome)).toBe(3);
    expect(await held()).toHaveLength(12);
  });
});
