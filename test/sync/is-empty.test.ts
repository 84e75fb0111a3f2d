// Emptiness of a map without its size (sync/util/collections.ts isEmpty): a stored namespace counts
// its keys in the state file at each `size` (state/stored-entries.ts); the lanes only ask whether it
// holds anything (lane-setup.ts, the display rules; lane-plan.ts, the sold windows).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createFileStore } from '../../src/state/file-store.js';
import { isEmpty } from '../../src/sync/util/collections.js';

/** a Map whose size cannot be asked */
class Uncounted<K, V> extends Map<K, V> {
  override get size(): number {
    throw new Error('size asked');
  }
}

describe('isEmpty', () => {
  it('answers as size === 0 for a stored namespace, empty, of one entry and beside a neighbour', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'feedsync-empty-'));
    const store = await createFileStore(join(dir, 'state.lmdb'));
    try {
      await store.set('fingerprints:a', [['K1', 'f1']]);
      await store.set('fingerprints:b', [
        ['K1', 'f1'],
        ['K2', 'f2'],
      ]);
      for (const ns of ['fingerprints:a', 'fingerprints:b', 'fingerprints:', 'fingerprints:c']) {
        const stored = await store.getAll(ns);
        expect(isEmpty(stored), ns).toBe(stored.size === 0);
      }
    } finally {
      await store.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('never asks the size', () => {
    expect(isEmpty(new Uncounted())).toBe(true);
    expect(isEmpty(new Uncounted([['K1', 'f1']]))).toBe(false);
  });
});
