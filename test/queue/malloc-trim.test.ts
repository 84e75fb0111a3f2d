// malloc_trim(0) after the idle collection (src/queue/malloc-trim.ts, issue 55 point 5): in a child
// process whose main malloc arena holds many freed small Buffers below a live one at its top, the
// full collection alone gives back next to nothing and the trim gives back the freed pages; where
// koffi or glibc's malloc_trim is missing the trim is skipped with its reason, never an error.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadMallocTrim } from '../../src/queue/malloc-trim.js';

const CHILD = fileURLToPath(new URL('./fragment-arena.ts', import.meta.url));

interface Fragmented {
  /** the main arena's resident MB: before the idle collection, after its full collection, after the trim */
  before: number;
  collected: number;
  trimmed?: number;
  /** what the trim reported given back (RSS before less after) */
  trimmedBytes?: number;
  skipped?: string;
}

function fragmentInChild(): Promise<Fragmented> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ['--import', 'tsx', CHILD], { timeout: 60_000 }, (err, stdout, stderr) => {
      if (err) return reject(new Error(`${err.message}\n${stderr}`));
      resolve(JSON.parse(stdout.trim().split('\n').pop()!) as Fragmented);
    });
  });
}

const glibcTrim = 'trim' in (await loadMallocTrim());

describe('malloc_trim after the idle collection', () => {
  it.runIf(glibcTrim)(
    'gives back the freed pages the full collection left in the main arena',
    async () => {
      const r = await fragmentInChild();
      // about 150 MB of Buffers allocated, all but 1 in 50 freed: the collection frees them but
      // glibc keeps the pages (the arena's top is in use)
      expect(r.before).toBeGreaterThan(100);
      expect(r.collected).toBeGreaterThan(0.8 * r.before);
      // the trim gives them back, and reports the bytes
      expect(r.trimmed).toBeLessThan(0.25 * r.collected);
      expect(r.trimmedBytes).toBeGreaterThan(0.7 * (r.collected - r.trimmed!) * 2 ** 20);
    },
    60_000,
  );

  it('is skipped, with its reason, where koffi is not installed', async () => {
    const missing = Object.assign(new Error("Cannot find package 'koffi' imported from /app/dist"), {
      code: 'ERR_MODULE_NOT_FOUND',
    });
    const r = await loadMallocTrim(() => Promise.reject(missing));
    expect(r).toEqual({ skipped: expect.stringContaining('koffi') });
    expect('trim' in r).toBe(false);
  });

  it('is skipped, with its reason, where the C library has no malloc_trim (musl, macOS)', async () => {
    const noTrim = {
      load: () => ({
        func: (definition: string): never => {
          throw new Error(`Cannot find function '${definition}' in shared library`);
        },
      }),
    };
    const r = await loadMallocTrim(async () => noTrim);
    expect(r).toEqual({ skipped: expect.stringContaining('no malloc_trim') });
  });
});
