// The display rules of a RESO feed (docs/display-rules.md), end to end over HTTP: records served by
// a RESO test server with the flags set (test/helpers/flagged-reso.ts), synced into the emulator,
// what the emulator holds and every request body it received looked at.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runEntryOf } from '../../src/runs/run-lanes.js';
import { renderStatus } from '../../src/server/status/status-page.js';
import { describeChange, type ListingChange } from '../../src/sync/model/changes.js';
import { formatSyncReport } from '../../src/sync/report/report-format.js';
import type { TestEmulator } from '../helpers/emulator.js';
import { flaggedFeed, flaggedRecord, SECRET_MARK } from '../helpers/flagged-reso.js';
import { startResoServer } from '../helpers/reso-server.js';
import { COLUMNS, createSyncEnv, csv, row, type Row, SN, type SyncEnv, useEmulatorSync } from './helpers/feed.js';

const bodies: Array<{ path: string; body: string }> = [];
let te: TestEmulator;
let env: SyncEnv;
const emulator = useEmulatorSync({
  bodies,
  onEach: (t, e) => {
    te = t;
    env = e;
  },
});

const resoFeed = (url: string, patch: Record<string, unknown> = {}) => flaggedFeed(url, SN, patch);

const held = async () => new Map((await te.listings(SN)).map((l) => [l.MLSNumber, l]));
const extension = (l: { ExtensionColumn?: Array<{ Key: string; value: string }> } | undefined) =>
  new Map((l?.ExtensionColumn ?? []).map((e) => [e.Key, e.value]));
/** every write the emulator received, as sent */
const writes = () => bodies.filter((b) => /RealEstate(Create|Update|Delete)$/.test(b.path));

