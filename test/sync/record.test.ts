// A dry run's executor (src/sync/write/record.ts) takes the jobs a real one takes and sends none:
// it records them in its view and the change log, and counts them as the real one counts writes.
import { describe, expect, it } from 'vitest';
import { fingerprintListing } from '../../src/listing/fingerprint.js';
import type { ListingChange } from '../../src/sync/model/changes.js';
import type { PlannedDelete } from '../../src/sync/model/plan-types.js';
import { deleteJobs, writeJobs } from '../../src/sync/write/execute.js';
import { createRecordingExecutor } from '../../src/sync/write/record.js';
import { listing } from './helpers/listings.js';

const create = (key: string) => ({ key, listing: listing(key), fingerprint: fingerprintListing(listing(key)) });
const update = (key: string) => ({
  ...create(key),
  remoteId: 7,
  reason: 'fields' as const,
  changes: [{ field: 'SalePrice', old: 1, new: 2 }],
});
const del = (key: string, reason: PlannedDelete['reason'] = 'absent'): PlannedDelete => ({
  key,
  reason,
  deleteKey: reason === 'duplicate' ? '99' : key,
  keyType: reason === 'duplicate' ? 'NewOaks' : 'MLSNumber',
  remoteIds: [99],
});

describe('the recording executor', () => {
  it('records creates, updates and delete batches, counted as a real run counts them', async () => {
    const told: ListingChange[] = [];
    const executor = createRecordingExecutor({ changes: (c) => told.push(c) });
    await executor.run(writeJobs([create('A'), update('B')]));
    await executor.run(deleteJobs([del('C'), del('D', 'off-market'), del('B', 'duplicate')], 2));
    expect(executor.result).toMatchObject({
      created: 1,
      updated: 1,
      deleted: 2,
      duplicatesRemoved: 1,
      deletedKeys: ['C', 'D'],
      deletedByReason: { absent: 1, 'off-market': 1 },
      failures: [],
    });
    expect(executor.result.stopped).toBeUndefined();
    expect(executor.view).toEqual({
      creates: ['A'],
      updates: [{ key: 'B', reason: 'fields', changes: [{ field: 'SalePrice', old: 1, new: 2 }] }],
      deletes: [
        { key: 'C', reason: 'absent', keyType: 'MLSNumber', deleteKey: 'C' },
        { key: 'D', reason: 'off-market', keyType: 'MLSNumber', deleteKey: 'D' },
        { key: 'B', reason: 'duplicate', keyType: 'NewOaks', deleteKey: '99' },
      ],
    });
    expect(told.map((c) => [c.op, c.key])).toEqual([
      ['create', 'A'],
      ['update', 'B'],
      ['delete', 'C'],
      ['delete', 'D'],
      ['delete', 'B'],
    ]);
    // nothing is kept for a commit: a dry run commits nothing
    expect(executor.result.written.length).toBe(0);
  });

  it('ends aborted when its signal was, as a real run does', async () => {
    const ac = new AbortController();
    ac.abort();
    const executor = createRecordingExecutor({ signal: ac.signal });
    await executor.run(writeJobs([create('A')]));
    expect(executor.result.stopped).toBe('aborted');
    expect(executor.result.created).toBe(0);
  });
});
