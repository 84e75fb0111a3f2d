// Issue 40, point 5 over real HTTP: a RESO server (test/helpers/reso-server.ts) whose `$metadata`
// and Lookup resource change between two reads (a field renamed, a lookup value added), checked by
// the dictionary check the worker's daily job and `feed drift` run (src/drift/). The check names
// both, and the `source-drift` alert reaches a webhook, while the listings a sync wrote before and
// after it are the same and nothing is rejected: the findings come before a sync fails. The server
// refuses a second Lookup read within 24 h (MLS Grid's rule), and the check, on a fixed clock, sends
// none: within the day it compares what the last read kept.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { alertDrift } from '../../src/alerts/index.js';
import { AlertsConfig } from '../../src/alerts/config-schema.js';
import { FeedConfig } from '../../src/config/schema.js';
import { checkDrift, DRIFT_NAMESPACE, keyOf } from '../../src/drift/drift-check.js';
import { sourceId, type DictionarySnapshot } from '../../src/drift/snapshot.js';
import type { ResoSource } from '../../src/feeds/config-schema.js';
import { driftLines } from '../../src/cli/feed-drift.js';
import { ConfigError } from '../../src/errors.js';
import { silentLogger } from '../../src/log.js';
import { sourceDrift } from '../../jobs/source-drift.js';
import { createCallCounter } from '../../src/api/call-counter.js';
import { startHttpReceiver } from '../alerts/receivers.js';
import { loadedConfig } from '../queue/helpers.js';
import { startResoServer, type ResoServer } from '../helpers/reso-server.js';
import type { Row } from '../helpers/odata-filter.js';
import { SN, useEmulatorSync } from '../sync/helpers/feed.js';
import { keyedResoRecords } from '../sync/helpers/reso-records.js';

const DAY = 24 * 3_600_000;
const emulator = useEmulatorSync();
let hook: Awaited<ReturnType<typeof startHttpReceiver>>;
beforeAll(async () => {
  hook = await startHttpReceiver();
});
afterAll(() => hook.close());

/** Lookup records as the Data Dictionary 2.0 Lookup resource has them (MLS Grid's carry their OriginatingSystemName). */
const lookup = (name: string, value: string, standard = value): Row => ({
  LookupKey: `${name}-${value}`,
  LookupName: name,
  LookupValue: value,
  StandardLookupValue: standard,
  LegacyODataValue: value.replace(/\s+/g, ''),
  OriginatingSystemName: 'testmls',
});
const STATUSES = [
  'Active',
  'Active Under Contract',
  'Pending',
  'Closed',
  'Coming Soon',
  'Expired',
  'Withdrawn',
  'Canceled',
  'Hold',
];
const LOOKUPS = [
  ...STATUSES.map((s) => lookup('StandardStatus', s)),
  ...['Square Feet', 'Square Meters', 'Acres'].map((u) => lookup('AreaUnits', u)),
];
const LOOKUP_NAMES = { StandardStatus: 'StandardStatus', LivingAreaUnits: 'AreaUnits' };

const feedOf = (server: ResoServer) =>
  FeedConfig.parse({
    name: 'mls',
    chatbot: SN,
    source: { kind: 'reso', url: server.url, maxPageSize: 50, retries: 0, timeoutMs: 5000, photosTimestampField: null },
    mapping: { preset: 'reso', fields: { Url: { template: 'https://broker.test/l/{ListingId}' } } },
    deletes: { maxFraction: 1, maxCount: 10_000 },
  });

/** The server as the MLS announces its change: LivingAreaUnits renamed LivingAreaUnit in $metadata, a new StandardStatus value in Lookup. */
function drift(server: ResoServer): void {
  server.metadataOf = (fields) =>
    new Map([...fields].map(([f, t]) => [f === 'LivingAreaUnits' ? 'LivingAreaUnit' : f, t]));
  server.lookupNames = { StandardStatus: 'StandardStatus', LivingAreaUnit: 'AreaUnits' };
  server.lookups = [...LOOKUPS, lookup('StandardStatus', 'Active Option Contract', 'Active Under Contract Plus')];
}

