// The emulator's timed waits (the latency before an answer, the delay between a stream's fragments),
// which its close ends at once. A timer and a Set entry a wait: node:timers/promises with an
// AbortSignal adds and removes an EventTarget listener a wait, a few per cent of the emulator's CPU
// per create at 10 ms latency.

export interface Waits {
  /** resolves after `ms`; rejects at once if the waits are ended, or when they are */
  wait(ms: number): Promise<void>;
  /** ends every wait in flight and every later one */
  endAll(): void;
  readonly ended: boolean;
}

/** What a wait in flight is ended by. */
type End = () => void;

export function createWaits(): Waits {
  const inFlight = new Set<End>();
  let ended = false;
  const endedError = () => new Error('the emulator closed');
  return {
    wait(ms) {
      if (ended) return Promise.reject(endedError());
      return new Promise<void>((resolve, reject) => {
        const end: End = () => {
          clearTimeout(timer);
          reject(endedError());
        };
        const timer = setTimeout(() => {
          inFlight.delete(end);
          resolve();
        }, ms);
        inFlight.add(end);
      });
    },
    endAll() {
      ended = true;
      for (const end of inFlight) end();
      inFlight.clear();
    },
    get ended() {
      return ended;
    },
  };
}
