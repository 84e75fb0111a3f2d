// A running job's progress for BullMQ. Each job.updateProgress is a script that writes the job hash's
// `progress` field and adds a `progress` event to the queue's events stream (trimmed near
// `maxLenEvents`, 10,000 by default), which QueueEvents listeners (`enqueue --wait`) receive and the
// queue UI's Progress tab shows. A sync reports an event per record read and per write, so the
// updates are throttled: at most one every `everyMs` (1 s), the latest data wins, and the last is
// sent when the job's run ends (flush), so a run of any size makes a bounded number of Redis calls.

export interface ProgressThrottle {
  /** the job's progress now: sent at once, or with the next update allowed */
  report(data: object): void;
  /** send what waits (the run's last progress) and stop: awaited before the job's run is recorded */
  flush(): Promise<void>;
}

export const PROGRESS_EVERY_MS = 1000;

export function createProgressThrottle(
  send: (data: object) => Promise<unknown>,
  opts: { everyMs?: number; onError?: (err: unknown) => void; now?: () => number } = {},
): ProgressThrottle {
  const everyMs = opts.everyMs ?? PROGRESS_EVERY_MS;
  const now = opts.now ?? Date.now;
  let last = -Infinity;
  let waiting: object | undefined;
  let timer: NodeJS.Timeout | undefined;
  let sending: Promise<void> = Promise.resolve();
  let stopped = false;
  const sendWaiting = () => {
    timer = undefined;
    const data = waiting;
    waiting = undefined;
    if (data === undefined) return;
    last = now();
    // one update in flight at a time, in order; a job gone (or Redis away) loses a progress, never the run
    sending = sending
      .then(() => send(data))
      .then(
        () => undefined,
        (err: unknown) => opts.onError?.(err),
      );
  };
  return {
    report(data) {
      if (stopped) return;
      waiting = data;
      if (timer) return;
      const wait = last + everyMs - now();
      if (wait <= 0) sendWaiting();
      else timer = setTimeout(sendWaiting, wait);
    },
    async flush() {
      stopped = true;
      clearTimeout(timer);
      sendWaiting();
      await sending;
    },
  };
}
