// The progress a sync reports: writes done out of a total once the total is known (creates and
// updates when the feed is read, then the delete batches), so the progress line can show done/total.
import { describe, expect, it } from 'vitest';
import type { SyncProgress } from '../../src/sync/index.js';
import type { TestEmulator } from '../helpers/emulator.js';
import { rows, type SyncEnv, useEmulatorSync } from './helpers/feed.js';

let te: TestEmulator;
let env: SyncEnv;
useEmulatorSync((t, e) => {
  te = t;
  env = e;
});

describe('sync progress', () => {
  it('ends with done equal to the total of writes and delete batches', async () => {
    await env.writeFeed(rows(12));
    const first: SyncProgress[] = [];
    await env.sync(te, env.feed(), { onProgress: (p) => first.push(p) });
    const writes = first.filter((p) => p.phase === 'write');
    expect(writes.at(-1)).toMatchObject({ done: 12, total: 12 });

    // 2 updated, 4 gone: 2 delete batches of 3
    await env.writeFeed(rows(8).map((r, i) => (i < 2 ? { ...r, SalePrice: 1 + i } : r)));
    const second: SyncProgress[] = [];
    const report = await env.sync(te, env.feed(), { onProgress: (p) => second.push(p) });
    expect(report.counts).toMatchObject({ updated: 2, deleted: 4 });
    expect(second.filter((p) => p.phase === 'write').at(-1)).toMatchObject({ done: 4, total: 4 });
    for (const p of second) if (p.total !== undefined) expect(p.done).toBeLessThanOrEqual(p.total);
  });
});

describe('records read in the progress', () => {
  it('are counted before the first write is done, however small the feed', async () => {
    await env.writeFeed(rows(12));
    const seen: SyncProgress[] = [];
    await env.sync(te, env.feed(), { onProgress: (p) => seen.push(p) });
    const firstWrite = seen.findIndex((p) => p.phase === 'write');
    const firstRead = seen.findIndex((p) => p.phase === 'feed');
    expect(firstRead).toBeGreaterThanOrEqual(0);
    expect(firstRead).toBeLessThan(firstWrite);
    expect(seen.filter((p) => p.phase === 'feed').at(-1)).toMatchObject({ done: 12 });
  });

  it('are told whole once the read has ended, not only after the last write (a feed read in one burst)', async () => {
    // (12 records fit the pending window: all are read before the first is planned, so every write comes after the read)
    await env.writeFeed(rows(12));
    const seen: SyncProgress[] = [];
    await env.sync(te, env.feed(), { onProgress: (p) => seen.push(p) });
    const firstWrite = seen.findIndex((p) => p.phase === 'write');
    expect(
      seen
        .slice(0, firstWrite)
        .filter((p) => p.phase === 'feed')
        .at(-1),
    ).toMatchObject({ done: 12 });
  });
});
