// Ahead of step "commit": the writes the API acknowledged, recorded in the lane's state as they land
// (issue 55, point 1), so that a run killed before its commit (SIGKILL, OOM, a lost worker) has not
// lost them: the next run finds those listings unchanged (its planner compares the stored
// fingerprint of the listing as written) and sends them no more. What is recorded is the fingerprint
// and unlisted fields of what was written, as the lane's commit records them (with everything else:
// stamps, marks, deletes, the feed mark; once all of them are in the store, drain() says so and the
// commit leaves them out: lane-commit.ts).
//
// The bound: an update's slot of the write pool is freed only once its acknowledgement is in the
// store (write/execute.ts awaits add's promise), so a write the next run sends again is one that held
// a slot when the process died (in flight, or answered and not yet recorded): at most
// api.concurrency. A create's slot is not held: the next run finds the listing the killed run
// created by its key, its listed fields those it would write, and records its fingerprint without
// a write (plan.ts). Where the bound does not hold: an apply that fails (told to `onError`, the run
// goes on: the lane's commit records the same writes), and a create of a key the chatbot lost behind
// feedsync's back whose record also changed since its last write (the next run holds its stored
// fingerprint of before, and sends it again as an update).
//
// Each apply is the store's applyInBackground (kv-store.ts): the state file's is committed and
// flushed by lmdb's write thread, not the one that sends the writes (its synchronous apply took 6-10
// ms of that thread, under load: every 32 acknowledgements, a quarter of a first sync); Redis's is a
// MULTI. One apply at a time, in the order the acknowledgements came: what lands during one goes in
// the next, started as soon as it ends when an update waits in it (or once ACK_BATCH wait), else
// ACK_EVERY_MS after its first acknowledgement (a first sync's creates: about 4 applies a second).
// The cost, 100k listings at 20 ms and 16 in flight, Node 24 (docs/benchmarks.md, issue 55 point 1):
// a first sync's wall 1.01-1.03x of the records made on the sending thread in 250 ms batches (its
// thread spends 0.4 s in them, not 1.9-7.5 s); a 1% rerun's 966 updates, each waiting for its
// record, 0.1-0.26 s more after the paging (+5-15%).
// Stamps are not recorded ahead: a listing whose photos were not all mirrored loses its stamp at the
// commit, and the next run must map it again.
import type { KvStore, StateChange } from '../../state/kv-store.js';
import { fingerprintNamespace, unlistedNamespace } from '../model/state-names.js';

/** acknowledgements that start an apply at once, though none of them is waited for */
export const ACK_BATCH = 256;
/** how long an acknowledgement no write waits for (a create's) waits for its apply, at most */
export const ACK_EVERY_MS = 250;

export interface AckedWrites {
  /**
   * A write the API acknowledged: the fingerprint of its listing as written, its unlisted fields
   * (JSON). Resolved once it is in the store (or its apply failed: told to onError). `wait`: the
   * caller waits for that (an update's slot), so its apply starts as soon as none is under way.
   */
  add(key: string, fingerprint: string, unlisted: string, wait: boolean): Promise<void>;
  /**
   * records what waits and waits for every apply started: the lane's commit comes after (it may
   * delete a key recorded here). Resolves to how many acknowledgements are in the store (those of
   * an apply that failed are not): the commit leaves out what they hold (lane-commit.ts).
   */
  drain(): Promise<number>;
}

/** The acknowledgements of one apply, and its end (applied or failed) for those who wait. */
interface Batch {
  fingerprints: Array<[string, string]>;
  unlisted: Array<[string, string]>;
  /** an acknowledgement in it is waited for, or its time (ACK_EVERY_MS) is up: applied once none is under way */
  due: boolean;
  done: Promise<void>;
  end: () => void;
}

function newBatch(): Batch {
  let end!: () => void;
  const done = new Promise<void>((resolve) => (end = resolve));
  return { fingerprints: [], unlisted: [], due: false, done, end };
}

/**
 * The acknowledged writes of `lane`, recorded in `store`, one apply at a time. A failed apply is told
 * to `onError` and the run goes on: the lane's commit records the same writes (a retry cannot help
 * sooner than that).
 */
export function recordAcked(store: KvStore, lane: string, onError: (err: unknown) => void): AckedWrites {
  let batch = newBatch();
  let timer: NodeJS.Timeout | undefined;
  let applying: Promise<void> | undefined;
  let stored = 0;
  const apply = (b: Batch): Promise<void> => {
    const changes: StateChange[] = [
      { ns: fingerprintNamespace(lane), set: b.fingerprints },
      { ns: unlistedNamespace(lane), set: b.unlisted },
    ];
    try {
      return store.applyInBackground(changes).then(() => void (stored += b.fingerprints.length), onError);
    } catch (err) {
      onError(err);
      return Promise.resolve();
    }
  };
  const next = () => {
    if (applying || !(batch.due || batch.fingerprints.length >= ACK_BATCH)) return;
    clearTimeout(timer);
    timer = undefined;
    const b = batch;
    batch = newBatch();
    applying = apply(b).then(() => {
      applying = undefined;
      b.end();
      next();
    });
  };
  // (the acknowledgements of one bunch of answers are told one after the other: execute.ts's afterTheWrites)
  const soon = () => queueMicrotask(next);
  return {
    add(key, fingerprint, fields, wait) {
      batch.fingerprints.push([key, fingerprint]);
      batch.unlisted.push([key, fields]);
      if (wait || batch.fingerprints.length >= ACK_BATCH) {
        batch.due = true;
        soon();
      } else if (timer === undefined && !batch.due) {
        const b = batch;
        timer = setTimeout(() => {
          timer = undefined;
          b.due = true;
          next();
        }, ACK_EVERY_MS);
        // (a lane that ended without its drain, a failed one, keeps no process alive for it)
        timer.unref();
      }
      return batch.done;
    },
    async drain() {
      const last = batch;
      if (last.fingerprints.length === 0) await applying;
      else {
        last.due = true;
        next();
        await last.done;
      }
      return stored;
    },
  };
}
