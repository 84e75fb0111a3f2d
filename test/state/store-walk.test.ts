// The whole-file walk (src/state/store-walk.ts) costs a child process reading every entry: 0.25-0.3 s
// for 300k entries, paid by every new process (a cron `feedsync sync`, each run of a worker) where the
// file has not changed since feedsync itself last had it open. What the walk checked, and what a
// clean close left, is recorded beside the open lock; a file whose size, time and inode still match is
// not walked again, one that changed since (a copy over it, a write by another program, a run that
// died) is.
import { mkdtemp, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { EnvironmentError } from '../../src/errors.js';
import { createFileStore } from '../../src/state/file-store.js';
import { checkedRecordOf, walkStateFile } from '../../src/state/store-walk.js';

const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

async function storeWith(n: number): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'feedsync-walk-'));
  dirs.push(dir);
  const path = join(dir, 'state.lmdb');
  const store = await createFileStore(path);
  await store.set(
    'fp:a',
    Array.from({ length: n }, (_, i) => [`key-${i}`, `value-${i}`] as const),
  );
  await store.close();
  return path;
}

describe('the whole-file walk at open', () => {
  it('a file feedsync closed cleanly is known at the next open: not walked again', async () => {
    const path = await storeWith(2000);
    expect(await walkStateFile(path)).toBe('known');
  });

  it('a file changed since its clean close (its time moved) is walked again, and known after', async () => {
    const path = await storeWith(2000);
    const later = new Date(Date.now() + 5000);
    await utimes(path, later, later);
    expect(await walkStateFile(path)).toBe('walked');
    expect(await walkStateFile(path)).toBe('known');
  });

  it('a file written after its record (a run that died before its close) is walked at the next open', async () => {
    const path = await storeWith(2000);
    const record = await readFile(checkedRecordOf(path), 'utf8');
    const store = await createFileStore(path);
    await store.set('fp:a', [['key-x', 'changed']]);
    // the record as a run that died mid-write leaves it: the one from before its writes
    await writeFile(checkedRecordOf(path), record);
    expect(await walkStateFile(path)).toBe('walked');
    await store.close();
  });

  it('a file damaged after its clean close is refused, its record notwithstanding', async () => {
    const path = await storeWith(5000);
    const bytes = await readFile(path);
    const third = Math.floor(bytes.length / 3 / 4096) * 4096;
    bytes.fill(0xff, third, third * 2);
    await writeFile(path, bytes);
    const opened = await createFileStore(path, { waitMs: 600 }).then(
      (s) => s.close(),
      (e: unknown) => e,
    );
    expect(opened).toBeInstanceOf(EnvironmentError);
    expect(String((opened as Error).message)).toContain('is damaged');
  });
});
