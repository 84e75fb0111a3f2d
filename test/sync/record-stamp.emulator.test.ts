// Record stamps (src/sync/plan/record-stamp.ts): a rerun does not map a record whose stamp shows it in
// step since the last run, and the shortcut never hides a write the full rule would make. Each case
// runs the same feed twice more: once with the stamps stored, once with them removed (the full
// rule), against the same chatbot state, and both must write the same. Over HTTP to the emulator.
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import type { FeedConfig } from '../../src/config/schema.js';
import { fingerprintNamespace, SEAL_NAMESPACE, stampNamespace } from '../../src/sync/model/state-names.js';
import { requests, row, rows, SN, total, useEmulatorSync, type Row } from './helpers/feed.js';

const sync = useEmulatorSync();

const writeCounts = async () => {
  const te = sync.te();
  return {
    create: total(await requests(te, 'RealEstateCreate')),
    update: total(await requests(te, 'RealEstateUpdate')),
    delete: total(await requests(te, 'RealEstateDelete')),
  };
};

/** Runs `feed`, returning its report and the writes it made (`THREADED`: the feed read by its thread, feed-thread.ts, stamps or not). */
async function run(
  feed?: FeedConfig,
  opts: { full?: boolean; threadMinBytes?: number; threadAlways?: boolean; seal?: boolean } = {},
) {
  const before = await writeCounts();
  const report = await sync.env().sync(sync.te(), feed, opts);
  const after = await writeCounts();
  return {
    report,
    writes: {
      create: after.create - before.create,
      update: after.update - before.update,
      delete: after.delete - before.delete,
    },
  };
}

/**
 * The run `change` leads to, with the stamps as stored and with none (the full rule), from the
 * same state: the chatbot's listings and the stored state are put back between the two.
 */
async function bothWays(
  change: () => Promise<void>,
  feed?: FeedConfig,
  stampedOpts: { threadMinBytes?: number; threadAlways?: boolean } = {},
) {
  const [te, env] = [sync.te(), sync.env()];
  const listings = await te.listings(SN);
  const ns = [fingerprintNamespace('test-feed'), stampNamespace('test-feed')];
  const saved = await Promise.all(ns.map((n) => env.store.getAll(n)));
  await change();
  const stamped = await run(feed, stampedOpts);

  // back to the state before, stamps removed
  await te.api.deleteListings({
    SerialNumber: SN,
    Keys: (await te.listings(SN)).map((l) => String(l.ID)),
    KeyType: 'NewOaks',
  });
  for (const l of listings) {
    const { ID: _id, ...create } = l;
    await te.api.createListing(create);
  }
  for (const [i, n] of ns.entries()) {
    await env.store.delete(n, [...(await env.store.getAll(n)).keys()]);
    if (i === 0) await env.store.set(n, [...saved[i]!]);
  }
  await change();
  const full = await run(feed);
  return { stamped, full };
}

/** the feed read by its thread (a rerun's records in step by their stamps would otherwise be read here: sync-run.ts, mostlyMapped) */
const THREADED = { threadMinBytes: 0, threadAlways: true };

const EDITS: Array<[string, (rs: Row[]) => Row[]]> = [
  ['a changed record', (rs) => rs.map((r, i) => (i === 3 ? { ...r, SalePrice: 1 } : r))],
  ['a record repeated with another price (the later one wins)', (rs) => [...rs, { ...rs[2]!, SalePrice: 7 }]],
  ['a record repeated the same', (rs) => [...rs, rs[5]!]],
  ['a record dropped', (rs) => rs.slice(1)],
];

