// Whether a running job is gone from Redis: in no list or set of its queue (BullMQ's getState
// answers 'unknown'), its keys lost in a failover to a replica that lacked them, evicted, flushed,
// obliterated or deleted by hand. A run that lost a lock asks, to tell a job another attempt will
// take over (a stalled check or a sibling's sweep puts it back to wait) from one no attempt ever
// will (JOB_LOST: errors.ts). One look, bounded: Redis may be what failed.
import { within } from '../redis/deadline.js';

/** How long the look may take at most. */
export const JOB_LOOK_MS = 1000;

/** True only when the look answered 'unknown' within `ms`; a look that fails (thrown or rejected) or is slow says false (the job taken over, as before the look was made). */
export async function jobGone(look: () => Promise<string>, ms = JOB_LOOK_MS): Promise<boolean> {
  // (a failed look answers "not gone", the safe side: the caller says the job taken over, as before looks)
  const state = await within(
    Promise.resolve()
      .then(look)
      .catch(() => undefined),
    ms,
    undefined,
  );
  return state === 'unknown';
}
