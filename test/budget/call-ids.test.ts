// A budget's call ids (budget.ts callIds) name a call's lease and its entries in the sliding logs,
// on Redis across processes: no two calls of any budgets may share one, as no two random UUIDs do.
import { describe, expect, it } from 'vitest';
import { callIds, createBudget, credentialKey, memoryBackend, type BudgetBackend } from '../../src/budget/index.js';
import { silentLogger } from '../../src/log.js';

describe('call ids', () => {
  it('are distinct across calls and across budgets (each its own UUID, then a count)', () => {
    const seen = new Set<string>();
    for (let b = 0; b < 20; b++) {
      const next = callIds();
      for (let i = 0; i < 5000; i++) seen.add(next());
    }
    expect(seen.size).toBe(20 * 5000);
    for (const id of [...seen].slice(0, 50))
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.[0-9a-z]+$/);
  });

  it("are what a budget's calls take and settle with: two budgets on one backend never share one", async () => {
    const backend = memoryBackend();
    const taken: string[] = [];
    const settled: string[] = [];
    const spy: BudgetBackend = {
      ...backend,
      take: (key, req) => {
        taken.push(req.id);
        return backend.take(key, req);
      },
      settle: (key, req) => {
        settled.push(req.id);
        return backend.settle(key, req);
      },
    };
    const key = credentialKey('t', 'call-ids');
    const opts = { label: 'test budget', maxWaitMs: 60_000 };
    const budgets = [0, 1].map(() => createBudget(spy, key, { concurrency: 4, perSecond: 10_000 }, opts, silentLogger));
    for (let i = 0; i < 50; i++) for (const b of budgets) (await b.acquire()).release();
    expect(new Set(taken).size).toBe(100);
    expect(settled).toEqual(taken);
  });
});
