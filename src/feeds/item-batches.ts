// Readers produce records a chunk at a time. Handing them on through an async generator costs a few
// microtask hops per `yield`, which on a 200k-row CSV is as much as parsing it; this iterator serves
// a batch item by item with one already-settled promise each.

export function itemsOf<T>(batches: AsyncIterable<T[]>): AsyncIterable<T> {
  return {
    [Symbol.asyncIterator](): AsyncIterator<T> {
      const source = batches[Symbol.asyncIterator]();
      let batch: T[] = [];
      let i = 0;
      return {
        async next(): Promise<IteratorResult<T>> {
          while (i >= batch.length) {
            const r = await source.next();
            if (r.done) return { done: true, value: undefined };
            batch = r.value;
            i = 0;
          }
          return { done: false, value: batch[i++]! };
        },
        async return(): Promise<IteratorResult<T>> {
          await source.return?.();
          return { done: true, value: undefined };
        },
      };
    },
  };
}
