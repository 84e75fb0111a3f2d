// The kept compared JSON of a chatbot's listings (RemoteIndex with keepCompared: the change log
// names each changed field old → new, and a URL-keyed delete its MLSNumber), page by page as paging
// gave it. Only a few rows are ever read (the listings that differ, the deletes), so a page's bytes
// go to a temporary file and are read back one row at a time: a million listings' compared JSON is
// about 300 MB, which a run would otherwise hold from its paging to its end. A page comes in one of
// two forms:
// - its rows' compared JSONs, one after the other (a page decoded: RemoteRows.compared);
// - its raw answer, status and body (a page recalled from the page echo, which keeps no compared
//   JSON: page-echo.ts). Reading row i reads the body back and derives item i's compared JSON with
//   the rule decoding uses (`readRaw`: comparedOfPageRow in page-decode.ts), so both forms give the
//   same string for the same listing.
// The file has no name (removed as soon as it is opened): nothing is left behind, whatever ends the
// process. A file that cannot be made or written leaves the bytes in memory; nothing else changes.
import { closeSync, mkdtempSync, openSync, readSync, rmSync, unlinkSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ListItem } from '../../listing/schema.js';
import type { RemoteRows } from './remote-rows.js';

export type Compared = NonNullable<RemoteRows['compared']>;

/** row `row`'s kept compared JSON, from the status and body of the page it was paged in */
export type RawRowReader = (status: number, body: Uint8Array, row: number) => string | undefined;

/** row `row`'s list item, every field as the list gave it, from the status and body of its page */
export type RawItemReader = (status: number, body: Uint8Array, row: number) => ListItem;

export interface ComparedStoreOptions {
  /** rows kept in memory before pages go to the file (default 0: every page in the file; tests) */
  memoryRows?: number;
  /** where the file is made (default the system's temporary folder) */
  dir?: string;
  /** how a raw page's row is read (needed by addRaw) */
  readRaw?: RawRowReader;
  /** how a raw page's row is read as its whole list item (item) */
  readItem?: RawItemReader;
}

/** a store dropped without close() (a caller that pages and lets the index go) closes its file when collected */
const unclosed = new FinalizationRegistry<number>((fd) => {
  try {
    closeSync(fd);
  } catch {
    // (already closed)
  }
});

interface Page {
  /** in memory; undefined: in the file, `size` bytes from `at` */
  bytes: Uint8Array | undefined;
  at: number;
  size: number;
  /** where each row's compared JSON ends; undefined: the bytes are a raw page's body, answered with `status` */
  ends: Uint32Array | undefined;
  status: number;
}

export class ComparedStore {
  readonly #pages: Page[] = [];
  readonly #memoryRows: number;
  readonly #dir: string;
  readonly #readRaw: RawRowReader | undefined;
  readonly #readItem: RawItemReader | undefined;
  #rows = 0;
  #fd: number | undefined;
  #size = 0;
  /** the file could not be made or written: everything stays in memory */
  #noFile = false;

  constructor(opts: ComparedStoreOptions = {}) {
    this.#memoryRows = opts.memoryRows ?? 0;
    this.#dir = opts.dir ?? tmpdir();
    this.#readRaw = opts.readRaw;
    this.#readItem = opts.readItem;
  }

  /** a page's compared JSONs: its number */
  add(compared: Compared): number {
    return this.#put(compared.utf8, compared.ends.length, compared.ends, 0);
  }

  /** a page of `rows` rows by its raw answer (its rows' compared JSON is derived when read): its number */
  addRaw(status: number, body: Uint8Array, rows: number): number {
    if (!this.#readRaw) throw new Error('ComparedStore.addRaw: this store was made without readRaw, so a raw page could not be read back');
    return this.#put(body, rows, undefined, status);
  }

  /** row `row` of page `page`'s compared JSON; undefined when it has none */
  read(page: number, row: number): string | undefined {
    const p = this.#pages[page]!;
    if (!p.ends) return this.#readRaw!(p.status, this.#bytes(p, 0, p.size), row);
    const from = row === 0 ? 0 : p.ends[row - 1]!;
    const to = p.ends[row]!;
    if (to === from) return undefined;
    const bytes = this.#bytes(p, from, to - from);
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
  }

  /** row `row` of page `page` as its whole list item; undefined for a page kept by its compared JSONs (or a store without readItem) */
  item(page: number, row: number): ListItem | undefined {
    const p = this.#pages[page]!;
    if (p.ends || !this.#readItem) return undefined;
    return this.#readItem(p.status, this.#bytes(p, 0, p.size), row);
  }

  /** pages whose bytes are in the file (tests) */
  get spilled(): number {
    return this.#pages.filter((p) => !p.bytes).length;
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

  #put(bytes: Uint8Array, rows: number, ends: Uint32Array | undefined, status: number): number {
    this.#rows += rows;
    const spilled = this.#rows > this.#memoryRows && this.#spill(bytes);
    const size = bytes.byteLength;
    this.#pages.push(spilled === false ? { bytes, at: 0, size, ends, status } : { bytes: undefined, at: spilled, size, ends, status });
    return this.#pages.length - 1;
  }

  /** `length` bytes of page `p` from `from`: a view of them in memory, or read from the file */
  #bytes(p: Page, from: number, length: number): Uint8Array {
    if (p.bytes) return p.bytes.subarray(from, from + length);
    if (this.#fd === undefined) throw new Error('ComparedStore.read after close: the compared JSON file is gone');
    const out = Buffer.allocUnsafe(length);
    let got = 0;
    while (got < length) {
      const n = readSync(this.#fd, out, got, length - got, p.at + from + got);
      if (n === 0) throw new Error('the compared JSON file ended early');
      got += n;
    }
    return out;
  }

  /** writes the bytes at the file's end: where they start, or false (they stay in memory) */
  #spill(bytes: Uint8Array): number | false {
    if (this.#noFile) return false;
    try {
      if (this.#fd === undefined) {
        this.#fd = openAnonymous(this.#dir);
        unclosed.register(this, this.#fd, this);
      }
      const at = this.#size;
      let put = 0;
      while (put < bytes.byteLength) put += writeSync(this.#fd, bytes, put, bytes.byteLength - put, at + put);
      this.#size += bytes.byteLength;
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
