// The kept compared JSON of a chatbot's listings (RemoteIndex with keepCompared: the change log
// names each changed field old → new, and a URL-keyed delete its MLSNumber), page by page as paging
// gave it. Only a few rows are ever read (the listings that differ, the deletes; none in a no-change
// rerun), so past a budget of bytes kept in memory (memoryBytes: a 100k-listing chatbot's pages fit
// in it, and never touch the disk) a page's bytes go to a temporary file and are read back one row
// at a time: a million listings' pages are a few hundred MB, which a run would otherwise hold from
// its paging to its end. A page comes in one of two forms:
// - its rows' compared JSONs, one after the other (a page decoded: RemoteRows.compared);
// - its raw answer, status and body (a page recalled from the page echo, which keeps no compared
//   JSON: page-echo.ts). Reading row i reads the body back and derives item i's compared JSON with
//   the rule decoding uses (`readRaw`: comparedOfPageRow in page-decode.ts), so both forms give the
//   same string for the same listing.
// Pages go to the file in batches of BATCH_BYTES, each one write off the event loop (writev on
// libuv's threads), so paging neither waits for the disk nor wakes a thread for every page; a
// page's bytes stay in memory until its batch is written (a row read meanwhile is read from them).
// At most WRITING_BYTES are on their way at once: past that a batch is written at once, as a bound
// on what a slow disk can make the run hold.
// The file has no name (removed as soon as it is opened): nothing is left behind, whatever ends the
// process. A file that cannot be made or written (a full disk, a folder gone) leaves the bytes in
// memory, the rest of the run's pages with them; the store says so once (onNoFile), for the run's
// warning (noFileWarning: where, why, the memory it may cost).
import { closeSync, mkdtempSync, openSync, readSync, rmSync, unlinkSync, writev, writevSync } from 'node:fs';
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
  /** bytes of pages kept in memory before pages go to the file (default 0: every page in the file) */
  memoryBytes?: number;
  /** where the file is made (default the system's temporary folder) */
  dir?: string;
  /** how a raw page's row is read (needed by addRaw) */
  readRaw?: RawRowReader;
  /** how a raw page's row is read as its whole list item (item) */
  readItem?: RawItemReader;
  /** told once when the file cannot be made or written, and pages stay in memory from then on */
  onNoFile?: (failure: NoFile) => void;
}

/** Why the pages stay in memory: the folder of the file, what failed, the bytes held when it did. */
export interface NoFile {
  dir: string;
  /** the file could not be made, or a write to it failed */
  step: 'made' | 'written';
  err: unknown;
  heldBytes: number;
}

/**
 * The run's one warning of a store whose file failed, for a person: where, why, and what it may
 * cost (about 0.9 KB a listing more, to the run's end: remote.ts COMPARED_MEMORY_BYTES' measure).
 */
export function noFileWarning(chatbot: string, f: NoFile): string {
  const why = f.err instanceof Error ? f.err.message : String(f.err);
  const mb = (f.heldBytes / (1024 * 1024)).toFixed(1);
  return (
    `the compared JSON of chatbot ${chatbot}'s listings (for the change log) stays in memory: its temporary file in ${f.dir} could not be ${f.step} (${why}); ` +
    `${mb} MB held now, and about 0.9 KB more a listing paged to the run's end (100k listings: about 94 MB). ` +
    'Free space in that folder, or point TMPDIR at one with room'
  );
}

/** a store dropped without close() (a caller that pages and lets the index go) closes its file when collected */
const unclosed = new FinalizationRegistry<number>((fd) => {
  try {
    closeSync(fd);
  } catch {
    // (already closed)
  }
});

/** pages go to the file together once they are this many bytes (about a dozen pages of 100 listings) */
const BATCH_BYTES = 1024 * 1024;
/** bytes of pages on their way to the file at once, past which a batch is written before paging goes on */
const WRITING_BYTES = 8 * 1024 * 1024;

interface Page {
  /** the page's bytes while they are in memory: a page kept there, or one on its way to the file */
  bytes: Uint8Array | undefined;
  /** where the page is in the file; -1: kept in memory */
  at: number;
  size: number;
  /** where each row's compared JSON ends; undefined: the bytes are a raw page's body, answered with `status` */
  ends: Uint32Array | undefined;
  status: number;
}

export class ComparedStore {
  readonly #pages: Page[] = [];
  readonly #memoryBytes: number;
  readonly #dir: string;
  readonly #readRaw: RawRowReader | undefined;
  readonly #readItem: RawItemReader | undefined;
  readonly #onNoFile: ((failure: NoFile) => void) | undefined;
  /** bytes of the pages added so far */
  #added = 0;
  #fd: number | undefined;
  #size = 0;
  /** pages given a place in the file, not sent to it yet (flush), and their bytes */
  #batch: Page[] = [];
  #batchBytes = 0;
  /** bytes of pages being written (their writes not done yet) */
  #writing = 0;
  /** close() was called: the file is closed once no write is on its way */
  #closed = false;
  /** the file could not be made or written: everything stays in memory */
  #noFile = false;

  constructor(opts: ComparedStoreOptions = {}) {
    this.#memoryBytes = opts.memoryBytes ?? 0;
    this.#dir = opts.dir ?? tmpdir();
    this.#readRaw = opts.readRaw;
    this.#readItem = opts.readItem;
    this.#onNoFile = opts.onNoFile;
  }

