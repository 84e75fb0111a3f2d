// Decodes list pages in worker threads, so that paging a large chatbot uses a second core: the calls
// (budget, retries, errors) stay on the main thread, the CPU of each page (JSON, checks, the
// comparison hash of every listing) goes to a worker (page-worker.ts), and its rows come back in
// columns (their typed arrays transferred, not copied).
// The pool never fails a page: a page no worker is ready for (still loading, or gone) or that a
// worker does not take is answered with undefined, and the caller decodes it on its own thread with
// the same rowsOf; so is a page whose caller aborts. A worker that fails, or holds pages without
// answering for stallMs, is ended and what it held is answered undefined (after a few failures no
// new one is started); close() ends every worker and answers every page. Workers without pages do
// not keep the process alive, and end after idleMs.
import { availableParallelism } from 'node:os';
import type { Worker } from 'node:worker_threads';
import type { RawBody } from '../../api/types.js';
import type { PageReply, PageTask, PageWorkerOptions } from './page-worker.js';
import type { DecodedPage } from './page-decode.js';
import type { RowOptions } from './remote-rows.js';
import { startWorker, workerEntry } from '../util/worker-start.js';

export interface PagePoolOptions {
  /** worker threads (default decodeThreads()) */
  size?: number;
  /** the worker module (default page-worker next to this file; tests pass one that fails) */
  entry?: URL;
  /** a worker holding pages that answers none for this long is ended, its pages answered undefined (default 10 s) */
  stallMs?: number;
  /** the workers end after this long without a page, and start again on the next (default 30 s) */
  idleMs?: number;
}

export interface PagePool {
  /**
   * The page's rows as rowsOf(items, opts) gives them, decoded in a worker; undefined: decode it
   * yourself (at once while no worker is loaded; on `signal`'s abort). Never rejects.
   */
  decode(res: RawBody, opts: RowOptions, signal?: AbortSignal): Promise<DecodedPage | undefined>;
  /** ends every worker and answers every page; later pages are answered undefined */
  close(): Promise<void>;
  /** workers running (neither failed, idle-ended nor closed) */
  readonly running: number;
  /** of those, the ones loaded (taking pages) */
  readonly ready: number;
  /** pages held by workers or waiting for one */
  readonly busy: number;
}

/** One worker per core past the first (the main thread keeps one), at most 2: past that the calls are the bound. */
function decodeThreads(): number {
  return Math.max(0, Math.min(2, availableParallelism() - 1));
}

let shared: PagePool | undefined;

/**
 * The process's pool: loading a worker costs ~0.1 s of CPU built, ~0.4 s through tsx, so a process
 * that pages again (the queue worker, a rerun) keeps its workers until they idle out (idleMs).
 */
export function sharedPagePool(): PagePool {
  shared ??= openPagePool();
  return shared;
}

/** tasks a worker holds at once: one at work, one waiting (so it never idles for a message's round trip) */
const PER_WORKER = 2;
/** a page takes a worker milliseconds (an 8 MiB one well under a second): 10 s without an answer is a worker that hangs */
const STALL_MS = 10_000;
const IDLE_MS = 30_000;
/** workers that fail before the pool stops starting new ones (a worker that cannot run here) */
const MAX_FAILURES = 3;

interface Task {
  id: number;
  message: PageTask;
  /** answers once; later answers (a reply after an abort) are ignored */
  answer: (page: DecodedPage | undefined) => void;
}

interface Slot {
  worker: Worker;
  ready: boolean;
  /** ended by the pool (idle, close): its exit is not a failure */
  ending: boolean;
  pending: Map<number, Task['answer']>;
  /** armed while the worker holds pages: no answer in stallMs drops it */
  stall?: NodeJS.Timeout;
}

export function openPagePool(poolOpts: PagePoolOptions = {}): PagePool {
  const size = poolOpts.size ?? decodeThreads();
  const entry = poolOpts.entry ?? workerEntry('page-worker', import.meta.url);
  const slots = new Set<Slot>();
  /** pages no worker has taken yet */
  const queue: Task[] = [];
  const stealLater = mainThreadTakes(queue);
  let closed = false;
  let failures = 0;
  let nextId = 0;
  let idle: NodeJS.Timeout | undefined;

  const start = () => {
    while (!closed && failures < MAX_FAILURES && slots.size < size) {
      const slot = startSlot(entry, { reply: onReply, drop });
      // no worker can start here (tsx not found): every page is decoded by the caller
      if (!slot) failures = MAX_FAILURES;
      else slots.add(slot);
    }
  };
  const onReply = (slot: Slot, reply: PageReply) => {
    if ('ready' in reply) slot.ready = true;
    else answerReply(slot, reply, watch);
    handOut(slots, queue, watch);
    idleLater(); // (an answer after its caller aborted arms it only here)
  };
  const watch = (slot: Slot) => {
    clearTimeout(slot.stall);
    slot.stall = setTimeout(() => drop(slot, true), poolOpts.stallMs ?? STALL_MS);
  };
  const busy = () => queue.length + [...slots].reduce((n, s) => n + s.pending.size, 0);
  const ready = () => [...slots].filter((s) => s.ready).length;
  /** no page for idleMs: the workers end (and start again on the next page) */
  const idleLater = () => {
    clearTimeout(idle);
    if (busy() > 0 || slots.size === 0) return;
    idle = setTimeout(() => {
      for (const slot of [...slots]) drop(slot, false);
    }, poolOpts.idleMs ?? IDLE_MS);
    idle.unref();
  };
  function drop(slot: Slot, failed: boolean): void {
    clearTimeout(slot.stall);
    if (!slots.delete(slot)) return;
    if (failed) failures++;
    endSlot(slot);
    if (ready() === 0) for (const task of queue.splice(0)) task.answer(undefined);
  }

  start();
  return {
    decode(res, opts, signal) {
      clearTimeout(idle);
      if (slots.size === 0) start(); // idled out (or failed): back for the pages to come
      if (closed || signal?.aborted || ready() === 0) return Promise.resolve(undefined);
      const id = nextId++;
      const page = queued(
        queue,
        { id, status: res.status, bytes: res.bytes, opts: workerOpts(opts) },
        signal,
        idleLater,
      );
      handOut(slots, queue, watch);
      if (queue.length > 0) stealLater();
      return page;
    },
    async close() {
      closed = true;
      clearTimeout(idle);
      const workers = [...slots].map((s) => s.worker);
      for (const slot of [...slots]) drop(slot, false);
      for (const task of queue.splice(0)) task.answer(undefined);
      await Promise.all(workers.map((w) => w.terminate()));
    },
    get running() {
      return slots.size;
    },
    get ready() {
      return ready();
    },
    get busy() {
      return busy();
    },
  };
}

