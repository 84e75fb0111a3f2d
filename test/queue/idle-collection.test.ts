// A worker's idle collection (src/queue/idle-collection.ts, issue 55 point 5) over real BullMQ
// workers on the real Redis: never while a job of the process is active (on either queue), once
// when the last one ends and the process stays idle, not again until another job has run.
import '../setup/needs-redis.js';
import type { Processor } from 'bullmq';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/log.js';
import { idleCollection } from '../../src/queue/idle-collection.js';
import { startWorkers, waitForJob, type WorkerSet } from '../../src/queue/index.js';
import { deferred, redisAt, until, useQueues } from './helpers.js';

const AFTER_MS = 300;
/** long enough for a collection that should not come to have come (several times its delay) */
const quiet = () => new Promise((r) => setTimeout(r, 4 * AFTER_MS));

const q = useQueues();
let workers: WorkerSet | undefined;
afterEach(async () => {
  await workers?.close(5000);
  workers = undefined;
});

/** Jobs that run until their gate (by job name) opens; the collections, with the jobs active at each. */
function gatedWorkers() {
  const gates = new Map<string, ReturnType<typeof deferred<void>>>();
  const started = new Set<string>();
  let active = 0;
  const collections: number[] = [];
  const gate = (name: string) => {
    if (!gates.has(name)) gates.set(name, deferred<void>());
    return gates.get(name)!;
  };
  const processor: Processor = async (job) => {
    active++;
    started.add(job.name);
    try {
      await gate(job.name).promise;
      return { outcome: 'ok' };
    } finally {
      active--;
    }
  };
  workers = startWorkers(
    q.queues,
    { sync: processor, settings: processor },
    {
      redis: redisAt(q.prefix),
      concurrency: 2,
      lockDurationMs: 8000,
      stalledIntervalMs: 3000,
      watchdogMs: 60_000,
      idleCollection: { afterMs: AFTER_MS, collect: () => collections.push(active) },
      logger: silentLogger,
    },
  );
  return {
    collections,
    run: async (kind: 'sync' | 'settings', name: string) => {
      const job = await q.queues[kind].add(name, {});
      await until(`${name} to start`, async () => started.has(name));
      return job.id!;
    },
    end: async (kind: 'sync' | 'settings', name: string, id: string) => {
      gate(name).resolve();
      expect((await waitForJob(q.redis, q.queues, kind, id)).state).toBe('completed');
    },
  };
}

describe("a worker's idle collection", () => {
  it('runs never while a job is active, once when the last ends, and again only after another job', async () => {
    const w = gatedWorkers();
    const a = await w.run('sync', 'a');
    const b = await w.run('settings', 'b');
    await quiet();
    expect(w.collections).toEqual([]);

    // one queue's job ends while the other's still runs: the process is not idle
    await w.end('sync', 'a', a);
    await quiet();
    expect(w.collections).toEqual([]);

    await w.end('settings', 'b', b);
    await until('the idle collection', async () => w.collections.length > 0);
    await quiet();
    expect(w.collections).toEqual([0]);

    // another job: it runs with no collection, and one follows its end
    const c = await w.run('sync', 'c');
    await quiet();
    expect(w.collections).toEqual([0]);
    await w.end('sync', 'c', c);
    await until('the second idle collection', async () => w.collections.length > 1);
    await quiet();
    expect(w.collections).toEqual([0, 0]);
  }, 30_000);

  it('trims after each collection, once, and reports what the trim gave back', async () => {
    const done: string[] = [];
    const trimmed: Array<{ ms: number; bytes: number }> = [];
    const idle = idleCollection({
      afterMs: 10,
      collect: () => done.push('collect'),
      trim: () => done.push('trim'),
      onTrimmed: (t) => trimmed.push(t),
    });
    idle.started();
    idle.ended();
    await until('the trim', async () => trimmed.length > 0);
    await quiet();
    expect(done).toEqual(['collect', 'trim']);
    expect(trimmed).toEqual([{ ms: expect.any(Number), bytes: expect.any(Number) }]);
    expect(trimmed[0]!.bytes).toBeGreaterThanOrEqual(0);
    idle.stop();
  });
});
