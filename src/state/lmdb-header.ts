// The state file judged by LMDB's own header before LMDB maps it. LMDB trusts the file it opens: a
// page it reads past the end of a file cut short (a copy that did not finish, a full disk) kills the
// process with SIGBUS, and a file of another program crashes it as well. The layout read here is
// that of the LMDB the `lmdb` package builds (node_modules/lmdb/dependencies/lmdb/libraries/liblmdb/
// mdb.c, lmdb 3.5.6, 64-bit): every page starts with a 24-byte header (MDB_page_header: pgno,
// txnid, pad, flags, lower, upper); pages 0 and 1 are meta pages, `psize` apart, each holding
// MDB_meta after the header (magic 0xBEEFC0DE, version 2, the page size, the free and main trees'
// roots, the last page in use, the commit's txnid); LMDB uses the one of the higher txnid.
// A file is as long as (last page + 1) × page size of that meta, "or shorter if the freeDB lists the
// final pages" (mdb.c on mm_last_pg): pages allocated and freed within one commit are never
// written. So a file that ends short is refused only when a page past its end is not one the free
// tree lists; that tree is read only then (a valid file that ends short reads a few pages of it).
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { EnvironmentError } from '../errors.js';
import { FRESH_STATE_COST } from './legacy-state.js';

/**
 * The `lmdb` package whose LMDB this layout is read from: package.json pins it exactly, and
 * test/state/lmdb-version.test.ts fails when the installed one is another (read mdb.c again first).
 */
export const LMDB_PACKAGE_VERSION = '3.5.6';

/** The state file refused, with what to do, when its header says LMDB cannot read it (judgeLmdbFile). */
export function checkStateFile(path: string): void {
  const verdict = judgeLmdbFile(path);
  if (verdict.kind === 'ok') return;
  const thing = `The state file ${path}`;
  const aside = `move it aside (mv ${path} ${path}.bad) and run again`;
  const cost = `Moving it aside costs no listing: ${FRESH_STATE_COST}`;
  if (verdict.kind === 'foreign' && verdict.size >= META_END) {
    throw new EnvironmentError(
      thing,
      'is not a state store (an LMDB file): another file took its place',
      `Move it aside (mv ${path} ${path}.bad) and run again, or set state.file to another path; a state document of export goes in with feedsync state import. A new state costs this: ${FRESH_STATE_COST}`,
    );
  }
  const problem =
    verdict.kind === 'short'
      ? verdict.inUse === undefined || verdict.pageSize === undefined
        ? `is cut short: it holds ${verdict.size} bytes, not the whole of its first header page`
        : `is cut short: it holds ${verdict.size} bytes of the ${verdict.inUse} its header says are in use (page ${verdict.page}, which the store uses, starts at byte ${verdict.page * verdict.pageSize})`
      : verdict.kind === 'damaged'
        ? `is damaged: ${verdict.where}`
        : `holds ${verdict.size} bytes, too few for a state store's header: it was cut short, or another file took its place`;
  throw new EnvironmentError(
    thing,
    `${problem}. LMDB would read past what is there and crash`,
    `Restore it from a backup, or ${aside}; a state document of feedsync state export goes back in with feedsync state import. ${cost}`,
  );
}

/** What the header says of a file. */
export type LmdbFileVerdict =
  | { kind: 'ok' }
  /** no LMDB meta page where the file starts: a file of another program, or none of the header is there */
  | { kind: 'foreign'; size: number }
  /** a page the store uses lies past the end of the file (inUse unknown: the first meta page is cut) */
  | { kind: 'short'; size: number; inUse?: number; page: number; pageSize?: number }
  /** the second meta page is not one, or the free tree read for a file that ends short does not parse */
  | { kind: 'damaged'; size: number; pageSize: number; where: string };

