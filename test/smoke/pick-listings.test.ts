// Which listings the chat check asks about: the same ones, in the same order, however the run's
// writes were answered (concurrent writes are acknowledged in any order).
import { describe, expect, it } from 'vitest';
import { pickListings } from '../../src/smoke/chat-check.js';
import type { ListingChange } from '../../src/sync/model/changes.js';

const created = (key: string): ListingChange => ({
  op: 'create',
  key,
  headline: { MLSNumber: key, Address: `${key} Oak St`, SalePrice: 100_000 },
});

describe('pickListings', () => {
  it('asks in key order whatever order the writes were acknowledged in', () => {
    const keys = ['MLS0004', 'MLS0002', 'MLS0005', 'MLS0001', 'MLS0003'];
    expect(pickListings(keys.map(created), 3).map((p) => p.key)).toEqual(['MLS0001', 'MLS0002', 'MLS0003']);
    expect(pickListings([...keys].reverse().map(created), 3).map((p) => p.key)).toEqual([
      'MLS0001',
      'MLS0002',
      'MLS0003',
    ]);
  });

  it('leaves out deletes, repeated keys and listings with nothing to ask about', () => {
    const changes: ListingChange[] = [
      created('B'),
      { op: 'delete', key: 'A', reason: 'absent' },
      created('B'),
      { op: 'create', key: 'C', headline: { MLSNumber: 'C' } },
      created('D'),
    ];
    expect(pickListings(changes, 5).map((p) => p.key)).toEqual(['B', 'D']);
  });
});
