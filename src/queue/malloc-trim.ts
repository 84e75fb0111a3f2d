// glibc's malloc_trim(0), called after the idle collection (issue 55 point 5). Buffers under 64 KiB
// (socket reads, page bodies, rows) live in malloc's main arena; V8's collection frees them, but
// glibc gives back to the system only the free memory at the arena's top, so a worker kept the
// highest level its jobs' Buffers reached: +12-22% RSS from tick 3 to tick 10 for a worker that
// first ran two jobs at once after tick 3 (docs/benchmarks.md, "Fleet ticks"). malloc_trim(0)
// (glibc >= 2.8) gives back every free whole page of every arena, not only the top: with it the
// arena stays at 14-17 MB and a worker's RSS +1.2-4.8% over those ticks, 13-26 ms a trim.
// Node has no FFI of its own: the call goes through koffi, an optional dependency (prebuilt binaries,
// no compiler), imported only here, once, as a worker that collects starts. Where koffi is absent or the
// process's C library has no malloc_trim (musl, macOS), there is no trim: the reason is returned,
// for one log line, and nothing fails.

/** What the trim needs of koffi: a library (null: the process's own symbols) and a function of it. */
export interface Ffi {
  load(path: string | null): { func(definition: string): (...args: unknown[]) => unknown };
}

/** The trim, or why there is none. */
export type MallocTrim = { trim: () => void } | { skipped: string };

/**
 * The package's name held in a variable: an optional dependency need not be installed for the
 * sources to typecheck (`npm install --omit=optional`), so its types are not read; what is used of
 * it is checked here and in loadMallocTrim.
 */
const KOFFI = 'koffi';

/** koffi, imported when first needed (absent where the optional dependency was not installed). */
async function importKoffi(): Promise<Ffi> {
  const koffi: Partial<Ffi> | undefined = (await import(KOFFI)).default;
  if (typeof koffi?.load !== 'function') throw new Error('koffi has no load()');
  return { load: koffi.load.bind(koffi) };
}

/**
 * malloc_trim(0) of the C library this process runs on (looked up among its own symbols, so the
 * arenas trimmed are the ones its malloc uses), or the reason there is none.
 */
export async function loadMallocTrim(ffi: () => Promise<Ffi> = importKoffi): Promise<MallocTrim> {
  let koffi: Ffi;
  try {
    koffi = await ffi();
  } catch (err) {
    return { skipped: `koffi (an optional dependency, to call malloc_trim) is not installed: ${firstLine(err)}` };
  }
  try {
    const trim = koffi.load(null).func('int malloc_trim(size_t pad)');
    return { trim: () => void trim(0) };
  } catch (err) {
    return { skipped: `the C library has no malloc_trim (glibc's; not musl's or macOS's): ${firstLine(err)}` };
  }
}

const firstLine = (err: unknown) => String(err instanceof Error ? err.message : err).split('\n')[0];
