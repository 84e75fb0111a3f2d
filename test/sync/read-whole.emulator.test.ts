// Invariant 1 over HTTP against the emulator: a listing is deleted only when the feed was read whole
// and positively lacks its key. Each case syncs a feed, breaks it, and shows that nothing was
// deleted (with --force too), that the dry run reports the outcome the real run has, and that
// the record the reader could still key keeps its listing.
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import type { FeedConfig } from '../../src/config/schema.js';
import type { SyncReport } from '../../src/sync/index.js';
import { formatSyncReport } from '../../src/sync/report/report-format.js';
import type { TestEmulator } from '../helpers/emulator.js';
import { startFeedServer } from '../helpers/feed-server.js';
import { startResoServer } from '../helpers/reso-server.js';
import { generateResoRecords } from '../../fixtures/generate.js';
import { COLUMNS, csv, requests, rows, SN, type SyncEnv, total, useEmulatorSync } from './helpers/feed.js';

let te: TestEmulator;
let env: SyncEnv;
const emulator = useEmulatorSync((t, e) => {
  te = t;
  env = e;
});

const deleteCalls = async () => total(await requests(te, 'RealEstateDelete'));
const keysOf = async (sn = SN) => (await te.listings(sn)).map((l) => l.MLSNumber).sort();

/** The dry run, the real run and the real run with --force: what each reports, and that none deleted. */
async function runAll(
  feed: FeedConfig,
  sync = (opts: { dryRun?: boolean; force?: boolean }) => env.sync(te, feed, opts),
): Promise<[SyncReport, SyncReport, SyncReport]> {
  const before = await deleteCalls();
  const dry = await sync({ dryRun: true });
  const real = await sync({});
  const forced = await sync({ force: true });
  expect(await deleteCalls()).toBe(before);
  for (const r of [dry, real, forced]) {
    expect(r.source.complete).toBe(false);
    expect(r.counts.deleted).toBe(0);
    expect(r.outcome).not.toBe('ok');
  }
  expect(dry.outcome).toBe(real.outcome);
  return [dry, real, forced];
}

describe('a feed that was not read whole deletes nothing, forced or not', () => {
  it('austin.csv cut at 95%: the cut row keeps its listing (ATX1000285), nothing is deleted', async () => {
    const fixtures = fileURLToPath(new URL('../../fixtures/', import.meta.url));
    const demo = await loadConfig(`${fixtures}demo.yaml`);
    const austin = demo.config.feeds.find((f) => f.name === 'austin-csv')!;
    const feed: FeedConfig = {
      ...austin,
      chatbot: SN,
      source: { ...austin.source, path: 'austin.csv' } as FeedConfig['source'],
    };
    const whole = await readFile(`${fixtures}feeds/austin.csv`);
    await env.writeFeed(whole.toString('utf8'), 'austin.csv');
    const first = await env.sync(te, feed);
    expect(first.source.complete).toBe(true);
    const before = await keysOf();
    expect(before).toContain('ATX1000285');

    const cut = whole.subarray(0, Math.floor(whole.length * 0.95));
    await env.writeFeed(cut.toString('utf8'), 'austin.csv');
    const [dry, real] = await runAll(feed);
    expect(dry.source.error).toMatch(/austin\.csv:\d+/);
    expect(real.rejected.some((r) => r.key === 'ATX1000285')).toBe(true);
    expect(await keysOf()).toEqual(before);
  });

  it('mixed line endings: rows ending in a bare CR are read as rows, not merged into one', async () => {
    await env.writeFeed(rows(6));
    await env.sync(te);
    const lines = csv(rows(6)).trimEnd().split('\n');
    // header and M1 end in CRLF, M2–M4 in a bare CR, the rest in LF
    const mixed = `${lines[0]}\r\n${lines[1]}\r\n${lines[2]}\r${lines[3]}\r${lines[4]}\r${lines[5]}\n${lines[6]}\n`;
    await env.writeFeed(mixed);
    const report = await env.sync(te, env.feed(), { dryRun: true });
    expect(report.counts).toMatchObject({ feedRecords: 6, valid: 6, rejected: 0 });
    expect(report.source.complete).toBe(true);
    expect(report.plan!.deletes).toEqual([]);
  });

  it('a row with the wrong number of columns: its key is kept, and the feed is not read whole', async () => {
    await env.writeFeed(rows(8));
    await env.sync(te);
    const lines = csv(rows(8)).trimEnd().split('\n');
    // M3 and M4 run together on one line (a lost line ending); M8 is gone from the feed
    const broken =
      [lines[0], lines[1], lines[2], `${lines[3]},${lines[4]}`, lines[5], lines[6], lines[7]].join('\n') + '\n';
    await env.writeFeed(broken);
    const [, real] = await runAll(env.feed());
    expect(real.rejected[0]).toMatchObject({ key: 'MLS0003', position: { line: 4 } });
    expect(await keysOf()).toHaveLength(8);
  });

  it('a record rejected without a readable key blocks the deletes of the run', async () => {
    await env.writeFeed(rows(6));
    await env.sync(te);
    // M6 is gone, and a keyless record stands where it might be
    await env.writeFeed([...rows(5), { ...rows(1, 6)[0]!, MLSNumber: '' }]);
    const [, real] = await runAll(env.feed());
    expect(real.source.error).toMatch(/key/);
    expect(await keysOf()).toHaveLength(6);
    // the report for people says why once, not twice
    const text = formatSyncReport(real);
    expect(text.split(real.source.error!).length - 1).toBe(1);
  });

  it('a feed answering 401 deletes nothing, with --force too', async () => {
    await env.writeFeed(rows(5));
    await env.sync(te);
    const server = await startFeedServer({
      status: 401,
      body: '{"error":"bad token"}',
      contentType: 'application/json',
    });
    emulator.closeAfterTest(server);
    const feed = env.feed({ source: { kind: 'csv', url: server.url, bearerToken: 'wrong-token', retries: 0 } });
    const [dry, real, forced] = await runAll(feed);
    for (const r of [dry, real, forced]) expect(r.source.error).toContain('401');
    expect(await keysOf()).toHaveLength(5);
  });

  it('a RESO pull that lists one record twice (the pages shifted) deletes nothing', async () => {
    const records = generateResoRecords(12, { seed: 5 }).filter((r) => r.MlgCanView !== false);
    const reso = await startResoServer({ records, maxPageSize: 5 });
    emulator.closeAfterTest(reso);
    const feed = env.feed({
      source: { kind: 'reso', url: reso.url, retries: 0 },
      mapping: { preset: 'reso', fields: { Url: { template: 'https://broker.test/l/{ListingId}' } } },
      deletes: { maxFraction: 1 },
    });
    await env.sync(te, feed);
    const before = await keysOf();
    // the last record is gone, and one record comes twice (as when a page boundary shifts)
    reso.records = [...records.slice(0, -1), { ...records[2]! }];
    const [, real] = await runAll(feed);
    expect(real.source.error).toMatch(/came twice in one pull/);
    expect(await keysOf()).toEqual(before);
  });
});

describe('COLUMNS', () => {
  it('has the key first (the tests above cut rows by column)', () => {
    expect(COLUMNS[0]).toBe('MLSNumber');
  });
});