/** records whose LivingAreaUnits the server's $metadata annotates with the AreaUnits lookup */
const records = (n: number, seed: number) =>
  keyedResoRecords(n, seed).map((r) => ({ ...r, LivingAreaUnits: 'Square Feet' }));
const byKey = (listings: Array<Record<string, unknown>>) =>
  JSON.stringify([...listings].sort((a, b) => String(a.MLSNumber).localeCompare(String(b.MLSNumber))));
const propertyRequests = (server: ResoServer) => server.requests.filter((r) => r.url.includes('/Property')).length;

describe('the dictionary check against a RESO server whose $metadata and Lookup change', () => {
  it('a renamed field and a new lookup value raise source-drift, once a day at most, with no listing lost or rejected', async () => {
    let t = Date.parse('2026-11-27T03:00:00.000Z');
    const server = emulator.closeAfterTest(
      await startResoServer({
        records: records(10, 40),
        lookups: LOOKUPS,
        lookupNames: LOOKUP_NAMES,
        lookupEvery: DAY,
        clock: () => t,
      }),
    );
    const env = emulator.env();
    const te = emulator.te();
    const feed = feedOf(server);
    const deps = { store: env.store, ctx: { baseDir: env.dir, logger: silentLogger }, now: () => new Date(t) };
    const alerts = AlertsConfig.parse({
      channels: [{ kind: 'webhook', url: `${hook.url}/alerts`, secret: 'whsec-drift-1234' }],
    });
    const check = async () => {
      const report = await checkDrift(feed, deps);
      await alertDrift(
        env.store,
        alerts,
        { feed: 'mls', chatbot: SN },
        report.findings.map((f) => f.message),
        silentLogger,
        new Date(t),
      );
      return report;
    };

    const before = await env.sync(te, feed);
    expect(before.outcome).toBe('ok');
    expect(before.counts.created).toBe(10);
    const listings = byKey(await te.listings(SN));
    const pulled = propertyRequests(server);

    const first = await check();
    expect(first).toMatchObject({ read: true, firstRead: true, checked: { values: 'Lookup' }, findings: [] });
    expect(server.lookupRequests).toBe(1);

    drift(server);
    t += 3_600_000; // an hour later: the read of the day stands; nothing is sent
    const sameDay = await check();
    expect(sameDay).toMatchObject({ read: false, requests: 0, findings: [] });
    expect(server.lookupRequests).toBe(1);
    expect(server.metadataRequests).toBe(1);
    expect(driftLines(sameDay).join('\n')).toMatch(/read at most once a day; next read after 2026-11-28T03:00:00.000Z/);

    t += DAY; // the next day: read again, the change found
    const next = await check();
    expect(next.read).toBe(true);
    expect(server.lookupRequests).toBe(2);
    expect(next.findings.map((f) => [f.kind, f.field, f.to ?? f.value])).toEqual([
      ['renamed', 'LivingAreaUnits', 'LivingAreaUnit'],
      ['value', 'StandardStatus', 'Active Option Contract'],
    ]);
    expect(next.findings[0]!.message).toMatch(
      /^LivingAreaUnits looks renamed to LivingAreaUnit \(the same lookup AreaUnits\)/,
    );

    const delivered = hook.received.map(
      (r) => JSON.parse(r.body) as { condition: string; status: string; message: string; feed: string },
    );
    expect(delivered.map((a) => `${a.status} ${a.condition} ${a.feed}`)).toEqual(['firing source-drift mls']);
    expect(delivered[0]!.message).toContain('LivingAreaUnits looks renamed to LivingAreaUnit');
    expect(delivered[0]!.message).toContain('"Active Option Contract"');
    // the check read no record of the resource and wrote nothing
    expect(propertyRequests(server)).toBe(pulled);
    expect(byKey(await te.listings(SN))).toBe(listings);

    t += 3_600_000; // the alert is not sent again while the findings are the same
    await check();
    expect(hook.received).toHaveLength(1);

    const after = await env.sync(te, feed);
    expect(after.outcome).toBe('ok');
    expect(after.counts.rejected).toBe(0);
    expect(byKey(await te.listings(SN))).toBe(listings);
  });

  it('a server without a Lookup resource: $metadata alone is checked, and the output says so', async () => {
    let t = Date.parse('2026-11-27T03:00:00.000Z');
    const server = emulator.closeAfterTest(
      await startResoServer({ records: records(5, 41), lookupNames: LOOKUP_NAMES }),
    );
    const env = emulator.env();
    const deps = { store: env.store, ctx: { baseDir: env.dir, logger: silentLogger }, now: () => new Date(t) };
    const first = await checkDrift(feedOf(server), deps);
    expect(first).toMatchObject({ read: true, checked: { metadata: true, values: 'none' }, findings: [] });
    expect(driftLines(first).join('\n')).toMatch(
      /checked \$metadata only \(the server offers no Lookup resource and no enum types: lookup values not checked\)/,
    );
    expect(server.lookupRequests).toBe(0);

    server.metadataOf = (fields) => new Map([...fields].filter(([f]) => f !== 'PublicRemarks'));
    t += DAY;
    const next = await checkDrift(feedOf(server), deps);
    expect(next.findings.map((f) => f.message)).toEqual([
      'PublicRemarks is no longer in the Property entity type (it was at 2026-11-27T03:00:00.000Z); the mapping reads it for Description',
    ]);
    expect(server.lookupRequests).toBe(0);
  });

  it("a changed OriginatingSystemName: the last records carry another than the feed filters on (from the sync's mark; the check reads no record)", async () => {
    let t = Date.parse('2026-11-27T03:00:00.000Z');
    const server = emulator.closeAfterTest(
      await startResoServer({
        records: records(5, 43).map((r) => ({ ...r, OriginatingSystemName: 'actris' })),
        lookups: LOOKUPS,
        lookupNames: LOOKUP_NAMES,
        lookupEvery: DAY,
        clock: () => t,
      }),
    );
    const env = emulator.env();
    const te = emulator.te();
    const base = feedOf(server);
    const feed = { ...base, source: { ...base.source, originatingSystem: 'actris' } };
    const deps = { store: env.store, ctx: { baseDir: env.dir, logger: silentLogger }, now: () => new Date(t) };
    expect((await env.sync(te, feed)).outcome).toBe('ok');
    expect((await checkDrift(feed, deps)).findings).toEqual([]);

    // the MLS renamed itself: the records now carry another name
    for (const r of [...server.records]) server.touch(String(r.ListingKey), { OriginatingSystemName: 'austin' });
    expect((await env.sync(te, feed)).outcome).toBe('ok');
    const pulled = propertyRequests(server);
    t += 3_600_000;
    const r = await checkDrift(feed, deps);
    expect(r.read).toBe(false);
    expect(r.findings).toEqual([
      {
        kind: 'system',
        value: 'austin',
        message:
          'the last records carried OriginatingSystemName "austin"; the feed filters on source.originatingSystem "actris"',
      },
    ]);
    expect(propertyRequests(server)).toBe(pulled);
  });

  it("the worker's job reads the source, raises source-drift naming the finding, and reads nothing again the same day", async () => {
    const server = emulator.closeAfterTest(
      await startResoServer({
        records: records(5, 42),
        lookups: [...LOOKUPS, lookup('StandardStatus', 'Auction')],
        lookupNames: LOOKUP_NAMES,
        lookupEvery: DAY,
      }),
    );
    const env = emulator.env();
    const yaml = [
      'api: { baseUrl: "http://127.0.0.1:9", secretKey: x, sessionKey: y }',
      `alerts: { channels: [{ kind: webhook, url: "${hook.url}/job", secret: whsec-drift-job-99 }] }`,
      'feeds:',
      `  - { name: mls2, chatbot: ${SN}, source: { kind: reso, url: "${server.url}", retries: 0 }, mapping: { preset: reso }, schedule: { cron: "0 * * * *" } }`,
    ].join('\n');
    const config = loadedConfig(yaml, env.dir);
    const ctx = {
      config,
      runtime: { api: emulator.te().client(), store: env.store },
      logger: silentLogger,
      signal: new AbortController().signal,
      jobId: 'drift-1',
      attempt: { made: 1, max: 1 },
      calls: createCallCounter(),
    };
    const report = await sourceDrift.process({ feed: 'mls2' }, ctx);
    expect(report.outcome).toBe('drift');
    expect(report.findings.map((f) => f.value)).toEqual(['Auction']);
    const job = hook.received
      .filter((r) => r.path === '/job')
      .map((r) => JSON.parse(r.body) as { condition: string; message: string });
    expect(job.map((a) => a.condition)).toEqual(['source-drift']);
    expect(job[0]!.message).toMatch(
      /StandardStatus value "Auction" \(lookup StandardStatus\) is listed by the server and no map of Status covers it/,
    );

    const again = await sourceDrift.process({ feed: 'mls2' }, ctx);
    expect(again).toMatchObject({ outcome: 'drift', read: false, requests: 0 });
    expect(server.lookupRequests).toBe(1);
  });
});