describe('display rules of an idx feed (a RESO source, no display set)', () => {
  it('one run: each rule hides its records, the address is withheld, every listing carries its attribution, no restricted value is sent', async () => {
    const records = [
      flaggedRecord(1),
      flaggedRecord(2),
      flaggedRecord(3, { InternetEntireListingDisplayYN: false }),
      flaggedRecord(4, { IDXParticipationYN: 'N' }),
      flaggedRecord(5, { InternetAddressDisplayYN: '0' }),
      flaggedRecord(6, { StandardStatus: 'Coming Soon' }),
      flaggedRecord(7, { StandardStatus: 'Closed', CloseDate: '2025-01-02' }),
      flaggedRecord(8, { ListOfficeName: null }),
      flaggedRecord(9, { MlgCanView: false }),
    ];
    const s = emulator.closeAfterTest(await startResoServer({ records }));
    const report = await env.sync(te, resoFeed(s.url));
    expect(report.outcome, report.message).toBe('ok');

    const now = await held();
    expect([...now.keys()].sort()).toEqual(['FL-01', 'FL-02', 'FL-05']);
    for (const l of now.values())
      expect(extension(l).get('Attribution')).toBe('Listing courtesy of Hill Country Realty');
    const withheld = now.get('FL-05')!;
    expect([withheld.Address, withheld.Location, withheld.Latitude, withheld.Longitude]).toEqual([
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
    expect(withheld.City).toBe('Austin');
    expect(now.get('FL-01')!.Address).toBe('101 Oak Street');

    expect(report.display).toEqual({
      purpose: 'idx',
      soldDays: 0,
      hidden: {
        InternetEntireListingDisplayYN: 1,
        IDXParticipationYN: 1,
        StandardStatus: 1,
        'sold-window': 1,
        MlgCanView: 1,
      },
      addressWithheld: 1,
      held: 1,
    });
    expect(report.rejected.map((r) => [r.key, r.reasons.join()])).toEqual([
      ['FL-08', expect.stringMatching(/display\.attribution names ListOfficeName/)],
    ]);
    expect(formatSyncReport(report)).toMatch(
      /display rules \(idx\): not shown: .*InternetEntireListingDisplayYN false × 1.*; address withheld × 1; held back without their attribution × 1/,
    );
    // the status page shows them, from the run's entry in the change log
    const last = {
      runId: 'r1',
      feed: 'mls',
      chatbot: SN,
      dryRun: false,
      recorded: 0,
      dropped: 0,
      ...runEntryOf(report),
    };
    const html = renderStatus({
      at: report.finishedAt,
      staleHours: 36,
      feeds: [{ feed: 'mls', lane: 'mls', chatbot: SN, runs: [last], last, stale: false, state: 'idle', alerts: [] }],
    });
    expect(html).toMatch(
      /<small class="display">display rules: not shown: .*IDXParticipationYN false × 1.*; address withheld × 1; held back without their attribution × 1<\/small>/,
    );

    // no restricted value in any request the chatbot service received, and no street address of the withheld one
    expect(writes().length).toBe(3);
    for (const b of bodies) {
      expect(b.body).not.toContain(SECRET_MARK);
      expect(b.body).not.toContain('105 Oak Street');
    }
  });

  it('a flag that flips to false on the server removes the listing on the next incremental pull, by that rule; the address flag clears the address', async () => {
    const s = emulator.closeAfterTest(await startResoServer({ records: [1, 2, 3, 4].map((i) => flaggedRecord(i)) }));
    const feed = resoFeed(s.url);
    expect((await env.sync(te, feed)).counts.created).toBe(4);

    s.touch('F-01', { InternetEntireListingDisplayYN: 'N' });
    s.touch('F-02', { IDXParticipationYN: false });
    s.touch('F-03', { InternetAddressDisplayYN: false });
    const changes: ListingChange[] = [];
    const report = await env.sync(te, feed, { changes: (c) => changes.push(c) });
    expect(report.outcome, report.message).toBe('ok');
    expect(report.source.mode).toBe('incremental');
    const now = await held();
    expect([...now.keys()].sort()).toEqual(['FL-03', 'FL-04']);
    expect(now.get('FL-03')!.Address).toBeUndefined();
    expect(now.get('FL-03')!.Latitude).toBeUndefined();
    expect(extension(now.get('FL-03')).get('Attribution')).toBe('Listing courtesy of Hill Country Realty');
    // 2 of 4 listings (50%) removed by rule, past deletes.maxFraction 0.25: not held back
    expect(report.guard.outcome).toBe('passed');
    expect(report.deletedByReason).toEqual({ 'rule:InternetEntireListingDisplayYN': 1, 'rule:IDXParticipationYN': 1 });
    // the change log (runs show, history) names the rule
    const said = changes.filter((c) => c.op === 'delete').map((c) => describeChange(c));
    expect(said.sort()).toEqual([
      '- FL-01 delete (display rule: InternetEntireListingDisplayYN false)',
      '- FL-02 delete (display rule: IDXParticipationYN false)',
    ]);
    for (const b of bodies) expect(b.body).not.toContain(SECRET_MARK);
  });

  it('removals by rule are not counted toward deletes.maxFraction, while the same share of absences trips the guard', async () => {
    const records = Array.from({ length: 10 }, (_, i) => flaggedRecord(i + 1));
    const s = emulator.closeAfterTest(await startResoServer({ records }));
    const feed = resoFeed(s.url);
    await env.sync(te, feed);
    // 6 of 10 hidden by the seller's opt-out: removed at once, the run ok
    for (let i = 1; i <= 6; i++) s.touch(`F-${String(i).padStart(2, '0')}`, { InternetEntireListingDisplayYN: false });
    const byRule = await env.sync(te, feed);
    expect(byRule.outcome, byRule.message).toBe('ok');
    expect(byRule.counts.deleted).toBe(6);
    expect((await held()).size).toBe(4);

    // the same share gone from a full pull (hard-deleted at the source): the guard holds every delete
    const s2 = emulator.closeAfterTest(
      await startResoServer({ records: Array.from({ length: 10 }, (_, i) => flaggedRecord(i + 21)) }),
    );
    const other = resoFeed(s2.url, { name: 'mls-2' });
    await env.sync(te, other, { configFeeds: [feed, other] });
    for (let i = 21; i <= 26; i++) s2.remove(`F-${i}`);
    const absent = await env.sync(te, other, { full: true, configFeeds: [feed, other] });
    expect(absent.outcome).toBe('guard');
    expect(absent.guard.outcome).toBe('tripped');
    expect(absent.counts.deleted).toBe(0);
    expect([...(await held()).keys()].filter((k) => k >= 'FL-21').length).toBe(10);
  });

  it('a rule that cannot read its value hides nothing: a record without StandardStatus or with an unreadable flag is held back, and nothing is deleted', async () => {
    // a vendor that stops sending StandardStatus, or a flags entry naming the wrong field, must not
    // empty the chatbot through removals that no limit holds: the record does not say it may not be shown
    const s = emulator.closeAfterTest(
      await startResoServer({ records: Array.from({ length: 10 }, (_, i) => flaggedRecord(i + 1)) }),
    );
    const feed = resoFeed(s.url);
    await env.sync(te, feed);
    const before = await held();
    expect(before.size).toBe(10);
    for (let i = 1; i <= 6; i++) s.touch(`F-${String(i).padStart(2, '0')}`, { StandardStatus: null });
    s.touch('F-07', { StandardStatus: 'Actve' });
    s.touch('F-08', { InternetEntireListingDisplayYN: 'maybe' });
    const report = await env.sync(te, feed, { full: true });
    expect(report.counts.deleted).toBe(0);
    expect(report.deletedByReason ?? {}).toEqual({});
    expect(report.counts.rejected).toBe(8);
    expect([...(await held()).keys()]).toEqual([...before.keys()]);
    // a value the record states is still a removal by its rule
    s.touch('F-09', { StandardStatus: 'Expired' });
    const stated = await env.sync(te, feed, { full: true });
    expect(stated.deletedByReason).toEqual({ 'rule:StandardStatus': 1 });
  });

  it('deletes.mode keep removes a listing a rule hides (and only those)', async () => {
    const s = emulator.closeAfterTest(await startResoServer({ records: [1, 2, 3].map((i) => flaggedRecord(i)) }));
    const feed = resoFeed(s.url, { deletes: { mode: 'keep' } });
    await env.sync(te, feed);
    s.touch('F-01', { MlgCanView: false });
    s.touch('F-02', { StandardStatus: 'Withdrawn' });
    s.remove('F-03');
    const report = await env.sync(te, feed, { full: true });
    expect(report.outcome, report.message).toBe('ok');
    expect(report.deletedByReason).toEqual({ 'rule:MlgCanView': 1, 'rule:StandardStatus': 1 });
    expect([...(await held()).keys()]).toEqual(['FL-03']);
  });
});

describe('a record the paging missed, asked for by key before a delete', () => {
  it('comes back hidden by a rule: removed at once by that rule, not held as an absence in its grace period', async () => {
    const records = [1, 2, 3, 4].map((i) => flaggedRecord(i, { ListingKey: `K-${i}` }));
    // stored with the highest key last on the first page: a keyset pull that ignores $orderby misses K-3
    const s = emulator.closeAfterTest(
      await startResoServer({
        records: [records[0]!, records[1]!, records[3]!, records[2]!],
        order: 'storage',
        maxPageSize: 3,
      }),
    );
    s.order = 'honour';
    const feed = resoFeed(s.url, {
      source: { kind: 'reso', url: s.url, maxPageSize: 3, retries: 0 },
      deletes: { maxFraction: 0.5, graceHours: 24 },
    });
    expect((await env.sync(te, feed, { full: true })).counts.created).toBe(4);
    s.order = 'storage';
    s.records = s.records.map((r) => (r.ListingKey === 'K-3' ? { ...r, InternetEntireListingDisplayYN: false } : r));
    const report = await env.sync(te, feed, { full: true });
    expect(report.deletedByReason).toEqual({ 'rule:InternetEntireListingDisplayYN': 1 });
    expect(report.counts.waitingGrace).toBe(0);
    expect([...(await held()).keys()].sort()).toEqual(['FL-01', 'FL-02', 'FL-04']);
  });
});

describe('display settings: a local flag name, a disclaimer, purpose vow', () => {
  it('MLS Grid\'s Actris IDX opt-in (ACT_IDXOptInYN "1"/"0") read through display.flags; the disclaimer on every listing', async () => {
    const records = [
      flaggedRecord(1, { IDXParticipationYN: undefined, ACT_IDXOptInYN: '1' }),
      flaggedRecord(2, { IDXParticipationYN: undefined, ACT_IDXOptInYN: '0' }),
      // the standard field is not read once flags names another
      flaggedRecord(3, { IDXParticipationYN: false, ACT_IDXOptInYN: '1' }),
    ];
    const s = emulator.closeAfterTest(await startResoServer({ records }));
    const disclaimer = 'Information deemed reliable but not guaranteed.';
    const report = await env.sync(
      te,
      resoFeed(s.url, { display: { flags: { IDXParticipationYN: 'ACT_IDXOptInYN' }, disclaimer } }),
    );
    expect(report.outcome, report.message).toBe('ok');
    const now = await held();
    expect([...now.keys()].sort()).toEqual(['FL-01', 'FL-03']);
    for (const l of now.values())
      expect(Object.fromEntries(extension(l))).toMatchObject({
        Attribution: 'Listing courtesy of Hill Country Realty',
        Disclaimer: disclaimer,
      });
    expect(report.display?.hidden).toEqual({ IDXParticipationYN: 1 });
  });

  it('purpose vow shows a listing outside the IDX (IDXParticipationYN false), and hides one the seller keeps off the internet', async () => {
    const records = [
      flaggedRecord(1, { IDXParticipationYN: false }),
      flaggedRecord(2, { InternetEntireListingDisplayYN: false }),
    ];
    const s = emulator.closeAfterTest(await startResoServer({ records }));
    const report = await env.sync(te, resoFeed(s.url, { display: { purpose: 'vow' } }));
    expect([...(await held()).keys()]).toEqual(['FL-01']);
    expect(report.display).toMatchObject({ purpose: 'vow', hidden: { InternetEntireListingDisplayYN: 1 } });
  });
});

describe('the sold window (display.soldDays), with a fixed clock', () => {
  const at = (iso: string) => () => new Date(iso);

  it.each([
    ['an incremental pull that brings nothing new', false],
    ['a full pull of records unchanged (in step by their stamps)', true],
  ])('a Closed listing is shown until CloseDate + soldDays, then removed by the next run: %s', async (_what, full) => {
    const records = [flaggedRecord(1), flaggedRecord(2, { StandardStatus: 'Closed', CloseDate: '2025-03-01' })];
    const s = emulator.closeAfterTest(await startResoServer({ records }));
    const feed = resoFeed(s.url, { display: { soldDays: 30 } });

    const first = await env.sync(te, feed, { now: at('2025-03-10T12:00:00Z') });
    expect(first.counts.created).toBe(2);
    expect((await held()).get('FL-02')!.Status).toBe('Sold');

    const inside = await env.sync(te, feed, { now: at('2025-03-30T12:00:00Z'), full });
    expect(inside.counts.deleted).toBe(0);
    if (full) expect(inside.counts.unchangedByStamp).toBe(2);

    const past = await env.sync(te, feed, { now: at('2025-04-01T00:00:00Z'), full });
    expect(past.outcome, past.message).toBe('ok');
    expect(past.source.mode).toBe(full ? 'full' : 'incremental');
    expect(past.deletedByReason).toEqual({ 'rule:sold-window': 1 });
    expect(past.display?.hidden).toEqual({ 'sold-window': 1 });
    expect([...(await held()).keys()]).toEqual(['FL-01']);

    // and it stays gone: the next run plans nothing
    const after = await env.sync(te, feed, { now: at('2025-04-02T00:00:00Z'), full });
    expect([after.counts.created, after.counts.updated, after.counts.deleted]).toEqual([0, 0, 0]);
  });
});

describe('a CSV feed with display rules: read on this thread and on a feed thread, the same', () => {
  const columns = [
    ...COLUMNS,
    'Address',
    'StandardStatus',
    'InternetEntireListingDisplayYN',
    'InternetAddressDisplayYN',
    'ListOfficeName',
    'PrivateRemarks',
  ] as const;
  type FlaggedRow = Row & Partial<Record<(typeof columns)[number], string | number>>;
  const flagged = (i: number, patch: FlaggedRow = {}): FlaggedRow => ({
    ...row(i),
    Address: `${i} Elm Street`,
    StandardStatus: 'Active',
    InternetEntireListingDisplayYN: 'Y',
    InternetAddressDisplayYN: 'Y',
    ListOfficeName: 'Lone Star Homes',
    PrivateRemarks: `${SECRET_MARK}${i}`,
    ...patch,
  });
  const data = [
    flagged(1),
    flagged(2, { InternetEntireListingDisplayYN: 'N' }),
    flagged(3, { InternetAddressDisplayYN: 'N' }),
    flagged(4, { StandardStatus: 'Expired' }),
    flagged(5, { ListOfficeName: '' }),
    flagged(6),
  ];

  it('the same listings, counts and removals whichever thread parses the file', async () => {
    const outcomes = [];
    for (const threaded of [false, true]) {
      await te.reset();
      const e = await createSyncEnv();
      try {
        await writeFile(join(e.dir, 'feed.csv'), csv(data, columns));
        const feed = e.feed({
          display: { purpose: 'idx' },
          mapping: { fields: Object.fromEntries([...COLUMNS, 'Address'].map((c) => [c, c])) },
        });
        const threads = threaded
          ? { threadMinBytes: 0, threadAlways: true }
          : { threadMinBytes: Number.MAX_SAFE_INTEGER };
        const first = await e.sync(te, feed, threads);
        // the seller opts out of row 6 afterwards: the next run removes it by that rule
        await writeFile(
          join(e.dir, 'feed.csv'),
          csv([...data.slice(0, 5), flagged(6, { InternetEntireListingDisplayYN: 'N' })], columns),
        );
        const second = await e.sync(te, feed, threads);
        const listings = (await te.listings(SN)).map((l) => ({
          key: l.MLSNumber,
          address: l.Address ?? null,
          location: l.Location ?? null,
          attribution: extension(l).get('Attribution'),
        }));
        outcomes.push({
          first: [first.counts.created, first.display],
          second: [second.deletedByReason, second.counts.deleted],
          listings: listings.sort((a, b) => a.key.localeCompare(b.key)),
        });
      } finally {
        await e.cleanup();
      }
    }
    expect(outcomes[0]!.listings).toEqual([
      {
        key: 'MLS0001',
        address: '1 Elm Street',
        location: 'Central',
        attribution: 'Listing courtesy of Lone Star Homes',
      },
      { key: 'MLS0003', address: null, location: null, attribution: 'Listing courtesy of Lone Star Homes' },
    ]);
    expect(outcomes[0]!.second).toEqual([{ 'rule:InternetEntireListingDisplayYN': 1 }, 1]);
    expect(outcomes[1]).toEqual(outcomes[0]);
    for (const b of bodies) expect(b.body).not.toContain(SECRET_MARK);
  });
});
