// The state file judged by LMDB's own header before LMDB maps it (src/state/lmdb-header.ts): a file
// cut short anywhere — inside either meta page, in the middle, one page short — is refused with an
// error a person can act on, where LMDB would have crashed the process (SIGBUS) reading past its
// end; and a valid store passes at every size it takes over many commits, including the sizes that
// end short of the newest meta's last page (pages a commit took and freed again are never written,
// "the file may be shorter if the freeDB lists the final pages", mdb.c on mm_last_pg), which a bare
// size check would refuse. That a cut judged whole is one LMDB reads to its end without a crash is
// shown in a child process in store-processes.test.ts.
import { copyFile, mkdtemp, readFile, rm, stat, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { EnvironmentError } from '../../src/errors.js';
import { createFileStore } from '../../src/state/file-store.js';
import { judgeLmdbFile } from '../../src/state/lmdb-header.js';
import { growStore, headerOf } from './lmdb-files.js';

const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

async function folder(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'feedsync-lmdb-header-'));
  dirs.push(dir);
  return dir;
}

/** What opening the file at `path` throws (undefined: it opened, and was closed again). */
async function openError(path: string): Promise<unknown> {
  return createFileStore(path, { waitMs: 600 }).then(
    (store) => store.close(),
    (e: unknown) => e,
  );
}

describe('the state file judged by its LMDB header', () => {
  it('a valid store passes at every size it takes over many commits, also where it ends short of its last page', async () => {
    const path = join(await folder(), 'state.lmdb');
    const sizes = new Set<number>();
    let endedShort = 0;
    const entries = await growStore(path, 60, async () => {
      const { size } = await stat(path);
      const { inUse } = headerOf(await readFile(path));
      sizes.add(size);
      if (size < inUse) endedShort++;
      expect(judgeLmdbFile(path), `${size} bytes, ${inUse} in use`).toEqual({ kind: 'ok' });
    });
    expect(sizes.size).toBeGreaterThan(8); // it grew, commit after commit (and took freed pages again)
    expect(endedShort).toBeGreaterThan(0); // the case a size check gets wrong came up
    const store = await createFileStore(path);
    expect((await store.getAll('a')).size).toBe(entries);
    await store.close();
  }, 120_000);

  it('a store cut inside either meta page, in the middle or one page short is refused before LMDB maps it, with what is there and what to do', async () => {
    const dir = await folder();
    const whole = join(dir, 'whole.lmdb');
    const store = await createFileStore(whole);
    for (let b = 0; b < 4; b++)
      await store.set(
        'a',
        Array.from({ length: 5_000 }, (_, i) => [`key-${b}-${i}`, 'v'.repeat(40)] as const),
      );
    await store.close();
    const bytes = await readFile(whole);
    const { pageSize, inUse } = headerOf(bytes);
    expect(bytes.length).toBe(inUse); // its last page is one it uses: one page less takes one it needs
    const cuts = {
      'inside meta page 1': pageSize + 100,
      'after the meta pages': 2 * pageSize,
      'in the middle': Math.floor(inUse / 2),
      'one page short': inUse - pageSize,
      'one byte short': inUse - 1,
    };
    for (const [where, at] of Object.entries(cuts)) {
      const path = join(dir, `cut-${at}.lmdb`);
      await copyFile(whole, path);
      await truncate(path, at);
      expect(judgeLmdbFile(path), where).toMatchObject({ kind: 'short', size: at, inUse, pageSize });
      const err = await openError(path);
      expect(err, where).toBeInstanceOf(EnvironmentError);
      expect((err as Error).message, where).toMatch(
        new RegExp(
          `^The state file ${path} is cut short: it holds ${at} bytes of the ${inUse} its header says are in use \\(page \\d+, which the store uses, starts at byte \\d+\\)\\. LMDB would read past what is there and crash\\. Restore it from a backup, or move it aside .* feedsync state import\\. Moving it aside costs no listing`,
        ),
      );
    }
    const head = join(dir, 'head.lmdb');
    await writeFile(head, bytes.subarray(0, 100)); // inside meta page 0: magic and page size, not the last page
    expect(judgeLmdbFile(head)).toEqual({ kind: 'short', size: 100, page: 0 });
    expect(((await openError(head)) as Error).message).toContain(
      `${head} is cut short: it holds 100 bytes, not the whole of its first header page. LMDB would read past what is there and crash. Restore it from a backup`,
    );
    const tiny = join(dir, 'tiny.lmdb');
    await writeFile(tiny, bytes.subarray(0, 20));
    expect((await openError(tiny)) as Error).toMatchObject({
      message: expect.stringContaining(
        `${tiny} holds 20 bytes, too few for a state store's header: it was cut short, or another file took its place`,
      ),
    });
  }, 60_000);

  it('a store whose second meta page is overwritten is refused as damaged', async () => {
    const path = join(await folder(), 'state.lmdb');
    await growStore(path, 2);
    const bytes = await readFile(path);
    const { pageSize } = headerOf(bytes);
    bytes.fill(0, pageSize, pageSize + 200);
    await writeFile(path, bytes);
    expect(judgeLmdbFile(path)).toEqual({
      kind: 'damaged',
      size: bytes.length,
      pageSize,
      where: `its second header page (at byte ${pageSize}) is not an LMDB meta page`,
    });
    expect(((await openError(path)) as Error).message).toContain(
      `is damaged: its second header page (at byte ${pageSize}) is not an LMDB meta page`,
    );
  });
});
