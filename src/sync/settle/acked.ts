// Ahead of step "commit": the writes the API acknowledged, recorded in the lane's state as they land
// (issue 55, point 1), so that a run killed before its commit (SIGKILL, OOM, a lost worker) has not
// lost them: the next run finds those listings unchanged (its planner compares the stored
// fingerprint of the listing as written) and sends them no more. Recorded in batches, each one
// apply of the store the lane commits to (one LMDB transaction or one Redis MULTI): ACK_EVERY_MS
// after the first acknowledgement that waits, or at ACK_BATCH, whichever comes first, one apply at
// a time. Why not each one: the state file's apply is synchronous and flushed (fsync) before it
// returns, 6-10 ms here, on the thread that sends the writes; every 32 acknowledgements that was a
// quarter of a first sync's thread at 800 writes/s (the bench: 313 applies, 3.5 s of 22 s). At 250 ms,
// about 4 applies a second. A crash loses at most the acknowledgements not yet applied: those of the
// last ACK_EVERY_MS (at most ACK_BATCH; at an API budget of 200 calls/s, 50) and those that landed
// during the apply under way; the next run sends those again, with the writes that were in flight
// (≤ api.concurrency). What is recorded here is the fingerprint and unlisted fields of what
// was written, as the lane's commit records them (it still does, with everything else: stamps,
// marks, deletes, the feed mark). Stamps are not recorded ahead: a listing whose photos were not
// all mirrored loses its stamp at the commit, and the next run must map it again.
import type { KvStore, StateChange } from '../../state/kv-store.js';
import { fingerprintNamespace, unlistedNamespace } from '../model/state-names.js';

/** acknowledgements recorded at once, at most (a crash re-sends at most about this many beside those in flight) */
export const ACK_BATCH = 256;
/** how long an acknowledgement waits for its batch, at most */
export const ACK_EVERY_MS = 250;

export interface AckedWrites {
  /** a write the API acknowledged: the fingerprint of its listing as written, its unlisted fields (JSON) */
  add(key: string, fingerprint: string, unlisted: string): void;
  /** records what waits and waits for every apply started: the lane's commit comes after (it may delete a key recorded here) */
  drain(): Promise<void>;
}

/**
 * The acknowledged writes of `lane`, recorded in `store` in batches. A failed apply is told to
 * `onError` and the run goes on: the lane's commit records the same writes (a retry cannot help
 * sooner than that).
 */
export function recordAcked(store: KvStore, lane: string, onError: (err: unknown) => void): AckedWrites {
  let fingerprints: Array<[string, string]> = [];
  let unlisted: Array<[string, string]> = [];
  let timer: NodeJS.Timeout | undefined;
  let applying: Promise<void> = Promise.resolve();
  const flush = () => {
    clearTimeout(timer);
    timer = undefined;
    if (fingerprints.length === 0) return;
    const changes: StateChange[] = [
      { ns: fingerprintNamespace(lane), set: fingerprints },
      { ns: unlistedNamespace(lane), set: unlisted },
    ];
    fingerprints = [];
    unlisted = [];
    // one apply at a time, in the order the acknowledgements came
    applying = applying.then(() => store.apply(changes)).catch(onError);
  };
  return {
    add(key, fingerprint, fields) {
      fingerprints.push([key, fingerprint]);
      unlisted.push([key, fields]);
      if (fingerprints.length >= ACK_BATCH) flush();
      else if (timer === undefined) {
        timer = setTimeout(flush, ACK_EVERY_MS);
        // (a lane that ended without its drain, a failed one, keeps no process alive for it)
        timer.unref();
      }
    },
    drain() {
      flush();
      return applying;
    },
  };
}