  /** a page's compared JSONs: its number */
  add(compared: Compared): number {
    return this.#put(compared.utf8, compared.ends, 0);
  }

  /** a page by its raw answer (its rows' compared JSON is derived when read): its number */
  addRaw(status: number, body: Uint8Array): number {
    if (!this.#readRaw)
      throw new Error(
        'ComparedStore.addRaw: this store was made without readRaw, so a raw page could not be read back',
      );
    return this.#put(body, undefined, status);
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

  /** pages in the file, or on their way to it (tests) */
  get spilled(): number {
    return this.#pages.filter((p) => p.at >= 0).length;
  }

  /** pages whose bytes are held in memory: kept there, or still being written (tests) */
  get held(): number {
    return this.#pages.filter((p) => p.bytes).length;
  }

  /** sends the pages waiting for a batch to the file (paging is over: remote-index.ts finish) */
  flush(): void {
    if (this.#batch.length === 0 || this.#fd === undefined || this.#closed) return;
    const pages = this.#batch;
    const bytes = this.#batchBytes;
    this.#batch = [];
    this.#batchBytes = 0;
    if (this.#writing + bytes <= WRITING_BYTES) return this.#writeLater(this.#fd, pages, bytes);
    try {
      const at = pages[0]!.at;
      let put = 0;
      while (put < bytes) put += writevSync(this.#fd, unwritten(pages, put), at + put);
      for (const p of pages) p.bytes = undefined;
    } catch (err) {
      // (pages already in the file stay readable through the open descriptor)
      this.#inMemory(pages, err);
    }
  }

  /** closes the file (idempotent; once the writes on their way are done); pages kept in memory stay readable */
  close(): void {
    this.#closed = true;
    this.#noFile = true;
    if (this.#writing === 0) this.#closeFile();
  }

  #closeFile(): void {
    if (this.#fd !== undefined) {
      unclosed.unregister(this);
      closeSync(this.#fd);
    }
    this.#fd = undefined;
  }

  #put(bytes: Uint8Array, ends: Uint32Array | undefined, status: number): number {
    const size = bytes.byteLength;
    this.#added += size;
    const page: Page = { bytes, at: -1, size, ends, status };
    if (this.#added > this.#memoryBytes) this.#spill(page);
    this.#pages.push(page);
    return this.#pages.length - 1;
  }

  /** `length` bytes of page `p` from `from`: a view of them in memory, or read from the file */
  #bytes(p: Page, from: number, length: number): Uint8Array {
    if (p.at >= 0 && this.#closed) throw new Error('ComparedStore.read after close: the compared JSON file is gone');
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

  /** gives the page its place at the file's end (page.at) and sends it with its batch; it stays in memory (at -1) when the file cannot be made */
  #spill(page: Page): void {
    if (this.#noFile) return;
    try {
      if (this.#fd === undefined) {
        this.#fd = openAnonymous(this.#dir);
        unclosed.register(this, this.#fd, this);
      }
    } catch (err) {
      this.#noFileFrom('made', err, page.size);
      return;
    }
    page.at = this.#size;
    this.#size += page.size;
    // (an empty page has nothing to write)
    if (page.size === 0) {
      page.bytes = undefined;
      return;
    }
    this.#batch.push(page);
    this.#batchBytes += page.size;
    if (this.#batchBytes >= BATCH_BYTES) this.flush();
  }

  /** writes the pages (one after the other in the file) off the event loop; their bytes are let go once written (kept, should the write fail) */
  #writeLater(fd: number, pages: Page[], bytes: number): void {
    const at = pages[0]!.at;
    this.#writing += bytes;
    const done = (failed?: unknown) => {
      this.#writing -= bytes;
      if (failed === undefined) for (const p of pages) p.bytes = undefined;
      else this.#inMemory(pages, failed);
      if (this.#closed && this.#writing === 0) this.#closeFile();
    };
    const from = (put: number) =>
      writev(fd, unwritten(pages, put), at + put, (err, n) => {
        if (err || n === 0) done(err ?? new Error('the write wrote nothing'));
        else if (put + n < bytes) from(put + n);
        else done();
      });
    from(0);
  }

  /** a write failed: these pages stay in memory (their bytes were held for it), and so do the next */
  #inMemory(pages: Page[], err: unknown): void {
    for (const p of pages) p.at = -1;
    this.#noFileFrom('written', err, 0);
  }

  /** no file from now on: said once (onNoFile), unless the store was closed meanwhile; `more`: bytes of a page not yet counted as held */
  #noFileFrom(step: NoFile['step'], err: unknown, more: number): void {
    const first = !this.#noFile;
    this.#noFile = true;
    if (!first || this.#closed) return;
    const heldBytes = this.#pages.reduce((n, p) => n + (p.bytes ? p.size : 0), more);
    this.#onNoFile?.({ dir: this.#dir, step, err, heldBytes });
  }
}

/** the pages' bytes past the first `put` of them, as views (for writev) */
function unwritten(pages: readonly Page[], put: number): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (const p of pages) {
    if (put >= p.size) put -= p.size;
    else {
      out.push(put === 0 ? p.bytes! : p.bytes!.subarray(put));
      put = 0;
    }
  }
  return out;
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
