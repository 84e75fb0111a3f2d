import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../src/errors.js';
import { fingerprintListing } from '../../src/listing/fingerprint.js';
import { silentLogger } from '../../src/log.js';
import { createExecutor, writeJobs, type ExecuteDeps } from '../../src/sync/write/execute.js';
import { authFailure } from '../../src/sync/util/auth.js';
import type { ListingChange } from '../../src/sync/model/changes.js';
import { executePlan } from './helpers/whole-plan.js';
import type { PlannedDelete } from '../../src/sync/model/plan-types.js';
import { createFakeApi } from './helpers/fake-api.js';
import { listing } from './helpers/listings.js';

const deps = (api: ExecuteDeps['api'], patch: Partial<ExecuteDeps> = {}): ExecuteDeps => ({
  api,
  serialNumber: 'SN-1',
  keyBy: 'MLSNumber',
  concurrency: 4,
  batchSize: 3,
  retries: 3,
  retryBaseDelayMs: 1,
  logger: silentLogger,
  ...patch,
});
const create = (key: string) => ({ key, listing: listing(key), fingerprint: fingerprintListing(listing(key)) });
const del = (key: string): PlannedDelete => ({
  key,
  reason: 'absent',
  deleteKey: key,
  keyType: 'MLSNumber',
  remoteIds: [],
});

