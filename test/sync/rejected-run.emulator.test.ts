// A run judged by what it achieved (sync/settle/rejection.ts): a feed read whole whose records are
// all rejected, or whose valid records fell below feeds[].minValidFraction of the last good full
// run, ends `rejected`: nothing is deleted, the mark and the reference stay, and the feed restored
// syncs with no write.
import { describe, expect, it } from 'vitest';
import { GOOD_VALID_NAMESPACE } from '../../src/sync/model/state-names.js';
import { formatSyncReport } from '../../src/sync/report/report-format.js';
import { row, rows, SN, useEmulatorSync, writeCounts } from './helpers/feed.js';

const sync = useEmulatorSync();

describe('a run that achieved nothing', () => {
  it('ends rejected when every record is rejected, deletes nothing, and the restored feed writes nothing', async () => {
    const env = sync.env();
    await env.writeFeed(rows(10));
    expect((await env.sync(sync.te())).outcome).toBe('ok');
    expect(await env.store.get(GOOD_VALID_NAMESPACE, 'test-feed')).toBe('10');
    const before = await writeCounts(sync.te());

    await env.writeFeed(rows(10).map((r) => ({ ...r, Bedrooms: 'lots' })));
    const report = await env.sync(sync.te());
    expect(report.outcome).toBe('rejected');
    expect(report.counts).toMatchObject({ feedRecords: 10, valid: 0, rejected: 10, deleted: 0 });
    expect(report.message).toBe(
      `none of the feed's 10 record(s) is valid: Bedrooms number: not a number (got "lots") × 10 (first: feed.csv:2); nothing was deleted, and the last good sync stays as it was`,
    );
    expect(formatSyncReport(report).split('\n')[0]).toBe(
      `feed test-feed → chatbot ${SN}: rejected — ${report.message}`,
    );
    expect(await sync.te().listings(SN)).toHaveLength(10);
    expect(await writeCounts(sync.te())).toEqual(before);
    // the reference stays the last good run's
    expect(await env.store.get(GOOD_VALID_NAMESPACE, 'test-feed')).toBe('10');

    await env.writeFeed(rows(10));
    const restored = await env.sync(sync.te());
    expect(restored.outcome).toBe('ok');
    expect(await writeCounts(sync.te())).toEqual(before);
  });

  // (it ended `partial`, exit 4: each rejected record's key unreadable made the read "not whole", and
  // a read not whole was never judged; `feed preview` of the same feed said rejected, exit 6)
  it("ends rejected, not partial, when every record is rejected without a key (a mapping that is not the feed's)", async () => {
    const env = sync.env();
    await env.writeFeed(rows(10));
    expect((await env.sync(sync.te())).outcome).toBe('ok');
    const before = await writeCounts(sync.te());

    await env.writeFeed(rows(10).map((r) => ({ ...r, MLSNumber: '', Bedrooms: 'lots' })));
    const report = await env.sync(sync.te());
    expect(report.outcome).toBe('rejected');
    expect(report.counts).toMatchObject({ feedRecords: 10, valid: 0, rejected: 10, deleted: 0 });
    expect(report.message).toMatch(/^none of the feed's 10 record\(s\) is valid: /);
    expect(await sync.te().listings(SN)).toHaveLength(10);
    expect(await writeCounts(sync.te())).toEqual(before);
    expect(await env.store.get(GOOD_VALID_NAMESPACE, 'test-feed')).toBe('10');
  });

  it('ends rejected when rejections bring the valid records below minValidFraction of the last good run, deleting nothing', async () => {
    const env = sync.env();
    await env.writeFeed(rows(10));
    expect((await env.sync(sync.te())).outcome).toBe('ok');

    // four valid records of ten, six rejected: 4 < 0.5 × 10
    const broken = [...rows(4), ...rows(6, 5).map((r) => ({ ...r, Bedrooms: 'lots' }))];
    await env.writeFeed(broken);
    const report = await env.sync(sync.te());
    expect(report.outcome).toBe('rejected');
    expect(report.message).toMatch(
      /^only 4 of the feed's 10 record\(s\) are valid, fewer than feeds\[\]\.minValidFraction 0\.5 of the 10 of the last good full run; 6 rejected: Bedrooms number: not a number \(got "lots"\) × 6 \(first: feed\.csv:6\)/,
    );
    expect(report.counts.deleted).toBe(0);
    expect(await sync.te().listings(SN)).toHaveLength(10);
    // off, or accepted with --force: the rejected records' listings are kept as they were
    expect((await env.sync(sync.te(), env.feed({ minValidFraction: 0 }))).outcome).toBe('ok');
    expect((await env.sync(sync.te(), undefined, { force: true })).outcome).toBe('ok');
    expect(await sync.te().listings(SN)).toHaveLength(10);
  });

  it('leaves a feed that only shrank (no record rejected) to the delete guard', async () => {
    const env = sync.env();
    await env.writeFeed(rows(10));
    expect((await env.sync(sync.te())).outcome).toBe('ok');
    await env.writeFeed(rows(4));
    const shrunk = await env.sync(sync.te());
    expect(shrunk.outcome).toBe('guard');
    expect(shrunk.counts.deleted).toBe(0);
    const forced = await env.sync(sync.te(), undefined, { force: true });
    expect(forced.outcome).toBe('ok');
    expect(forced.counts.deleted).toBe(6);
  });

  it('takes a first run with some valid records as it is: there is no good run to compare with', async () => {
    const env = sync.env();
    await env.writeFeed([
      ...rows(2),
      row(3, { Bedrooms: 'lots' }),
      row(4, { Bedrooms: 'lots' }),
      row(5, { Bedrooms: 'lots' }),
    ]);
    const report = await env.sync(sync.te());
    expect(report.outcome).toBe('ok');
    expect(report.counts).toMatchObject({ valid: 2, rejected: 3 });
  });
});
