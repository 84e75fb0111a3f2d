// The header check (src/state/lmdb-header.ts) reads the meta pages as the LMDB of one `lmdb`
// package lays them out: package.json names that version exactly, and the installed package is it.
// An upgrade fails here until mdb.c of the new version is read again and LMDB_PACKAGE_VERSION moved.
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LMDB_PACKAGE_VERSION } from '../../src/state/lmdb-header.js';

const require = createRequire(import.meta.url);
type PackageJson = { name?: string; version?: string; dependencies?: Record<string, string> };
const json = async (path: string) => JSON.parse(await readFile(path, 'utf8')) as PackageJson;

/** the package.json of the installed lmdb: the first one named so above its entry point (its exports hide the file) */
async function installedLmdb(): Promise<PackageJson> {
  for (let dir = dirname(require.resolve('lmdb')); dir !== dirname(dir); dir = dirname(dir)) {
    const found = await json(join(dir, 'package.json')).catch(() => undefined);
    if (found?.name === 'lmdb') return found;
  }
  throw new Error('no package.json of lmdb above its entry point');
}

describe('the lmdb package', () => {
  it('is the version whose layout the header check reads, pinned exactly in package.json', async () => {
    const installed = await installedLmdb();
    const ours = await json(new URL('../../package.json', import.meta.url).pathname);
    expect([installed.version, ours.dependencies?.['lmdb']]).toEqual([LMDB_PACKAGE_VERSION, LMDB_PACKAGE_VERSION]);
  });
});
