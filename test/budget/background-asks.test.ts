// The asks of a budget that no caller awaits (a call's lease renewals while in flight, its settle
// once answered) fail into the log, not into nothing: one warning when a streak of failures begins
// (with the budget's label and the error), one line when the asks succeed again (with how many
// failed), at most one warning a minute however many calls are in flight; and the calls themselves
// go on as before (permits granted, release never throws).
import { Writable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createBudget, credentialKey, memoryBackend, type BudgetBackend } from '../../src/budget/index.js';
import { createLogger } from '../../src/log.js';

const opts = { label: 'Chatbot Service https://api.example', maxWaitMs: 60_000 };

/** the memory backend, but for the asks in `failing`, which Redis refuses */
function refusing(
  failing: Set<'renewLease' | 'settle'>,
): BudgetBackend & { calls: { renewLease: number; settle: number } } {
  const inner = memoryBackend();
  const calls = { renewLease: 0, settle: 0 };
  const ask =
    (name: 'renewLease' | 'settle') =>
    async (...args: Parameters<BudgetBackend['settle']>) => {
      calls[name]++;
      if (failing.has(name)) throw new Error(`Connection is closed. (${name})`);
      return inner[name](...args);
    };
  return { ...inner, renewLease: ask('renewLease'), settle: ask('settle'), calls };
}

function capture() {
  const lines: Array<Record<string, unknown>> = [];
  const logger = createLogger({
    level: 'info',
    destination: new Writable({ write: (c, _e, cb) => (lines.push(JSON.parse(String(c))), cb()) }),
  });
  return { logger, lines, warnings: () => lines.filter((l) => (l.level as number) >= 40) };
}

beforeEach(() => void vi.useFakeTimers());
afterEach(() => void vi.useRealTimers());

describe('a budget whose background asks fail', () => {
  it('says a streak of failed renewals once, however many calls renew, and once more when they succeed again', async () => {
    const failing = new Set<'renewLease' | 'settle'>(['renewLease']);
    const back = refusing(failing);
    const { logger, lines, warnings } = capture();
    const b = createBudget(back, credentialKey('t', 'renew'), { concurrency: 8, perSecond: 1000 }, opts, logger);
    const permits = await Promise.all([0, 1, 2, 3].map(() => b.acquire()));
    // two minutes in flight: 4 calls renewing every 3.3 s, every renewal refused
    await vi.advanceTimersByTimeAsync(120_000);
    expect(back.calls.renewLease).toBeGreaterThanOrEqual(4 * 30);
    expect(lines).toEqual([
      expect.objectContaining({
        level: 40,
        budget: opts.label,
        failed: 1,
        err: expect.objectContaining({ message: 'Connection is closed. (renewLease)' }),
        msg: expect.stringMatching(
          /^budget of Chatbot Service https:\/\/api\.example: the lease of a call in flight not renewed \(Connection is closed\. \(renewLease\)\); .*other processes may then exceed the shared budget/,
        ),
      }),
    ]);
    failing.clear();
    await vi.advanceTimersByTimeAsync(4000);
    expect(lines.slice(1)).toEqual([
      expect.objectContaining({
        level: 30,
        budget: opts.label,
        failed: back.calls.renewLease - 4,
        msg: expect.stringMatching(/leases renewed again \(\d+ renewals had failed\)/),
      }),
    ]);
    // a new streak, more than a minute after the last warning: said again
    failing.add('renewLease');
    await vi.advanceTimersByTimeAsync(4000);
    expect(warnings()).toHaveLength(2);
    for (const p of permits) p.release();
    expect(back.calls.settle).toBe(4);
  });

  it('says at most one warning a minute when the asks fail and succeed in turn', async () => {
    const failing = new Set<'renewLease' | 'settle'>();
    const back = refusing(failing);
    const { logger, lines, warnings } = capture();
    const b = createBudget(back, credentialKey('t', 'flaky'), { concurrency: 2 }, opts, logger);
    const permit = await b.acquire();
    for (let i = 0; i < 30; i++) {
      failing.add('renewLease');
      await vi.advanceTimersByTimeAsync(3400);
      failing.clear();
      await vi.advanceTimersByTimeAsync(3400);
    }
    // 204 s, 30 streaks: a warning and a line "again" for each minute begun, no more
    expect(warnings()).toHaveLength(4);
    expect(lines).toHaveLength(8);
    // every failure counted in a line: the first streak's one, then each with those of the streaks not warned
    const again = lines.filter((l) => l.level === 30).map((l) => l.failed as number);
    expect(again[0]).toBe(1);
    for (const n of again.slice(1)) expect(n).toBeGreaterThan(5);
    permit.release();
  });

  it('says a settle that fails (a call answered, its slot not freed), and the calls go on', async () => {
    const back = refusing(new Set(['settle']));
    const { logger, lines } = capture();
    const b = createBudget(back, credentialKey('t', 'settle'), { perSecond: 1000 }, opts, logger);
    for (let i = 0; i < 5; i++) {
      const permit = await b.acquire();
      expect(() => permit.release()).not.toThrow();
    }
    await vi.advanceTimersByTimeAsync(0);
    expect(back.calls.settle).toBe(5);
    expect(lines).toEqual([
      expect.objectContaining({
        level: 40,
        budget: opts.label,
        err: expect.objectContaining({ message: 'Connection is closed. (settle)' }),
        msg: expect.stringMatching(/an answered call's slot not freed .*the budget is not exceeded/),
      }),
    ]);
  });
});
