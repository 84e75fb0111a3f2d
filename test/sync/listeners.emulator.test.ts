// A run with api.concurrency 16 has that many calls listening on its signal at once: by design, so
// Node must not print "MaxListenersExceededWarning ... possible memory leak" into the ops' logs.
import { describe, expect, it } from 'vitest';
import { rows, useEmulatorSync } from './helpers/feed.js';

const emulator = useEmulatorSync();

describe('a run with many calls in flight', () => {
  it('creates and pages at concurrency 16 without a listener warning', async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(`${w.name}: ${w.message}`);
    process.on('warning', onWarning);
    try {
      const env = emulator.env();
      await env.writeFeed(rows(400));
      const first = await env.sync(emulator.te(), env.feed(), { api: { concurrency: 16, pageSize: 10 } });
      expect(first.counts.created).toBe(400);
      const again = await env.sync(emulator.te(), env.feed(), { api: { concurrency: 16, pageSize: 10 } });
      expect(again.counts.unchanged).toBe(400);
      await new Promise((r) => setImmediate(r)); // warnings are emitted on the next tick
    } finally {
      process.off('warning', onWarning);
    }
    expect(warnings.filter((w) => w.startsWith('MaxListenersExceededWarning'))).toEqual([]);
  });
});