/** A worker on `entry` in a slot, its events to the pool; undefined when no worker can start. */
function startSlot(
  entry: URL,
  on: { reply(slot: Slot, reply: PageReply): void; drop(slot: Slot, failed: boolean): void },
): Slot | undefined {
  let worker: Worker;
  try {
    worker = startWorker(entry);
  } catch {
    return undefined; // (no worker can start here: the caller decodes every page, as start() says)
  }
  const slot: Slot = { worker, ready: false, ending: false, pending: new Map() };
  worker.on('message', (reply: PageReply) => on.reply(slot, reply));
  // an uncaught error in the worker (then its exit), a reply that could not be read, an exit
  worker.on('error', () => on.drop(slot, true));
  worker.on('messageerror', () => on.drop(slot, true));
  worker.on('exit', () => on.drop(slot, !slot.ending));
  // unref after the listeners: a listener added later may ref the worker's port again, and an
  // idle pool would then keep a finished command alive until its idle timeout (30 s)
  worker.unref();
  return slot;
}

/** A slot the pool no longer holds: its pages answered undefined, its worker ended. */
function endSlot(slot: Slot): void {
  slot.ending = true;
  for (const answer of slot.pending.values()) answer(undefined);
  slot.pending.clear();
  void slot.worker.terminate();
}

/** A worker's answer to one of its pages: the page answered, the stall watch re-armed or (no page left) the worker unref'd. */
function answerReply(slot: Slot, reply: Exclude<PageReply, { ready: true }>, watch: (slot: Slot) => void): void {
  const answer = slot.pending.get(reply.id);
  slot.pending.delete(reply.id);
  if (slot.pending.size === 0) {
    clearTimeout(slot.stall);
    slot.worker.unref();
  } else watch(slot);
  answer?.(reply.page);
}

/** Hands queued pages to loaded workers with room. */
function handOut(slots: ReadonlySet<Slot>, queue: Task[], watch: (slot: Slot) => void): void {
  for (const slot of slots) {
    while (slot.ready && slot.pending.size < PER_WORKER && queue.length > 0) {
      const task = queue.shift()!;
      slot.pending.set(task.id, task.answer);
      // a worker with work keeps the process alive until it answers, or is dropped
      if (slot.pending.size === 1) {
        slot.worker.ref();
        watch(slot);
      }
      slot.worker.postMessage(task.message);
    }
  }
}

/** A page put in the queue: its answer (once), undefined when `signal` aborts first; `settled` after it. */
function queued(
  queue: Task[],
  message: PageTask,
  signal: AbortSignal | undefined,
  settled: () => void,
): Promise<DecodedPage | undefined> {
  return new Promise((resolve) => {
    let done = false;
    const answer = (page: DecodedPage | undefined) => {
      if (done) return;
      done = true;
      signal?.removeEventListener('abort', onAbort);
      resolve(page);
      settled();
    };
    const task: Task = { id: message.id, message, answer };
    const onAbort = () => {
      const at = queue.indexOf(task);
      if (at >= 0) queue.splice(at, 1);
      answer(undefined);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    queue.push(task);
  });
}

/**
 * The main thread takes a queued page itself when it has nothing else to do: setImmediate runs
 * after the I/O that is ready (the calls come first), one page a turn of the event loop.
 */
function mainThreadTakes(queue: Task[]): () => void {
  let stealing = false;
  const steal = () => {
    stealing = false;
    queue.shift()?.answer(undefined);
    if (queue.length > 0) stealLater();
  };
  const stealLater = () => {
    if (stealing) return;
    stealing = true;
    setImmediate(steal);
  };
  return stealLater;
}

/** the row options as they cross to a worker (a Set does not cross as itself) */
function workerOpts(opts: RowOptions): PageWorkerOptions {
  return {
    keyBy: opts.keyBy,
    ignore: [...(opts.ignore ?? [])],
    keepCompared: Boolean(opts.keepCompared),
    keepOtherKey: Boolean(opts.keepOtherKey),
  };
}
