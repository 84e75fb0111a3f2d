// Readers produce records a chunk at a time. Handing them on through an async generator costs a few
// microtask hops per `yield`, which on a 200k-row CSV is as much as parsing it; this iterator serves
// a batch item by item with one already-settled promise each, and keeps the batches for a reader
// of them (inBatches: no promise per item at all).

export interface BatchedItems<T> extends AsyncIterable<T> {
  /** the same items, a batch at a time: iterate this or the items, not both */
  readonly batches: AsyncIterable<T[]>;
}

export function itemsOf<T>(batches: AsyncIterable<T[]>): BatchedItems<T> {
  return {
    batches,
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

/** `items` a batch at a time: the reader's own batches when it has them (itemsOf), else one item each. */
export function inBatches<T>(items: AsyncIterable<T> & { readonly batches?: AsyncIterable<T[]> }): AsyncIterable<T[]> {
  return items.batches ?? oneEach(items);
}

async function* oneEach<T>(items: AsyncIterable<T>): AsyncIterable<T[]> {
  for await (const item of items) yield [item];
}
