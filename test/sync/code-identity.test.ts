// The code identity (src/sync/util/code-identity.ts) read from a build's hashes (CODE_HASHES, written
// by scripts/build.js) is the one read from the files themselves, for folders and for single modules,
// so a build's start trusts the same stamps and remembered pages a start from the sources does.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { codeHashes, identityOf } from '../../src/sync/util/code-identity.js';

const SRC = new URL('../../src/', import.meta.url);
const work = mkdtempSync(join(tmpdir(), 'feedsync-code-identity-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('codeIdentity from a build’s hashes', () => {
  it('is the identity of the files, for the folders and modules the sync asks about', () => {
    const hashes = codeHashes(fileURLToPath(SRC));
    for (const paths of [
      ['mapping', 'listing'],
      ['api/list-page-cut', 'sync/remote/remote-rows', 'sync/model/remote-key', 'sync/remote/page-decode', 'listing'],
    ])
      expect(identityOf(paths, SRC, hashes)).toBe(identityOf(paths, SRC));
  });

  it('follows a changed file, a nested folder and a module beside a folder', () => {
    const dir = join(work, 'src');
    mkdirSync(join(dir, 'a/b'), { recursive: true });
    writeFileSync(join(dir, 'a/x.js'), 'export const x = 1;\n');
    writeFileSync(join(dir, 'a/b/y.js'), 'export const y = 2;\n');
    writeFileSync(join(dir, 'a/notes.md'), 'not code\n');
    writeFileSync(join(dir, 'm.js'), 'export const m = 3;\n');
    const src = pathToFileURL(dir + '/');
    const before = identityOf(['a', 'm'], src);
    expect(identityOf(['a', 'm'], src, codeHashes(dir))).toBe(before);
    writeFileSync(join(dir, 'a/b/y.js'), 'export const y = 3;\n');
    expect(identityOf(['a', 'm'], src, codeHashes(dir))).toBe(identityOf(['a', 'm'], src));
    expect(identityOf(['a', 'm'], src)).not.toBe(before);
  });

  it('names a module that is not there, either way', () => {
    const dir = join(work, 'empty');
    mkdirSync(dir);
    const src = pathToFileURL(dir + '/');
    expect(() => identityOf(['nothing'], src)).toThrow(/no module nothing/);
    expect(() => identityOf(['nothing'], src, codeHashes(dir))).toThrow(/no module nothing/);
  });
});
