// readAhead: reads a source ahead of its consumer in bounded memory, hands on a failure after the
// items read before it, and stops the source when closed.
import { describe, expect, it } from 'vitest';
import { readAhead } from '../../src/sync/read-ahead.js';

/** A source of `n` items that counts how many were taken from it and whether it was closed. */
function counted(n: number, failAt?: number) {
  const seen = { pulled: 0, closed: false };
  async function* gen() {
    try {
      for (let i = 0; i < n; i++) {
        if (i === failAt) throw new Error(`broken at ${i}`);
        seen.pulled++;
        yield i;
      }
    } finally {
      seen.closed = true;
    }
  }
  return { source: gen(), seen };
}

const settle = () => new Promise((r) => setTimeout(r, 20));
const each = (i: number) => ({ value: i * 10, bytes: 100 });

describe('readAhead', () => {
  it('reads ahead up to its byte limit while nobody takes, then the rest as taken, in order', async () => {
    const { source, seen } = counted(50);
    const ahead = readAhead(source, each, 1000);
    await settle();
    expect(seen.pulled).toBe(10);
    const out: number[] = [];
    for await (const v of ahead) out.push(v);
    expect(out).toEqual(Array.from({ length: 50 }, (_, i) => i * 10));
    expect(seen.closed).toBe(true);
  });

  it("hands on the source's failure after the items read before it", async () => {
    const { source } = counted(20, 7);
    const ahead = readAhead(source, each, 10_000);
    await settle();
    const out: number[] = [];
    await expect(
      (async () => {
        for await (const v of ahead) out.push(v);
      })(),
    ).rejects.toThrow('broken at 7');
    expect(out).toEqual([0, 10, 20, 30, 40, 50, 60]);
  });

  it('close stops the reading and closes the source, without anyone taking', async () => {
    const { source, seen } = counted(1000);
    const ahead = readAhead(source, each, 500);
    await settle();
    await ahead.close();
    expect(seen.closed).toBe(true);
    expect(seen.pulled).toBe(5);
  });

  it('a consumer that stops early closes the source', async () => {
    const { source, seen } = counted(1000);
    for await (const v of readAhead(source, each, 500)) if (v === 30) break;
    expect(seen.closed).toBe(true);
    expect(seen.pulled).toBeLessThan(20);
  });
});