describe('record stamps', () => {
  it('a no-change rerun maps no record, and writes nothing: no call, no state but its seal, once', async () => {
    const env = sync.env();
    await env.writeFeed(rows(40));
    expect((await run()).report.counts).toMatchObject({ created: 40 });
    expect((await env.store.getAll(stampNamespace('test-feed'))).size).toBe(40);
    const apply = env.store.apply.bind(env.store);
    const applied: string[][] = [];
    env.store.apply = (ops) => (applied.push(ops.map((o) => o.ns)), apply(ops));
    const again = await run();
    // (the lane's seal: every record was in step by its stamp, and nothing changed; settle/seal.ts)
    expect(applied).toEqual([[SEAL_NAMESPACE]]);
    expect(again.writes).toEqual({ create: 0, update: 0, delete: 0 });
    expect(again.report.counts).toMatchObject({ unchanged: 40, unchangedByStamp: 40 });
    // the feed read by its thread: the same stamps, so the same rerun (read past its seal, which it lets go)
    const threaded = await run(undefined, { ...THREADED, seal: false });
    expect(applied).toEqual([[SEAL_NAMESPACE], [SEAL_NAMESPACE]]);
    expect(threaded.writes).toEqual({ create: 0, update: 0, delete: 0 });
    expect(threaded.report.counts).toMatchObject({ unchanged: 40, unchangedByStamp: 40 });
  });

  it.each<[string, (rs: Row[]) => Row[], string, { threadMinBytes?: number; threadAlways?: boolean }]>(
    EDITS.flatMap(([name, edit]) => [
      [name, edit, 'read here', {}],
      [name, edit, 'read by the feed thread', THREADED],
    ]),
  )('%s: the same writes with stamps as without (%s)', async (_name, edit, _how, how) => {
    const env = sync.env();
    const base = rows(12);
    await env.writeFeed(base);
    await run(undefined, how);
    const { stamped, full } = await bothWays(() => env.writeFeed(edit(base)).then(() => undefined), undefined, how);
    expect(stamped.writes).toEqual(full.writes);
    expect(stamped.report.counts).toMatchObject({
      ...full.report.counts,
      unchangedByStamp: stamped.report.counts.unchangedByStamp,
    });
    expect(stamped.report.counts.unchangedByStamp).toBeGreaterThan(0);
    expect(full.report.counts.unchangedByStamp).toBe(0);
  });

  it('a listing edited behind its back is put right although its record did not change', async () => {
    const [te, env] = [sync.te(), sync.env()];
    await env.writeFeed(rows(6));
    await run();
    const { stamped, full } = await bothWays(async () => {
      const { ID: _id, ...l } = (await te.listings(SN)).find((x) => x.MLSNumber === 'MLS0002')!;
      await te.api.updateListing({ ...l, SalePrice: 5, Key: 'MLS0002', KeyType: 'MLSNumber' });
    });
    expect(stamped.writes).toEqual({ create: 0, update: 1, delete: 0 });
    expect(full.writes).toEqual(stamped.writes);
    expect((await te.listings(SN)).find((x) => x.MLSNumber === 'MLS0002')?.SalePrice).toBe(302000);
  });

  it('a copy made behind its back (a duplicate) is found although its record did not change', async () => {
    const [te, env] = [sync.te(), sync.env()];
    await env.writeFeed(rows(6));
    await run();
    const { stamped, full } = await bothWays(async () => {
      const { ID: _id, ...l } = (await te.listings(SN)).find((x) => x.MLSNumber === 'MLS0004')!;
      await te.api.createListing(l);
    });
    expect(stamped.writes).toEqual({ create: 0, update: 0, delete: 1 });
    expect(full.writes).toEqual(stamped.writes);
    expect((await te.listings(SN)).filter((x) => x.MLSNumber === 'MLS0004')).toHaveLength(1);
  });

  it('a changed mapping maps every record again and writes what it changes', async () => {
    const env = sync.env();
    await env.writeFeed(rows(8));
    await run();
    const feed = env.feed({
      mapping: { fields: { ...env.feed().mapping.fields, City: { from: 'City', transform: 'uppercase' } } },
    });
    const { stamped, full } = await bothWays(async () => {}, feed);
    expect(stamped.report.counts).toMatchObject({ updated: 8, unchangedByStamp: 0 });
    expect(full.writes).toEqual(stamped.writes);
    expect((await sync.te().listings(SN)).every((l) => l.City === 'AUSTIN')).toBe(true);
  });

  it('a mapping that reads the clock for a compared field keeps no stamps; one whose clock field is ignored does', async () => {
    const env = sync.env();
    await env.writeFeed(rows(5, 1).map((r) => ({ ...r, DaysOnMarket: '2026-01-01' })));
    const fields = { ...env.feed().mapping.fields, DaysOnMarket: { from: 'DaysOnMarket', transform: 'days-since' } };
    const clock = env.feed({ mapping: { fields } });
    await run(clock);
    expect((await run(clock)).report.counts).toMatchObject({ unchanged: 5, unchangedByStamp: 0 });
    expect((await env.store.getAll(stampNamespace('test-feed'))).size).toBe(0);
    const ignored = env.feed({ mapping: { fields }, ignore: ['DaysOnMarket'] });
    await run(ignored);
    expect((await run(ignored)).report.counts).toMatchObject({ unchanged: 5, unchangedByStamp: 5 });
  });

  it('a record that meets an unmapped value is mapped every run, so every report names the value', async () => {
    const env = sync.env();
    await env.writeFeed([...rows(3), row(4, { PropertyType: 'Tiny House' })]);
    const feed = env.feed({
      mapping: {
        fields: {
          ...env.feed().mapping.fields,
          PropertyType: { from: 'PropertyType', map: { 'Single Family': 'Single Family' } },
        },
      },
    });
    await run(feed);
    for (let i = 0; i < 2; i++) {
      const { report } = await run(feed);
      expect(report.unmapped).toEqual([{ field: 'PropertyType', value: 'Tiny House', count: 1 }]);
      expect(report.counts).toMatchObject({ unchanged: 4, unchangedByStamp: 3 });
    }
  });

  it.each(['zillow-xml', 'listhub-xml', 'reso-replay'])(
    'the demo feed %s (XML, RESO): a rerun maps none of its valid records and writes nothing',
    async (name) => {
      const demo = await loadConfig(fileURLToPath(new URL('../../fixtures/demo.yaml', import.meta.url)));
      const feed: FeedConfig = { ...demo.config.feeds.find((f) => f.name === name)!, name: 'test-feed', chatbot: SN };
      // the demo's paths are relative to its own folder
      if ('path' in feed.source && feed.source.path)
        feed.source = {
          ...feed.source,
          path: fileURLToPath(new URL(`../../fixtures/${feed.source.path}`, import.meta.url)),
        };
      const first = await run(feed);
      expect(first.report.counts.created).toBeGreaterThan(0);
      // RESO: a full pull again (an incremental one would read nothing new)
      const again = await run(feed, { full: true });
      expect(again.writes).toEqual({ create: 0, update: 0, delete: 0 });
      expect(again.report.counts.unchangedByStamp).toBe(again.report.counts.valid);
      expect(again.report.counts.valid).toBe(first.report.counts.created);
    },
  );
});
