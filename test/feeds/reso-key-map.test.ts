// The key map of a RESO read (src/feeds/reso/reso-key-map.ts), pure: what a gone record key resolves
// to, and what a read hands back to each lane's copy.
import { describe, expect, it } from 'vitest';
import { KeyMap } from '../../src/feeds/reso/reso-key-map.js';
import type { SourceState } from '../../src/feeds/types.js';

/** one lane's copies, read by point lookups only (SourceState.lookup): `copies` would load a namespace whole */
const copies = (record: Record<string, string>, listing: Record<string, string>): SourceState => ({
  lanes: ['mls'],
  copies: () => Promise.reject(new Error('the key map loads no namespace whole')),
  lookup: async (ns, keys) => [keys.map((k) => (ns === 'keys:record' ? record : listing)[k])],
});
const keyOf = (data: Record<string, unknown>) => String(data.ListingId ?? data.ListingKey);

describe('KeyMap', () => {
  it('resolves a record key only while both ways agree: a listing key another record took since is not the gone one', async () => {
    // K-1 was L-1, then L-1 went to K-9 (a ListingId reused): K-1 resolves to nothing
    const map = new KeyMap(
      copies({ 'K-1': 'L-1', 'K-2': 'L-2' }, { 'L-1': 'K-9', 'L-2': 'K-2' }),
      { keyOf },
      'ListingKey',
    );
    expect(await map.resolve('K-2')).toBe('L-2');
    expect(await map.resolve('K-1')).toBeUndefined();
    expect(await map.resolve('K-3')).toBeUndefined();
  });

  it('hands back only what differs from the copy: a new pair, a changed ListingId, a forgotten record', async () => {
    const map = new KeyMap(
      copies({ 'K-1': 'L-1', 'K-2': 'L-2' }, { 'L-1': 'K-1', 'L-2': 'K-2' }),
      { keyOf },
      'ListingKey',
    );
    await map.note('K-1', 'L-1'); // unchanged: nothing
    await map.note('K-3', 'L-3'); // new
    await map.noteRow({ ListingKey: 'K-2', ListingId: 'L-22' }, 'L-22'); // its ListingId changed
    expect(await map.resolve('K-3')).toBe('L-3'); // what this read learned resolves too
    await map.forget('K-1', 'L-1');
    await map.flush();
    expect(map.changes().get('mls')).toEqual([
      {
        ns: 'keys:record',
        set: [
          ['K-3', 'L-3'],
          ['K-2', 'L-22'],
        ],
        delete: ['K-1'],
      },
      {
        ns: 'keys:listing',
        set: [
          ['L-3', 'K-3'],
          ['L-22', 'K-2'],
        ],
        delete: ['L-1'],
      },
    ]);
    // K-2's old listing key still points at it in the copy, but K-2 resolves to its new one only
    expect(await map.resolve('K-2')).toBe('L-22');
  });
});