describe('executePlan', () => {
  it('checks a create whose answer was lost before sending it again: no duplicate', async () => {
    const fake = createFakeApi();
    fake.failNext('create', 'timeout-after-write');
    const r = await executePlan({ creates: [create('A')], updates: [], deletes: [] }, deps(fake.api));
    expect(r).toMatchObject({ created: 1, createsFound: 1, failures: [] });
    expect(fake.listings.size).toBe(1);
    expect(fake.count('create')).toBe(1);
    expect(fake.count('list')).toBe(1);
  });

  it('sends a create again when the check shows it was not made', async () => {
    const fake = createFakeApi();
    fake.failNext('create', 'timeout', '503');
    const r = await executePlan({ creates: [create('A')], updates: [], deletes: [] }, deps(fake.api));
    expect(r.created).toBe(1);
    expect(fake.listings.size).toBe(1);
    expect(fake.count('create')).toBe(3);
  });

  it('turns an update that finds nothing into a create', async () => {
    const fake = createFakeApi();
    const u = { ...create('A'), remoteId: 9, reason: 'fields' as const, changes: [] };
    const r = await executePlan({ creates: [], updates: [u], deletes: [] }, deps(fake.api));
    expect(r).toMatchObject({ created: 1, updated: 0, updatesRecreated: 1 });
    expect([...fake.listings.values()].map((l) => l.MLSNumber)).toEqual(['A']);
    expect([...r.written]).toEqual([['A', u.fingerprint]]);
  });

  it('deletes in batches and isolates a key the service rejects', async () => {
    const fake = createFakeApi();
    for (const k of ['A', 'B', 'C', 'D', 'E', 'F', 'G']) fake.add(listing(k));
    fake.rejectDeleteOf('F');
    const r = await executePlan(
      { creates: [], updates: [], deletes: ['A', 'B', 'C', 'D', 'E', 'F', 'G'].map(del) },
      deps(fake.api),
    );
    expect(r.deleted).toBe(6);
    expect(r.failures).toMatchObject([{ key: 'F', op: 'delete', retryable: false }]);
    expect([...fake.listings.values()].map((l) => l.MLSNumber)).toEqual(['F']);
    // batches [A,B,C] [D,E,F] [G]; [D,E,F] splits into [D,E] [F]
    expect(fake.count('delete')).toBe(5);
  });

  it('keeps going after a failed item', async () => {
    const fake = createFakeApi();
    fake.failNext('create', '400');
    const r = await executePlan(
      { creates: [create('A'), create('B'), create('C')], updates: [], deletes: [] },
      deps(fake.api, { concurrency: 1 }),
    );
    expect(r.created).toBe(2);
    expect(r.failures).toMatchObject([{ key: 'A', op: 'create', retryable: false }]);
  });

  it('opens the circuit breaker when the service keeps failing', async () => {
    const fake = createFakeApi();
    fake.failNext('create', ...Array(40).fill('503'));
    const creates = Array.from({ length: 20 }, (_, i) => create(`K${i}`));
    const r = await executePlan(
      { creates, updates: [], deletes: [] },
      deps(fake.api, { concurrency: 1, retries: 1, breakerThreshold: 3 }),
    );
    expect(r.stopped).toBe('unavailable');
    expect(r.stopReason).toContain('looks down');
    expect(r.failures).toHaveLength(3);
    expect(fake.count('create')).toBe(6);
  });

  it('stops starting calls on abort and reports what was done', async () => {
    const fake = createFakeApi();
    const ac = new AbortController();
    const creates = Array.from({ length: 10 }, (_, i) => create(`K${i}`));
    const r = await executePlan(
      { creates, updates: [], deletes: [] },
      deps(fake.api, { concurrency: 2, signal: ac.signal, onProgress: ({ done }) => done === 3 && ac.abort() }),
    );
    expect(r.stopped).toBe('aborted');
    expect(r.created).toBe(fake.listings.size);
    expect(r.created).toBeGreaterThanOrEqual(3);
    expect(r.created).toBeLessThan(10);
  });

  it('counts calls, not keys, toward the breaker: one failed 100-key delete batch does not trip it', async () => {
    const fake = createFakeApi();
    const keys = Array.from({ length: 100 }, (_, i) => `K${i}`);
    for (const k of keys) fake.add(listing(k));
    fake.failNext('delete', '503');
    const r = await executePlan(
      { creates: [], updates: [], deletes: keys.map(del) },
      deps(fake.api, { batchSize: 100, retries: 0, breakerThreshold: 3 }),
    );
    expect(r.stopped).toBeUndefined();
    expect(r.failures).toHaveLength(100);
    expect(fake.count('delete')).toBe(1);
  });

  it('splits a rejected batch only on a per-record 4xx: not on 401/403/5xx', async () => {
    for (const status of ['503', '403'] as const) {
      const fake = createFakeApi();
      for (const k of ['A', 'B', 'C', 'D', 'E', 'F']) fake.add(listing(k));
      fake.failNext('delete', status, status);
      const r = await executePlan(
        { creates: [], updates: [], deletes: ['A', 'B', 'C', 'D', 'E', 'F'].map(del) },
        deps(fake.api, { concurrency: 1, batchSize: 6, retries: 0 }),
      );
      expect(fake.count('delete')).toBe(1);
      expect(r.deleted).toBe(0);
      if (status === '403') expect(r.stopped).toBe('failed');
    }
  });

  // (the refusal is a value the run words, util/auth.ts: with the variable behind the key, which the executor does not know)
  it('stops at the first 401: no call after it, the run fails with the refusal recorded, naming api.secretKey in words', async () => {
    const fake = createFakeApi();
    fake.failNext('create', '401');
    const creates = Array.from({ length: 10 }, (_, i) => create(`K${i}`));
    const r = await executePlan({ creates, updates: [], deletes: [] }, deps(fake.api, { concurrency: 1 }));
    expect(r.stopped).toBe('failed');
    expect(r.refused).toMatchObject({ status: 401 });
    expect(r.refused?.err).toBeInstanceOf(ApiError);
    expect(r.stopReason).toBeUndefined();
    expect(authFailure(r.refused!)).toContain('check api.secretKey; no further call was made');
    expect(fake.count('create')).toBe(1);
  });

  it('reconciles deletes with SuccessCount: a key the service kept is reported and keeps its fingerprint', async () => {
    const fake = createFakeApi();
    for (const k of ['A', 'B', 'C']) fake.add(listing(k));
    fake.keepOnDelete('B');
    const withCopy = (key: string): PlannedDelete => ({ ...del(key), remoteIds: [1] });
    const single = await executePlan(
      { creates: [], updates: [], deletes: ['A', 'B', 'C'].map(withCopy) },
      deps(fake.api, { batchSize: 1 }),
    );
    expect(single.deleted).toBe(2);
    expect(single.deletedKeys.sort()).toEqual(['A', 'C']);
    expect(single.failures).toMatchObject([{ key: 'B', op: 'delete' }]);

    const again = createFakeApi();
    for (const k of ['A', 'B', 'C']) again.add(listing(k));
    again.keepOnDelete('B');
    const batch = await executePlan(
      { creates: [], updates: [], deletes: ['A', 'B', 'C'].map(withCopy) },
      deps(again.api, { batchSize: 3 }),
    );
    expect(batch.deletedKeys).toEqual([]);
    expect(batch.failures.map((f) => f.key).sort()).toEqual(['A', 'B', 'C']);
    expect(batch.failures[0]!.reason).toContain('SuccessCount 2');
  });
});