const HEADER = 24; // PAGEHDRSZ
const META_END = HEADER + 144; // sizeof(MDB_metabuf): the bytes LMDB reads of each meta page
const MAGIC = 0xbeefc0de;
const DATA_VERSION = 2;
const P_BRANCH = 0x01;
const P_LEAF = 0x02;
const P_OVERFLOW = 0x04;
const P_META = 0x08;
const F_BIGDATA = 0x01;
const P_INVALID = 2n ** 64n - 1n;

/** The fields of one meta page this check reads (offsets from the page's start). */
interface Meta {
  pageSize: number; // mm_dbs[FREE_DBI].md_pad, at 48
  freeRoot: bigint; // mm_dbs[FREE_DBI].md_root, at 88
  lastPage: number; // mm_last_pg, at 144
  txnid: bigint; // mm_txnid, at 152
}

function metaOf(page: Buffer): Meta | undefined {
  if (page.length < META_END || !(page.readUInt16LE(18) & P_META)) return undefined;
  if (page.readUInt32LE(HEADER) !== MAGIC || (page.readUInt32LE(HEADER + 4) & 0xffff) !== DATA_VERSION)
    return undefined;
  return {
    pageSize: page.readUInt32LE(48),
    freeRoot: page.readBigUInt64LE(88),
    lastPage: Number(page.readBigUInt64LE(144)),
    txnid: page.readBigUInt64LE(152),
  };
}

/** A page size LMDB writes: a power of two from 512 to 64 KiB (MAX_PAGESIZE). */
const isPageSize = (n: number) => n >= 512 && n <= 0x10000 && (n & (n - 1)) === 0;

/** The file at `path` judged by its header; `ok` for no file or an empty one (LMDB starts it anew). */
export function judgeLmdbFile(path: string): LmdbFileVerdict {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { kind: 'ok' };
    throw err;
  }
  try {
    return judge(fd, fstatSync(fd).size);
  } finally {
    closeSync(fd);
  }
}

function judge(fd: number, size: number): LmdbFileVerdict {
  if (size === 0) return { kind: 'ok' }; // made by an open that ended before its first write
  const head = readAt(fd, 0, META_END);
  if (size < META_END && size >= HEADER + 4 && head.readUInt16LE(18) & P_META && head.readUInt32LE(HEADER) === MAGIC)
    return { kind: 'short', size, page: 0 };
  const first = metaOf(head);
  if (!first || !isPageSize(first.pageSize)) return { kind: 'foreign', size };
  const { pageSize } = first;
  const inUseBy = (meta: Meta) => (meta.lastPage + 1) * pageSize;
  if (size < pageSize + META_END) return { kind: 'short', size, inUse: inUseBy(first), page: 1, pageSize };
  const second = metaOf(readAt(fd, pageSize, META_END));
  if (!second || second.pageSize !== pageSize)
    return {
      kind: 'damaged',
      size,
      pageSize,
      where: `its second header page (at byte ${pageSize}) is not an LMDB meta page`,
    };
  const newest = first.txnid >= second.txnid ? first : second; // mdb_pick_meta
  const inUse = inUseBy(newest);
  if (size >= inUse) return { kind: 'ok' };
  let page: number | undefined;
  try {
    page = firstUsedPastEnd(fd, newest, Math.floor(size / pageSize));
  } catch (err) {
    // (a page of the tree that points outside itself: bytes changed inside the file)
    if (!(err instanceof RangeError)) throw err;
    return {
      kind: 'damaged',
      size,
      pageSize,
      where: 'its free-page tree, read because the file ends before its last page, points outside its pages',
    };
  }
  return page === undefined ? { kind: 'ok' } : { kind: 'short', size, inUse, page, pageSize };
}

/** The first page from `from` to the last that the free tree does not list, or none. */
function firstUsedPastEnd(fd: number, meta: Meta, from: number): number | undefined {
  const free = freePages(fd, meta, from);
  if (!free) return from; // the free tree itself reaches past the end
  for (let page = from; page <= meta.lastPage; page++) if (!free.has(page)) return page;
  return undefined;
}