// Issue 49, point 7: a mapped lookup list of 1,000,000 values took 1.49 GB RSS, a 62 MB state entry
// and 314 MB of `feed drift --json`: every value was kept, twice (this read and the one before), and
// each one no map covered was a finding. Now a read keeps the first LOOKUP_VALUES_KEPT values of a
// list, counts and digests the rest, and the read before keeps no values: a change past the values
// kept is found by the list's digest.
describe('a lookup list longer than the values a read keeps', () => {
  it('keeps 1,000 of 5,009 values, says so, stores a bounded entry, and finds a change past them by the digest', async () => {
    let t = Date.parse('2026-11-27T03:00:00.000Z');
    const many = (respelled?: number) => [
      ...LOOKUPS,
      ...Array.from({ length: 5000 }, (_, i) =>
        lookup('StandardStatus', i === respelled ? `Local ${i} (new)` : `Local ${i}`),
      ),
    ];
    const server = emulator.closeAfterTest(
      await startResoServer({ records: records(5, 49), lookups: many(), lookupNames: LOOKUP_NAMES, maxPageSize: 1000 }),
    );
    const env = emulator.env();
    const feed = feedOf(server);
    const deps = { store: env.store, ctx: { baseDir: env.dir, logger: silentLogger }, now: () => new Date(t) };
    const entry = async () => (await env.store.get(DRIFT_NAMESPACE, keyOf(feed.source as ResoSource)))!;

    const first = await checkDrift(feed, deps);
    expect(first.capped).toEqual([{ lookup: 'StandardStatus', values: 5009, compared: 1000 }]);
    expect(first.findings.filter((f) => f.kind === 'value').length).toBeLessThanOrEqual(1000);
    expect(driftLines(first).join('\n')).toContain(
      'lookup StandardStatus lists 5009 values: its first 1000 compared with the mapping, 4009 more counted',
    );
    const kept = JSON.parse(await entry()) as { current: DictionarySnapshot };
    expect(kept.current.lookups.StandardStatus).toHaveLength(1000);
    expect(kept.current.lookupSizes?.StandardStatus?.values).toBe(5009);
    // every value kept was about 70 bytes: 5,009 of them, 350 KB
    expect((await entry()).length).toBeLessThan(150_000);

    server.lookups = many(4500);
    t += DAY;
    const next = await checkDrift(feed, deps);
    expect(next.read).toBe(true);
    expect(next.findings.filter((f) => f.kind === 'values').map((f) => f.message)).toEqual([
      'lookup StandardStatus changed since 2026-11-27T03:00:00.000Z (5009 values then, 5009 now); only its first 1000 are compared with the mapping, so the change may lie among the others',
    ]);
    // the read before keeps no values
    expect((await entry()).length).toBeLessThan(150_000);
  });
});

