// A feed of many rejected records holds no more than their keys: the change log gets each rejected
// record as it is read, the run keeps only the first KEPT_REJECTED for its report and counts the
// rest (omitted.rejected), and the printed report says how many there were. (A million of them took
// 2.2 GB before: every record's place and reasons were held to the end of the run.)
import { describe, expect, it } from 'vitest';
import { KEPT_REJECTED } from '../../src/sync/read/desired.js';
import type { ListingChange } from '../../src/sync/model/changes.js';
import { formatSyncReport } from '../../src/sync/report/report-format.js';
import { row, rows, SN, useEmulatorSync } from './helpers/feed.js';

const sync = useEmulatorSync();
const REJECTED = KEPT_REJECTED * 3 + 7;

describe('a feed of many rejected records', () => {
  it('tells the change log of each as it is read and keeps only the first for the report', async () => {
    const bad = Array.from({ length: REJECTED }, (_, i) => row(1000 + i, { Bedrooms: 'lots' }));
    await sync.env().writeFeed([...rows(2), ...bad]);
    const seen: ListingChange[] = [];
    const report = await sync.env().sync(sync.te(), undefined, { changes: (c) => void seen.push(c) });

    expect(report.counts).toMatchObject({ created: 2, rejected: REJECTED });
    const rejects = seen.filter((c) => c.op === 'reject');
    expect(rejects).toHaveLength(REJECTED);
    expect(new Set(rejects.map((c) => c.key)).size).toBe(REJECTED);
    expect(report.rejected).toHaveLength(KEPT_REJECTED);
    expect(report.rejected[0]?.key).toBe('MLS1000');
    expect(report.omitted).toEqual({ rejected: REJECTED - KEPT_REJECTED });
    expect(formatSyncReport(report)).toContain(`rejected records (${REJECTED}):`);
    expect((await sync.te().listings(SN)).length).toBe(2);
  });
});
