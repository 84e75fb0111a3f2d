// A large CSV feed file read on a thread of its own (feed-worker.ts), so that parsing it does not
// wait for the thread that pages the chatbot's listings and plans: the read starts with the run,
// goes ahead while the pages come (at most AHEAD batches), and goes on beside the planning. A
// worker serves one read at a time and is kept for the process's next one (loading one costs
// 0.3 s of CPU built, more through tsx); unused for IDLE_MS, it ends, and idle it keeps no process alive. The
// items are the ones readCsv gives on this thread (test/sync/feed-thread.test.ts): each record of
// the joined text form comes as its text and listing key, its data rebuilt from the text only
// when asked for (a rerun's record whose stamp matches is never mapped, so never rebuilt).
// Only files: a URL's bytes stay with the main thread's budgets, retries and logs, and a download
// must not stall while the run pages. A file below THREAD_MIN_BYTES is read on this thread: loading
// a worker costs more than parsing it.
import { stat } from 'node:fs/promises';
import type { Worker } from 'node:worker_threads';
import { AbortedError, FeedReadError, RecordParseError } from '../../errors.js';
import type { FeedSource } from '../../feeds/config-schema.js';
import { CsvRecord, RowShape } from '../../feeds/csv/csv-record.js';
import { itemsOf } from '../../feeds/item-batches.js';
import { feedPath } from '../../feeds/source/file-source.js';
import type { FeedItem, RecordPosition } from '../../feeds/types.js';
import { keyed } from '../../mapping/item-key.js';
import type { KeyedItem } from '../../mapping/types.js';
import type { KeyedFeed } from './keyed-feed.js';
import type { MappingConfig } from '../../mapping/config-schema.js';
import type { FeedBatch, FeedRead, FeedWorkerMessage, FeedWorkerTask, WireFailure, WireItem } from './feed-wire.js';
import { startWorker, workerEntry } from '../util/worker-start.js';

/** 4 MiB: about 10k listings of a typical export */
export const THREAD_MIN_BYTES = 4 * 1024 * 1024;
/** batches the worker may read ahead of the planning (16k records: a few MB) */
const AHEAD = 16;
const BATCH_SIZE = 1000;
/**
 * The worker's young generation, at most. Node's default follows the machine's memory (192 MB on
 * one of 16 GB or more), and a parse's garbage fills it within a run and keeps it resident (a first
 * sync of 30k listings: the thread's heap 48 MB committed; 28 MB so). What lives there is the batch
 * being built and the record in hand; the rest is gone at each scavenge.
 */
export const YOUNG_GENERATION_MB = 12;

export interface FeedThreadOptions {
  baseDir: string;
  mapping: MappingConfig;
  keyBy: 'MLSNumber' | 'URL';
  signal?: AbortSignal;
  /** files smaller than this are read on the caller's thread (default THREAD_MIN_BYTES) */
  minBytes?: number;
  /** the worker module (tests; a read on one gets a worker of its own, not kept) */
  entry?: URL;
  /** a worker that has not ended a read this long after being told to stop is ended (default STOP_WAIT_MS; tests) */
  stopWaitMs?: number;
}

/** The feed read by the worker, its items keyed there. */
export interface FeedThread extends KeyedFeed {
  /** ends the worker (at once if the items were not read to their end) */
  close(): Promise<void>;
}

/**
 * A record read by the worker: its text and key as the worker found them, its data (the record
 * builder's object for the header and the text's fields) made on first use, as the reader's on this thread.
 */
export class ThreadRecord extends CsvRecord {
  constructor(
    position: RecordPosition,
    text: string,
    /** the listing key, as the feed's mapping reads it from the data (CompiledMapping.keyOf) */
    readonly key: string | undefined,
    shape: RowShape,
  ) {
    super(position, text, shape);
  }
}

/** The feed read by a worker, when it is a CSV file of at least `minBytes`; else undefined (read it on this thread). */
export async function openFeedThread(source: FeedSource, o: FeedThreadOptions): Promise<FeedThread | undefined> {
  if (source.kind !== 'csv' || !source.path) return undefined;
  let size: number;
  try {
    size = (await stat(feedPath(o, source.path))).size;
  } catch {
    return undefined; // the reader on this thread says what is wrong with it, as it always has
  }
  if (size < (o.minBytes ?? THREAD_MIN_BYTES)) return undefined;
  const read: FeedRead = {
    id: nextRead++,
    source: { ...source, path: source.path },
    baseDir: o.baseDir,
    mapping: o.mapping,
    keyBy: o.keyBy,
    ahead: AHEAD,
    batchSize: BATCH_SIZE,
  };
  return feedThread(takeWorker(o.entry), read, o.signal, o.stopWaitMs ?? STOP_WAIT_MS);
}

/** a worker that has not ended a read this long after being told to stop is ended */
const STOP_WAIT_MS = 5_000;
const IDLE_MS = 30_000;

interface Slot {
  worker: Worker;
  /** it exited (failed, or ended): never given a read again */
  gone: boolean;
  /** started on a module of the caller's (tests): ended after its read */
  own: boolean;
  idleTimer?: NodeJS.Timeout;
}

/** workers waiting for a read, the process's */
const idle: Slot[] = [];
let nextRead = 1;

/** workers kept for the next read (tests, diagnostics) */
export function idleFeedWorkers(): number {
  return idle.length;
}

function takeWorker(entry: URL | undefined): Slot {
  const kept = entry ? undefined : idle.pop();
  if (kept) {
    clearTimeout(kept.idleTimer);
    kept.worker.ref();
    return kept;
  }
  const slot: Slot = {
    worker: startWorker(entry ?? workerEntry('feed-worker', import.meta.url), {
      resourceLimits: { maxYoungGenerationSizeMb: YOUNG_GENERATION_MB },
    }),
    gone: false,
    own: entry !== undefined,
  };
  slot.worker.once('exit', () => {
    slot.gone = true;
    leaveIdle(slot);
  });
  return slot;
}