// Issue 53 point 2: `feed drift` reads now when an operator runs it (it read at most once in 24 h for
// every server, so a change at the source went unseen the same day); `--stored` compares the last
// read kept and sends nothing; the worker's check keeps its daily rhythm; a vendor whose
// documentation limits Lookup reads (MLS Grid, once a day) keeps that limit. Issue 54 point 7: Media,
// a navigation property the server declares, is not "not offered". Every request counted at the server.
describe('drift on demand', () => {
  const findingsOf = (r: { findings: Array<{ kind: string; field?: string; to?: string; value?: string }> }) =>
    r.findings.map((f) => [f.kind, f.field, f.to ?? f.value]);
  const RENAMED_AND_VALUE = [
    ['renamed', 'LivingAreaUnits', 'LivingAreaUnit'],
    ['value', 'StandardStatus', 'Active Option Contract'],
  ];

  it('names a renamed field and a new lookup value minutes after a previous check, same day, same state; --stored sends nothing', async () => {
    let t = Date.parse('2026-12-06T03:00:00.000Z');
    const server = emulator.closeAfterTest(
      await startResoServer({ records: records(10, 53), lookups: LOOKUPS, lookupNames: LOOKUP_NAMES }),
    );
    const env = emulator.env();
    const te = emulator.te();
    const feed = feedOf(server);
    const deps = { store: env.store, ctx: { baseDir: env.dir, logger: silentLogger }, now: () => new Date(t) };
    expect((await env.sync(te, feed)).outcome).toBe('ok');
    const listings = byKey(await te.listings(SN));

    let sent = server.received;
    const first = await checkDrift(feed, deps, 'now');
    expect(first).toMatchObject({ how: 'now', read: true, firstRead: true, findings: [] });
    // Media (and OpenHouse) are navigation properties the server declares: neither is "not offered"
    expect(first.notOffered).not.toContain('Media');
    expect(driftLines(first).join('\n')).not.toMatch(/not offered.*Media/);
    expect(first.requests).toBe(server.received - sent);
    expect(first.requests).toBe(2); // $metadata and one page of Lookup

    drift(server);
    t += 5 * 60_000; // minutes later, the same day, the same state
    sent = server.received;
    const next = await checkDrift(feed, deps, 'now');
    expect(next).toMatchObject({ how: 'now', read: true, firstRead: false });
    expect(findingsOf(next)).toEqual(RENAMED_AND_VALUE);
    expect(next.requests).toBe(server.received - sent);
    expect(driftLines(next).join('\n')).toContain('read now (2 requests)');

    // --stored: the last read kept, compared again; not one request reaches the server
    sent = server.received;
    const stored = await checkDrift(feed, deps, 'stored');
    expect(server.received - sent).toBe(0);
    expect(stored).toMatchObject({ how: 'stored', read: false, requests: 0, readAt: next.readAt });
    expect(findingsOf(stored)).toEqual(RENAMED_AND_VALUE);
    expect(driftLines(stored).join('\n')).toContain('--stored: no request sent');

    // read again minutes later: the rename still stands (the field is not "not offered" now that the read before lacks it too)
    t += 5 * 60_000;
    const third = await checkDrift(feed, deps, 'now');
    expect(third.read).toBe(true);
    expect(findingsOf(third)).toEqual(RENAMED_AND_VALUE);
    expect(third.notOffered).not.toContain('LivingAreaUnits');

    // the worker's scheduled check keeps its daily rhythm: within the day it compares the last read, sending nothing
    sent = server.received;
    const worker = await checkDrift(feed, deps);
    expect(worker).toMatchObject({ how: 'due', read: false, requests: 0 });
    expect(server.received - sent).toBe(0);
    expect(findingsOf(worker)).toEqual(RENAMED_AND_VALUE);
    // the checks wrote nothing
    expect(byKey(await te.listings(SN))).toBe(listings);
  });

  it('--stored with no read kept sends nothing and says how to read one (a usage error: exit 2)', async () => {
    const server = emulator.closeAfterTest(
      await startResoServer({ records: records(3, 56), lookups: LOOKUPS, lookupNames: LOOKUP_NAMES }),
    );
    const env = emulator.env();
    const deps = { store: env.store, ctx: { baseDir: env.dir, logger: silentLogger } };
    const err = await checkDrift(feedOf(server), deps, 'stored').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).toMatch(/no read of .* is kept yet .*run feed drift without --stored/);
    expect(server.received).toBe(0);
  });

  it("a read an earlier feedsync kept under the source's URL is read, and moved under a key that holds no part of it", async () => {
    const server = emulator.closeAfterTest(
      await startResoServer({ records: records(3, 27), lookups: LOOKUPS, lookupNames: LOOKUP_NAMES }),
    );
    drift(server);
    const env = emulator.env();
    const feed = feedOf(server);
    const source = feed.source as ResoSource;
    const deps = { store: env.store, ctx: { baseDir: env.dir, logger: silentLogger } };
    const first = await checkDrift(feed, deps, 'now');
    // as an earlier feedsync kept it: under the sourceId, the service root's URL in it
    const entry = (await env.store.get(DRIFT_NAMESPACE, keyOf(source)))!;
    await env.store.apply([{ ns: DRIFT_NAMESPACE, set: [[sourceId(source), entry]], delete: [keyOf(source)] }]);

    const sent = server.received;
    const stored = await checkDrift(feed, deps, 'stored');
    expect(server.received - sent).toBe(0);
    expect(stored).toMatchObject({ read: false, readAt: first.readAt });
    expect(findingsOf(stored)).toEqual(findingsOf(first));
    expect([...(await env.store.getAll(DRIFT_NAMESPACE)).keys()]).toEqual([keyOf(source)]);
    expect(keyOf(source)).not.toContain(new URL(server.url).host);
  });

  it('a first read names a likely rename: a mapped field the server lacks, beside a field whose lookup values its map covers', async () => {
    const server = emulator.closeAfterTest(
      await startResoServer({ records: records(5, 54), lookups: LOOKUPS, lookupNames: LOOKUP_NAMES }),
    );
    drift(server);
    const env = emulator.env();
    const deps = { store: env.store, ctx: { baseDir: env.dir, logger: silentLogger } };
    const first = await checkDrift(feedOf(server), deps, 'now');
    expect(first.firstRead).toBe(true);
    expect(first.notOffered).not.toContain('LivingAreaUnits');
    expect(findingsOf(first)).toEqual(RENAMED_AND_VALUE);
    expect(first.findings[0]!.message).toBe(
      'LivingAreaUnits looks renamed to LivingAreaUnit (its lookup AreaUnits: 3 of its 3 values are ones the map of AreaUnit covers); the mapping reads LivingAreaUnits for BuildingArea, AreaUnit',
    );
  });

  it("a vendor that limits Lookup reads keeps its limit: $metadata read now, the Lookup values of the day's read compared until it is up", async () => {
    let t = Date.parse('2026-12-06T03:00:00.000Z');
    const server = emulator.closeAfterTest(
      await startResoServer({
        records: records(5, 55),
        lookups: LOOKUPS,
        lookupNames: LOOKUP_NAMES,
        lookupEvery: DAY, // the server refuses a second Lookup read within the day with a 429
        clock: () => t,
      }),
    );
    const base = feedOf(server);
    const feed = { ...base, source: { ...base.source, vendor: 'mlsgrid', originatingSystem: 'testmls' } } as FeedConfig;
    const env = emulator.env();
    const deps = { store: env.store, ctx: { baseDir: env.dir, logger: silentLogger }, now: () => new Date(t) };
    const first = await checkDrift(feed, deps, 'now');
    expect(first).toMatchObject({ read: true, findings: [], checked: { values: 'Lookup' } });
    expect(first.lookups).toBeUndefined();
    expect(server.lookupRequests).toBe(1);

    drift(server);
    t += 5 * 60_000;
    const next = await checkDrift(feed, deps, 'now');
    expect(server.metadataRequests).toBe(2);
    expect(server.lookupRequests).toBe(1);
    expect(next.requests).toBe(1);
    // the rename is in $metadata, read now; the new value waits for the next Lookup read
    expect(findingsOf(next)).toEqual([RENAMED_AND_VALUE[0]]);
    expect(next.lookups).toEqual({
      readAt: '2026-12-06T03:00:00.000Z',
      nextReadAfter: '2026-12-07T03:00:00.000Z',
      limit: 'MLS Grid API 2.0 asks that its Lookup resource be read at most once in 24 h',
    });
    expect(driftLines(next).join('\n')).toContain(
      'lookup values as read at 2026-12-06T03:00:00.000Z: MLS Grid API 2.0 asks that its Lookup resource be read at most once in 24 h (next read after 2026-12-07T03:00:00.000Z)',
    );

    t += DAY; // the day is up: the Lookup resource is read again, the new value found
    const later = await checkDrift(feed, deps, 'now');
    expect(server.lookupRequests).toBe(2);
    expect(later.lookups).toBeUndefined();
    expect(findingsOf(later)).toEqual(RENAMED_AND_VALUE);
  });
});
