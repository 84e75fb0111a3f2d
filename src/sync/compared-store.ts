// The kept compared JSON of a chatbot's listings (RemoteIndex with keepCompared: the change log
// names each changed field old → new), page by page as paging gave it. The first `memoryRows`
// rows stay in memory, referenced, not copied: up to ECHO_ROWS they are the bytes the page echo
// holds anyway (page-echo.ts). Past them, a page's bytes go to a temporary file and are read back
// only for a listing that differs (a few in a rerun): a million listings' compared JSON is about
// 420 MB, which a rerun would otherwise hold from its paging to its end. The file has no name
// (removed as soon as it is opened): nothing is left behind, whatever ends the process. A file
// that cannot be made or written leaves the bytes in memory, as before; nothing else changes.
import { closeSync, mkdtempSync, openSync, readSync, rmSync, unlinkSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RemoteRows } from './remote-rows.js';

export type Compared = NonNullable<RemoteRows['compared']>;

/** a store dropped without close() (a caller that pages and lets the index go) closes its file when collected */
const unclosed = new FinalizationRegistry<number>((fd) => {
  try {
    closeSync(fd);
  } catch {
    // (already closed)
  }
});

interface Page {
  /** in memory; undefined: in the file, from `at` */
  utf8: Uint8Array | undefined;
  at: number;
  ends: Uint32Array;
}

export class ComparedStore {
  readonly #pages: Page[] = [];
  #rows = 0;
  #fd: number | undefined;
  #size = 0;
  /** the file could not be made or written: everything stays in memory */
  #noFile = false;

  constructor(
    /** rows kept in memory before pages go to the file */
    readonly memoryRows: number,
    /** where the file is made (default the system's temporary folder) */
    readonly dir: string = tmpdir(),
  ) {}

  /** a page's compared JSONs: its number */
  add(compared: Compared): number {
    this.#rows += compared.ends.length;
    const spilled = this.#rows > this.memoryRows && this.#spill(compared.utf8);
    this.#pages.push(spilled === false ? { utf8: compared.utf8, at: 0, ends: compared.ends } : { utf8: undefined, at: spilled, ends: compared.ends });
    return this.#pages.length - 1;
  }

  /** row `row` of page `page`'s compared JSON; undefined when it has none ('') */
  read(page: number, row: number): string | undefined {
    const p = this.#pages[page]!;
    const from = row === 0 ? 0 : p.ends[row - 1]!;
    const to = p.ends[row]!;
    if (to === from) return undefined;
    if (p.utf8) return Buffer.from(p.utf8.buffer, p.utf8.byteOffset + from, to - from).toString('utf8');
    const bytes = Buffer.allocUnsafe(to - from);
    let got = 0;
    while (got < bytes.length) {
      const n = readSync(this.#fd!, bytes, got, bytes.length - got, p.at + from + got);
      if (n === 0) throw new Error('the compared JSON file ended early');
      got += n;
    }
    return bytes.toString('utf8');
  }

  /** pages whose bytes are in the file (tests) */
  get spilled(): number {
    return this.#pages.filter((p) => !p.utf8).length;
  }

  /** closes the file (idempotent); pages in memory stay readable */
  close(): void {
    if (this.#fd !== undefined) {
      unclosed.unregister(this);
      closeSync(this.#fd);
    }
    this.#fd = undefined;
    this.#noFile = true;
  }

  /** writes the bytes at the file's end: where they start, or false (they stay in memory) */
  #spill(utf8: Uint8Array): number | false {
    if (this.#noFile) return false;
    try {
      if (this.#fd === undefined) {
        this.#fd = openAnonymous(this.dir);
        unclosed.register(this, this.#fd, this);
      }
      const at = this.#size;
      let put = 0;
      while (put < utf8.byteLength) put += writeSync(this.#fd, utf8, put, utf8.byteLength - put, at + put);
      this.#size += utf8.byteLength;
      return at;
    } catch {
      // (pages already in the file stay readable through the open descriptor)
      this.#noFile = true;
      return false;
    }
  }
}

/** a new file in a folder of its own under `dir`, removed at once: open, nameless, gone with its descriptor */
function openAnonymous(dir: string): number {
  const folder = mkdtempSync(join(dir, 'feedsync-compared-'));
  try {
    const file = join(folder, 'compared');
    const fd = openSync(file, 'w+', 0o600);
    unlinkSync(file);
    return fd;
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}
