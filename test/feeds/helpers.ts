import type { FeedItem } from '../../src/feeds/index.js';

/** Bytes of `input` cut into pieces of `size` bytes (chunk boundaries anywhere). */
export async function* chunks(input: string | Buffer, size: number): AsyncIterable<Buffer> {
  const buf = typeof input === 'string' ? Buffer.from(input) : input;
  for (let i = 0; i < buf.length; i += size) yield buf.subarray(i, i + size);
}

export async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const i of items) out.push(i);
  return out;
}

/** Items, and the error that ended the iteration (if any). */
export async function collectUntilError(items: AsyncIterable<FeedItem>): Promise<{ items: FeedItem[]; error?: Error }> {
  const out: FeedItem[] = [];
  try {
    for await (const i of items) out.push(i);
    return { items: out };
  } catch (error) {
    return { items: out, error: error as Error };
  }
}
