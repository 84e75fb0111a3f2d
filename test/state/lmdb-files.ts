// State files for the tests of the header check (lmdb-header.test.ts, store-processes.test.ts): a
// store grown through commits of the shapes a sync makes, and the test's own reading of the two
// fields of LMDB's meta page it checks against (mdb.c's MDB_meta after the 24-byte page header).
import { createFileStore } from '../../src/state/file-store.js';

/** The page size and the bytes the newest meta page says are in use: (mm_last_pg + 1) × page size. */
export function headerOf(file: Buffer): { pageSize: number; inUse: number } {
  const pageSize = file.readUInt32LE(48);
  const meta = (at: number) => ({
    lastPage: Number(file.readBigUInt64LE(at + 144)),
    txnid: file.readBigUInt64LE(at + 152),
  });
  const [a, b] = [meta(0), meta(pageSize)];
  return { pageSize, inUse: ((a.txnid >= b.txnid ? a : b).lastPage + 1) * pageSize };
}

/**
 * `commits` commits to the store at `path`, in turn: new keys (growth), every value rewritten, 200
 * values of 5 KB set and deleted again in the same commit (pages taken and freed in one commit:
 * the file then ends short of its last page), a fifth of the keys deleted. `after` runs after each
 * commit, the store still open. Returns how many keys namespace `a` holds.
 */
export async function growStore(
  path: string,
  commits: number,
  after: () => Promise<void> = async () => {},
): Promise<number> {
  const store = await createFileStore(path);
  let next = 0;
  const live = new Set<number>();
  for (let c = 0; c < commits; c++) {
    if (c % 4 === 0) {
      const added = Array.from({ length: 3_000 }, () => next++);
      added.forEach((k) => live.add(k));
      await store.set(
        'a',
        added.map((k) => [`key-${k}`, `v${c}`] as const),
      );
    } else if (c % 4 === 1) {
      await store.set(
        'a',
        [...live].map((k) => [`key-${k}`, `v${c}-${'r'.repeat(c % 30)}`] as const),
      );
    } else if (c % 4 === 2) {
      const big = Array.from({ length: 200 }, (_, i) => `big-${c}-${i}`);
      await store.apply([{ ns: 'big', set: big.map((k) => [k, 'x'.repeat(5_000)] as const), delete: big }]);
    } else {
      const gone = [...live].filter((k) => k % 5 === c % 5);
      gone.forEach((k) => live.delete(k));
      await store.delete(
        'a',
        gone.map((k) => `key-${k}`),
      );
    }
    await after();
  }
  await store.close();
  return live.size;
}