describe("a write's records (its entries for the commit, its change) are made after the turn's calls are sent", () => {
  it('each answered write is recorded once, in the order the answers came, by the time the run ends; a failed one only as a failure', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ wait: fc.integer({ min: -1, max: 3 }), fails: fc.boolean(), update: fc.boolean() }), {
          maxLength: 30,
        }),
        fc.integer({ min: 1, max: 6 }),
        async (items, concurrency) => {
          const fake = createFakeApi();
          const answered: string[] = [];
          // -1: answered on the next turn of the event loop, without a timer. Each answer comes in a
          // turn of its own (Node runs the promise jobs between two callbacks), so the order the
          // answers came is one the executor can see: answers resolved in one turn's promise jobs
          // interleave by the number of awaits on each path (an update's and a create's differ)
          const wait = (ms: number) => new Promise((r) => (ms < 0 ? setImmediate(r) : setTimeout(r, ms)));
          const byKey = new Map(items.map((x, i) => [`K${i}`, x]));
          const call = async <T>(key: string, write: () => Promise<T>): Promise<T> => {
            const x = byKey.get(key)!;
            await wait(x.wait);
            if (x.fails) throw new ApiError('create', 400, 400, 'scripted 400');
            const out = await write();
            answered.push(key);
            return out;
          };
          const api: ExecuteDeps['api'] = {
            ...fake.api,
            createListing: (l, o) => call(l.MLSNumber!, () => fake.api.createListing(l, o)),
            updateListing: (u, o) => call(u.Key, () => fake.api.updateListing(u, o)),
          };
          items.forEach((x, i) => x.update && fake.add(listing(`K${i}`)));
          const changes: ListingChange[] = [];
          const writes = items.map((x, i) =>
            x.update ? { ...create(`K${i}`), remoteId: 1, reason: 'fields' as const, changes: [] } : create(`K${i}`),
          );
          const executor = createExecutor(deps(api, { concurrency, retries: 0, changes: (c) => changes.push(c) }));
          await executor.run(writeJobs(writes));
          const r = executor.result;
          const ok = items.map((x, i) => [`K${i}`, x] as const).filter(([, x]) => !x.fails);
          expect([...r.written].map(([k]) => k)).toEqual(answered);
          expect(Object.fromEntries(r.written)).toEqual(
            Object.fromEntries(ok.map(([k]) => [k, create(k).fingerprint])),
          );
          expect(r.unlisted.keys()).toEqual(answered);
          expect(changes.filter((c) => c.op !== 'fail').map((c) => [c.op, c.key])).toEqual(
            answered.map((k) => [byKey.get(k)!.update ? 'update' : 'create', k]),
          );
          expect(r.created + r.updated).toBe(ok.length);
          expect(r.failures.map((f) => f.key).sort()).toEqual(
            items.flatMap((x, i) => (x.fails ? [`K${i}`] : [])).sort(),
          );
        },
      ),
      { numRuns: 60 },
    );
  });
});
