// Reads a feed ahead of its consumer, in bounded memory: the sync starts reading (and preparing)
// feed records while the chatbot's listings are still being paged, so the feed's parsing fills the
// time the paging waits on the network or on its decoding threads. At most `maxBytes` of prepared
// items wait; past that the reading pauses until the consumer takes some.
export interface Prepared<T> {
  value: T;
  /** about how much memory it holds while it waits */
  bytes: number;
}

export interface ReadAhead<T> extends AsyncIterable<T> {
  /** stops the reading (the source's return() is called) and waits for it to settle */
  close(): Promise<void>;
}

export function readAhead<S, T>(source: AsyncIterable<S>, prepare: (item: S) => Prepared<T>, maxBytes: number): ReadAhead<T> {
  const it = source[Symbol.asyncIterator]();
  let queue: Array<Prepared<T> | undefined> = [];
  let head = 0;
  let held = 0;
  let ended = false;
  let closed = false;
  let failure: { err: unknown } | undefined;
  let wakeReader: (() => void) | undefined;
  let wakeTaker: (() => void) | undefined;
  const wake = (w: (() => void) | undefined) => w?.();

  const pump = (async () => {
    try {
      while (!closed) {
        if (held >= maxBytes) {
          await new Promise<void>((resolve) => (wakeReader = resolve));
          continue;
        }
        const r = await it.next();
        if (r.done) break;
        const p = prepare(r.value);
        queue.push(p);
        held += p.bytes;
        wake(wakeTaker);
        wakeTaker = undefined;
      }
    } catch (err) {
      // handed to the consumer after the items read before it, where it happened
      failure = { err };
    } finally {
      ended = true;
      wake(wakeTaker);
      wakeTaker = undefined;
    }
  })();

  const take = (): Prepared<T> | undefined => {
    if (head >= queue.length) return undefined;
    const p = queue[head];
    queue[head++] = undefined;
    if (head > 4096 && head * 2 > queue.length) {
      queue = queue.slice(head);
      head = 0;
    }
    return p;
  };

  const close = async () => {
    closed = true;
    wake(wakeReader);
    wakeReader = undefined;
    await pump;
    queue = [];
    head = 0;
    await it.return?.();
  };

  return {
    close,
    [Symbol.asyncIterator]: () => ({
      async next(): Promise<IteratorResult<T>> {
        for (;;) {
          const p = take();
          if (p) {
            held -= p.bytes;
            if (held < maxBytes) {
              wake(wakeReader);
              wakeReader = undefined;
            }
            return { done: false, value: p.value };
          }
          if (ended) {
            if (failure) {
              const { err } = failure;
              failure = undefined;
              throw err;
            }
            return { done: true, value: undefined };
          }
          await new Promise<void>((resolve) => (wakeTaker = resolve));
        }
      },
      async return(): Promise<IteratorResult<T>> {
        await close();
        return { done: true, value: undefined };
      },
    }),
  };
}