function leaveIdle(slot: Slot): void {
  const at = idle.indexOf(slot);
  if (at >= 0) idle.splice(at, 1);
}

function giveBack(slot: Slot, keep: boolean): void {
  if (slot.gone) return;
  if (!keep || slot.own) {
    void slot.worker.terminate();
    return;
  }
  slot.worker.unref();
  slot.idleTimer = setTimeout(() => {
    leaveIdle(slot);
    void slot.worker.terminate();
  }, IDLE_MS);
  slot.idleTimer.unref();
  idle.push(slot);
}

function feedThread(slot: Slot, read: FeedRead, signal: AbortSignal | undefined, stopWaitMs: number): FeedThread {
  const { worker } = slot;
  const file = read.source.path;
  const queue: FeedWorkerMessage[] = [];
  let notify: (() => void) | undefined;
  /** why the items end early: the worker failed or stopped, or the run was aborted */
  let stopped: Error | undefined;
  /** the worker is done with this read (it said so, or it is gone, or it did not answer a stop in time) */
  let done = false;
  /** it said so: it can take the next read */
  let answered = false;
  let whenDone: (() => void) | undefined;
  const wake = () => {
    notify?.();
    notify = undefined;
  };
  const onMessage = (m: FeedWorkerMessage) => {
    if (m.id !== read.id) return;
    if ('end' in m || 'failed' in m) {
      answered = true;
      finished();
    }
    queue.push(m);
    wake();
  };
  const onError = (err: Error) => {
    stopped ??= new Error(`the feed thread reading ${file} failed: ${err.message}`, { cause: err });
    wake();
  };
  const onExit = (code: number) => {
    stopped ??= new Error(`the feed thread reading ${file} stopped (exit code ${code}) before the feed was read`);
    finished();
    wake();
  };
  const onAbort = () => {
    stopped ??= new AbortedError(`reading ${file}`);
    wake();
  };
  const finished = () => {
    done = true;
    whenDone?.();
  };
  worker.on('message', onMessage);
  worker.on('error', onError);
  worker.on('exit', onExit);
  if (signal?.aborted) onAbort();
  else signal?.addEventListener('abort', onAbort, { once: true });
  worker.postMessage({ read } satisfies FeedWorkerTask);

  const next = async (): Promise<FeedWorkerMessage> => {
    for (;;) {
      if (stopped) throw stopped;
      const m = queue.shift();
      if (m) return m;
      await new Promise<void>((resolve) => (notify = resolve));
    }
  };
  let closed: Promise<void> | undefined;
  const close = () => (closed ??= closing());
  async function closing(): Promise<void> {
    signal?.removeEventListener('abort', onAbort);
    if (!done) {
      worker.postMessage({ stop: read.id } satisfies FeedWorkerTask);
      const timer = setTimeout(finished, stopWaitMs);
      await new Promise<void>((resolve) => {
        whenDone = resolve;
        if (done) resolve();
      });
      clearTimeout(timer);
    }
    worker.off('message', onMessage);
    worker.off('error', onError);
    worker.off('exit', onExit);
    // kept for the next read when it answered (a worker that fails or hangs is not)
    giveBack(slot, answered);
  }
  return { items: itemsOf(threadBatches(slot, read, next, close)), mode: 'full', mark: undefined, close };
}

/** The read's items as its worker sends them, a batch at a time, each one taken said back (the worker keeps AHEAD in flight); closed at the end. */
async function* threadBatches(
  slot: Slot,
  read: FeedRead,
  next: () => Promise<FeedWorkerMessage>,
  close: () => Promise<void>,
): AsyncGenerator<KeyedItem[]> {
  let shape: RowShape | undefined;
  try {
    for (;;) {
      const m = await next();
      if ('header' in m) shape = new RowShape(m.header);
      else if ('end' in m) return;
      else if ('failed' in m) throw failureOf(m.failed);
      else {
        slot.worker.postMessage({ took: 1, id: read.id } satisfies FeedWorkerTask);
        yield batchItems(m.batch, read.source.path, shape);
      }
    }
  } finally {
    await close();
  }
}

function batchItems(b: FeedBatch, file: string, shape: RowShape | undefined): KeyedItem[] {
  const out = new Array<KeyedItem>(b.kinds.length);
  let r = 0;
  let o = 0;
  for (let i = 0; i < b.kinds.length; i++) {
    if (b.kinds[i] === 1) {
      out[i] = keyed(itemOf(b.others[o]!), b.otherKeys[o]);
      o++;
      continue;
    }
    if (!shape) throw new Error(`the feed thread reading ${file} sent a record before the header`);
    const line = b.lines[r]!;
    out[i] = new ThreadRecord(
      { file, ...(line >= 0 && { line }), index: b.indexes[r]! },
      b.texts[r]!,
      b.keys[r],
      shape,
    );
    r++;
  }
  return out;
}

function itemOf(w: WireItem): FeedItem {
  if (w.kind !== 'error') return w;
  return { ...w, error: new RecordParseError(w.error.reason, w.error.place) };
}

function failureOf(f: WireFailure): Error {
  if (f.kind === 'crash') return new Error(`the feed thread failed: ${f.message}`);
  return new FeedReadError(f.reason, f.place, f.retryable, {
    ...(f.status !== undefined && { status: f.status }),
    ...(f.retryAt !== undefined && { retryAt: new Date(f.retryAt) }),
    ...(f.credentialKey !== undefined && { credentialKey: f.credentialKey }),
    ...(f.refused && { refused: true }),
  });
}