/**
 * The pages from `from` on that the free tree (FREE_DBI) lists, read as mdb_page_alloc reads its
 * records (mdb_midl_xmerge: a record is [count, entries…]; an entry 0 is empty, -n followed by p is
 * the n pages from p, else one page); undefined when a page of the tree lies at or past `from`.
 */
function freePages(fd: number, meta: Meta, from: number): Set<number> | undefined {
  const free = new Set<number>();
  if (meta.freeRoot === P_INVALID) return free;
  const pending = [Number(meta.freeRoot)];
  // a damaged tree that points in a circle ends here: no tree holds more pages than the file
  for (let seen = 0; pending.length > 0; seen++) {
    const pgno = pending.pop()!;
    if (pgno >= from || seen > meta.lastPage) return undefined;
    const page = readAt(fd, pgno * meta.pageSize, meta.pageSize);
    const flags = page.readUInt16LE(18);
    for (const node of nodesOf(page)) {
      if (flags & P_BRANCH) pending.push(branchChild(page, node));
      else if (flags & P_LEAF) {
        const idl = recordOf(fd, meta, page, node, from);
        if (!idl) return undefined;
        addFree(idl, meta, from, free);
      }
    }
  }
  return free;
}

/** The offsets of a branch or leaf page's nodes (mp_ptrs, after the header; NUMKEYS = lower / 2). */
function nodesOf(page: Buffer): number[] {
  const count = page.readUInt16LE(20) >> 1;
  const out: number[] = [];
  for (let i = 0; i < count; i++) out.push(page.readUInt16LE(HEADER + 2 * i) + HEADER);
  return out;
}

/** NODEPGNO: mn_lo | mn_hi << 16 | mn_flags << 32. */
function branchChild(page: Buffer, node: number): number {
  return page.readUInt16LE(node) + page.readUInt16LE(node + 2) * 0x10000 + page.readUInt16LE(node + 4) * 0x1_0000_0000;
}

/** A leaf node's data as 64-bit words, from the page or its overflow pages (F_BIGDATA); undefined past `from`. */
function recordOf(fd: number, meta: Meta, page: Buffer, node: number, from: number): BigInt64Array | undefined {
  const bytes = page.readUInt16LE(node) + page.readUInt16LE(node + 2) * 0x10000;
  const data = node + 8 + page.readUInt16LE(node + 6);
  let raw: Buffer;
  if (page.readUInt16LE(node + 4) & F_BIGDATA) {
    const overflow = Number(page.readBigUInt64LE(data));
    const pages = Math.ceil((HEADER + bytes) / meta.pageSize);
    if (overflow + pages > from) return undefined;
    const head = readAt(fd, overflow * meta.pageSize, HEADER);
    if (!(head.readUInt16LE(18) & P_OVERFLOW)) return new BigInt64Array(0);
    raw = readAt(fd, overflow * meta.pageSize + HEADER, bytes);
  } else raw = page.subarray(data, data + bytes);
  const words = new BigInt64Array(Math.floor(raw.length / 8));
  for (let i = 0; i < words.length; i++) words[i] = raw.readBigInt64LE(i * 8);
  return words;
}

function addFree(idl: BigInt64Array, meta: Meta, from: number, free: Set<number>): void {
  const count = Math.min(Number(idl[0] ?? 0n), idl.length - 1);
  for (let i = 1; i <= count; i++) {
    let entry = idl[i]!;
    let run = 1n;
    if (entry <= 0n) {
      if (entry === 0n) continue;
      run = -entry;
      entry = idl[++i] ?? 0n;
    }
    // (only the pages that matter, so a damaged run of 2^60 pages costs nothing)
    const end = Math.min(Number(entry + run), meta.lastPage + 1);
    for (let p = Math.max(Number(entry), from); p < end; p++) free.add(p);
  }
}

function readAt(fd: number, at: number, length: number): Buffer {
  const buf = Buffer.alloc(length);
  const got = readSync(fd, buf, 0, length, at);
  return buf.subarray(0, got);
}
